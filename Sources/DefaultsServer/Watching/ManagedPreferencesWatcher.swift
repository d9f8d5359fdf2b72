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
/// any change reads every managed file again, 5 ms after the first event.
final class ManagedPreferencesWatcher {
    private let store: DefaultsStore
    private let files: ManagedPreferenceFiles
    private let logger: Logger
    private let watched: WatchedDirectories
    private let settle: SettleTimer
    /// Files and directories added, changed, removed, or given another owner or mode.
    private static let mask = DirectoryWatcher.fileChanges | UInt32(IN_CREATE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)

    init(store: DefaultsStore, files: ManagedPreferenceFiles, watcher: DirectoryWatcher, logger: Logger) {
        self.store = store
        self.files = files
        self.logger = logger
        self.watched = WatchedDirectories(watcher: watcher)
        self.settle = SettleTimer(eventLoop: store.eventLoop, delay: .milliseconds(5))
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
        let paths = [files.directory, files.directory + "/users", files.userDirectory].map(WatchedDirectories.nearestExisting)
        let error = watched.update(Dictionary(paths.map { ($0, Self.mask) }) { first, _ in first }) { [self] _, _ in
            settle.schedule { [self] in reload() }
        }
        if let error { logger.warning("managed preferences are read only at start", metadata: ["error": "\(error)"]) }
    }

    /// Reads every managed file again and announces what changed, domain by domain.
    private func reload() {
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
