import DefaultsCore
import Glibc
import Logging
import NIOCore

/// Takes in the edits that people and other programs make to the domain files while the
/// daemon runs: each becomes one changeset, announced with origin `{"source":"file"}`.
///
/// Owned by the store's event loop. An event names a file; the file is read once it settles
/// (`settleDelay`, 5 ms, after the first event of a burst), compared with memory, and the difference
/// applied through the store like any change (generation +1, `didChange`, the domain written
/// back in the daemon's format). What the daemon wrote itself, or already read, is a version it
/// knows (`KnownFileVersions`) and is not read again. A file that does not parse, or that the
/// store refuses (too large, against its Settings bundle), leaves memory as it was and is kept
/// aside as `<file>.rejected-<time>` before the daemon next writes the domain.
///
/// Only loaded domains are compared: a domain no client has asked for is read from its file
/// when one does, with the edit in it.
final class DomainFileWatcher {
    private let store: DefaultsStore
    private let files: DomainFiles
    private let watcher: DirectoryWatcher
    private let logger: Logger
    private let settle: SettleTimer
    private var pending: Set<DomainName> = []

    init(store: DefaultsStore, files: DomainFiles, watcher: DirectoryWatcher, settleDelay: TimeAmount = .milliseconds(5), logger: Logger) {
        self.store = store
        self.files = files
        self.watcher = watcher
        self.logger = logger
        self.settle = SettleTimer(eventLoop: store.eventLoop, delay: settleDelay)
    }

    /// Starts watching the storage directory and its `ByHost` folder; without inotify, edits are
    /// read at the next start.
    func start() {
        store.eventLoop.preconditionInEventLoop()
        do {
            try watcher.watch(files.directory, mask: DirectoryWatcher.fileChanges) { [self] event in
                noticed(event, inByHostFolder: false)
            }
            if files.hostID != nil {
                try watcher.watch(files.byHostDirectory, mask: DirectoryWatcher.fileChanges) { [self] event in
                    noticed(event, inByHostFolder: true)
                }
            }
            files.versions.isWatched = true
        } catch {
            logger.warning("domain files edited while the daemon runs are read only at its next start", metadata: ["error": "\(error)"])
        }
    }

    private func noticed(_ event: InotifyEvent, inByHostFolder: Bool) {
        if event.isOverflow {
            for domain in store.loadedDomains { pending.insert(domain) }
        } else if event.endsWatch {
            // A write waits for an edit to be read only while every edit is read.
            files.versions.isWatched = false
            logger.warning("the storage directory is no longer watched; edits are read at the next start", metadata: [
                "directory": "\(inByHostFolder ? files.byHostDirectory : files.directory)"])
            return
        } else if let domain = files.domain(ofFile: event.name, inByHostFolder: inByHostFolder),
            store.loadedValues(of: domain) != nil
        {
            pending.insert(domain)
        } else {
            return
        }
        settle.schedule { [self] in readPending() }
    }

    private func readPending() {
        let domains = pending
        pending = []
        for domain in domains.sorted() { take(domain) }
    }

    /// Reads the domain's file and applies what changed, unless memory already holds it.
    func take(_ domain: DomainName) {
        guard let memory = store.loadedValues(of: domain), let path = files.path(of: domain) else { return }
        switch files.read(domain) {
        case .missing:
            // The daemon removes a domain's file itself when the domain becomes empty.
            guard !files.versions.removalIsKnown(of: domain) else { return }
            files.versions.rememberRemoval(of: domain)
            apply(Changeset.difference(from: memory, to: [:], domain: domain), path: path, version: nil)
        case .parsed(let values, let version):
            guard !files.versions.isKnown(version, of: domain) else { return }
            apply(Changeset.difference(from: memory, to: values, domain: domain), path: path, version: version)
        case .unparseable(let reason, let version):
            guard !files.versions.isKnown(version, of: domain) else { return }
            reject(version, of: domain, path: path, reason: reason)
        case .beingWritten:
            logger.debug("domain file is empty, a write in place under way; read again when it ends", metadata: ["file": "\(path)"])
        case .unreadable(let error):
            logger.warning("domain file edited outside the daemon could not be read", metadata: [
                "file": "\(path)", "error": "\(error.message)"])
        }
    }

    private func apply(_ changeset: Changeset, path: String, version: FileVersion?) {
        let domain = changeset.domain
        do throws(DefaultsError) {
            if !changeset.isEmpty {
                try store.apply(changeset, origin: .file)
                logger.info("took in a domain file edited outside the daemon", metadata: [
                    "file": "\(path)", "keys": "\(changeset.count)"])
            }
            if let version { files.versions.remember(version, of: domain) }
            files.versions.clearRejected(of: domain)
        } catch {
            if let version { reject(version, of: domain, path: path, reason: error.message) }
        }
    }

    private func reject(_ version: FileVersion, of domain: DomainName, path: String, reason: String) {
        files.versions.reject(version, of: domain)
        logger.warning("domain file edited outside the daemon was not taken in; the values in memory stay, and the file is kept as <file>.rejected-<time> before the domain is next written", metadata: [
            "file": "\(path)", "error": "\(reason)"])
    }
}
