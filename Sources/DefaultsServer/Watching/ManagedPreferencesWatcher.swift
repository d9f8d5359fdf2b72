import DefaultsCore
import Glibc
import Logging
import NIOCore

/// Keeps `ManagedPreferences` equal to the managed preference files, and tells each domain's
/// subscribers when what is forced on it changes: a `didChange` with origin
/// `{"source":"managed"}` holding the keys' effective new values (the forced value, or the
/// user's own where a key is no longer forced).
///
/// Owned by the store's event loop. The managed directory, `users/` and the user's own
/// directory are watched with inotify (a missing one through its nearest existing ancestor);
/// any change reads every managed file again, `settleDelay` after the first event.
final class ManagedPreferencesWatcher {
    private let store: DefaultsStore
    private let files: ManagedPreferenceFiles
    private let watcher: DirectoryWatcher
    private let logger: Logger
    let settleDelay = TimeAmount.milliseconds(5)
    private var watches: [String: Int32] = [:]
    private var timer: Scheduled<Void>?

    init(store: DefaultsStore, files: ManagedPreferenceFiles, watcher: DirectoryWatcher, logger: Logger) {
        self.store = store
        self.files = files
        self.watcher = watcher
        self.logger = logger
    }

    /// Reads the managed preferences and starts watching them.
    func start() {
        store.eventLoop.preconditionInEventLoop()
        store.managed.forced = files.load(logger: logger)
        if !store.managed.forced.isEmpty {
            logger.info("managed preferences in force", metadata: [
                "domains": "\(store.managed.forced.keys.sorted().map(\.rawValue).joined(separator: ", "))"])
        }
        updateWatches()
    }

    private func updateWatches() {
        var wanted: Set<String> = []
        for path in [files.directory, files.directory + "/users", files.userDirectory] {
            var existing = path
            while !existing.isEmpty, existing != "/", access(existing, F_OK) != 0 {
                existing = String(existing[..<(existing.lastIndex(of: "/") ?? existing.startIndex)])
            }
            if !existing.isEmpty { wanted.insert(existing) }
        }
        for (path, watch) in watches where !wanted.contains(path) {
            watcher.unwatch(watch)
            watches[path] = nil
        }
        for path in wanted.sorted() where watches[path] == nil {
            do {
                watches[path] = try watcher.watch(
                    path, mask: DirectoryWatcher.fileChanges | UInt32(IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
                ) { [self] event in noticed(event) }
            } catch {
                logger.warning("managed preferences are read only at start", metadata: ["error": "\(error)"])
            }
        }
    }

    private func noticed(_ event: InotifyEvent) {
        if event.endsWatch { watches = watches.filter { $0.value != event.watch } }
        guard timer == nil else { return }
        timer = store.eventLoop.assumeIsolated().scheduleTask(in: settleDelay) { [self] in
            timer = nil
            reload()
        }
    }

    /// Reads every managed file again and announces what changed, domain by domain.
    func reload() {
        let old = store.managed.forced
        let new = files.load(logger: logger)
        updateWatches()
        guard new != old else { return }
        store.managed.forced = new
        for domain in Set(old.keys).union(new.keys).sorted() where old[domain] != new[domain] {
            let before = old[domain] ?? [:]
            let after = new[domain] ?? [:]
            do throws(DefaultsError) {
                let stored = try store.values(of: domain)
                var changes = Changeset(domain: domain)
                for key in Set(before.keys).union(after.keys) where before[key] != after[key] {
                    let effective = after[key] ?? stored[key]
                    if let effective { changes.set(key, to: effective) } else { changes.remove(key) }
                }
                try store.announce(changes, origin: .managed)
                logger.info("managed preferences changed", metadata: ["domain": "\(domain)", "keys": "\(changes.count)"])
            } catch {
                logger.error("managed preferences changed but could not be announced", metadata: [
                    "domain": "\(domain)", "error": "\(error.message)"])
            }
        }
    }
}
