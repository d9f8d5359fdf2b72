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
/// knows (`KnownFileVersions`) and is not read again. A domain whose flush is in flight is read
/// once the writer has answered and the loop has recorded what it wrote, so the daemon's own
/// write is never read as someone else's. A file that does not parse, or that the
/// store refuses (too large, against its Settings bundle), leaves memory as it was and is kept
/// aside as `<file>.rejected-<time>` before the daemon next writes the domain.
///
/// A file that cannot be taken in as it stands (empty, cut short, or unreadable: a FIFO, a
/// directory, too large, not permitted) may be a write still under way, or the end of one a crash
/// cut short. It is judged only once it has stayed that version for `tornDelay` (1 s): a writer
/// that finishes meanwhile is read as usual. After that it is torn: it is kept as
/// `<file>.rejected-<time>` and the values in memory, the last good state, are written back at
/// once. Every version the daemon does not know is so judged within a bounded time, which is
/// what bounds how long a write of the domain waits for it (``WriteBehind``).
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
    /// Domains to read once the flush in flight is answered.
    private var waitingForFlush: Set<DomainName> = []
    /// How long a file that cannot be taken in stays as it is before it is judged torn.
    let tornDelay: TimeAmount
    /// The version of each domain's file that could not be taken in, and when it was first seen.
    private var suspects: [DomainName: (version: FileVersion, since: NIODeadline)] = [:]
    /// The folders outside the storage directory that loaded domains' files link into (a
    /// dotfiles folder), each watched once, so that an edit made there is read as one made to
    /// the domain's file; and the domains whose file each link target is.
    private var linkFolders: [String: Int32] = [:]
    private var domainsLinkedTo: [String: Set<DomainName>] = [:]
    /// Far more folders than dotfile managers use; a link into one past it is read at the
    /// domain's next write instead (an unseen edit is kept as `<file>.rejected-<time>`).
    static let maximumLinkFolders = 256
    private var saidLinkFoldersAreFull = false

    /// The default of `tornDelay`: the settle time a file is judged by at load too.
    static let standardTornDelay = DomainFiles.settleTime

    init(
        store: DefaultsStore, files: DomainFiles, watcher: DirectoryWatcher, settleDelay: TimeAmount = .milliseconds(5),
        tornDelay: TimeAmount = DomainFileWatcher.standardTornDelay, logger: Logger
    ) {
        self.store = store
        self.files = files
        self.watcher = watcher
        self.logger = logger
        self.tornDelay = tornDelay
        self.settle = SettleTimer(eventLoop: store.eventLoop, delay: settleDelay)
    }

    /// Starts watching the storage directory and its `ByHost` folder; without inotify, edits are
    /// read at the next start. Each folder's watch is its own: the `ByHost` folder, removed and
    /// made again, is watched again from then on.
    func start() {
        store.eventLoop.preconditionInEventLoop()
        do {
            try watcher.watch(files.directory, mask: DirectoryWatcher.fileChanges) { [self] event in
                noticed(event, inByHostFolder: false)
            }
            store.fileVersions.watchedFolders.insert(.main)
        } catch {
            logger.warning("domain files edited while the daemon runs are read only at its next start", metadata: ["error": "\(error)"])
        }
        watchByHostFolder()
        store.didLoad = { [weak self] domain in self?.watchLinkTarget(of: domain) }
        for domain in store.loadedDomains { watchLinkTarget(of: domain) }
    }

    /// Watches the folder `domain`'s file links into, when it is a link out of the storage
    /// directory.
    private func watchLinkTarget(of domain: DomainName) {
        guard let path = files.path(of: domain), let target = DomainFiles.linkTarget(of: path) else { return }
        let folder = DomainFiles.folder(of: target)
        // A folder watched already, by its own watch: adding another would take its events.
        guard folder != files.directory, folder != files.byHostDirectory else { return }
        domainsLinkedTo[target, default: []].insert(domain)
        guard linkFolders[folder] == nil else { return }
        guard linkFolders.count < Self.maximumLinkFolders else {
            guard !saidLinkFoldersAreFull else { return }
            saidLinkFoldersAreFull = true
            logger.notice("a domain file links into more folders than are watched; edits made there are read at the domain's next write", metadata: [
                "file": "\(path)", "target": "\(target)", "folders": "\(Self.maximumLinkFolders)"])
            return
        }
        do {
            linkFolders[folder] = try watcher.watch(folder, mask: DirectoryWatcher.fileChanges) { [self] event in
                noticed(event, inLinkFolder: folder)
            }
        } catch {
            logger.notice("the folder a domain file links into cannot be watched; edits made there are read at the domain's next write", metadata: [
                "file": "\(path)", "target": "\(target)", "error": "\(error)"])
        }
    }

    private func noticed(_ event: InotifyEvent, inLinkFolder folder: String) {
        if event.endsWatch {
            linkFolders[folder] = nil
            return
        }
        let domains = event.isOverflow ? Set(store.loadedDomains) : domainsLinkedTo[folder + "/" + event.name] ?? []
        for domain in domains where store.loadedValues(of: domain) != nil { pending.insert(domain) }
        if !pending.isEmpty { settle.schedule { [self] in readPending() } }
    }

    /// Watches the `ByHost` folder, when this machine has by-host files and the folder exists;
    /// the by-host domains in memory are compared with their files then, for what changed unwatched.
    private func watchByHostFolder() {
        guard files.hostID != nil, !store.fileVersions.watchedFolders.contains(.byHost) else { return }
        do {
            try watcher.watch(files.byHostDirectory, mask: DirectoryWatcher.fileChanges) { [self] event in
                noticed(event, inByHostFolder: true)
            }
        } catch {
            if access(files.byHostDirectory, F_OK) == 0 {
                logger.warning("by-host files edited while the daemon runs are read only at its next start", metadata: ["error": "\(error)"])
            }
            return
        }
        store.fileVersions.watchedFolders.insert(.byHost)
        for domain in store.loadedDomains where domain.isCurrentHost { pending.insert(domain) }
        if !pending.isEmpty { settle.schedule { [self] in readPending() } }
    }

    private func noticed(_ event: InotifyEvent, inByHostFolder: Bool) {
        if event.isOverflow {
            for domain in store.loadedDomains { pending.insert(domain) }
        } else if event.endsWatch {
            // A write waits for an edit to be read only where edits are read.
            store.fileVersions.watchedFolders.remove(inByHostFolder ? .byHost : .main)
            logger.warning("a folder of domain files is no longer watched; its edits are read at the next start, or once it is made again", metadata: [
                "directory": "\(inByHostFolder ? files.byHostDirectory : files.directory)"])
            if inByHostFolder { watchByHostFolder() }
            return
        } else if !inByHostFolder, event.name == DomainName.byHostFolder {
            watchByHostFolder()
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
        if store.writeBehind.domainsInFlight.contains(domain) {
            guard waitingForFlush.insert(domain).inserted, waitingForFlush.count == 1 else { return }
            store.writeBehind.afterFlush { [self] in
                let waiting = waitingForFlush
                waitingForFlush = []
                for domain in waiting.sorted() { take(domain) }
            }
            return
        }
        guard let memory = store.loadedValues(of: domain), let path = files.path(of: domain) else { return }
        // A file that became a link since (a dotfile manager run) is watched where it leads.
        watchLinkTarget(of: domain)
        switch files.read(domain) {
        case .missing:
            suspects[domain] = nil
            // The daemon removes a domain's file itself when the domain becomes empty.
            guard !store.fileVersions.removalIsKnown(of: domain) else { return }
            store.fileVersions.forgetFile(of: domain)
            apply(Changeset.difference(from: memory, to: [:], domain: domain), path: path, version: nil, holding: [:])
        case .parsed(let values, let version):
            suspects[domain] = nil
            guard !store.fileVersions.isKnown(version, of: domain) else { return }
            apply(
                DomainFileWatcher.changes(from: store.fileVersions.bases(of: domain), to: values, memory: memory, domain: domain),
                path: path, version: version, holding: values)
        case .beingWritten(let version):
            suspect(version, of: domain, path: path, reason: "the file is empty")
        case .unparseable(let reason, let version):
            suspect(version, of: domain, path: path, reason: reason)
        case .unreadable(let error):
            // Nothing at the path to keep aside (a link that loops, say): the next write replaces it.
            guard let version = FileVersion(atPath: path) else { return }
            suspect(version, of: domain, path: path, reason: error.message)
        }
    }

    /// A version that cannot be taken in as it stands: judged torn once it has stayed the same
    /// for `tornDelay`, and looked at again then.
    private func suspect(_ version: FileVersion, of domain: DomainName, path: String, reason: String) {
        guard !store.fileVersions.isKnown(version, of: domain) else { return }
        let now = store.eventLoop.now
        if let earlier = suspects[domain], earlier.version == version {
            guard now - earlier.since >= tornDelay else { return }  // its look is already scheduled
            suspects[domain] = nil
            return judgeTorn(version, of: domain, path: path, reason: reason)
        }
        suspects[domain] = (version, now)
        logger.debug("domain file cannot be taken in as it stands, perhaps a write in place under way; judged when it has not changed for a while", metadata: [
            "file": "\(path)", "reason": "\(reason)", "waitMilliseconds": "\(tornDelay.nanoseconds / 1_000_000)"])
        store.eventLoop.assumeIsolated().scheduleTask(in: tornDelay) { [self] in take(domain) }
    }

    /// A file that stayed unreadable is torn: kept aside, and the last good state written back.
    private func judgeTorn(_ version: FileVersion, of domain: DomainName, path: String, reason: String) {
        store.fileVersions.reject(version, of: domain)
        logger.warning("domain file edited outside the daemon was not taken in: it stayed empty, cut short or unreadable; it is kept as <file>.rejected-<time> and the values in memory are written back", metadata: [
            "file": "\(path)", "error": "\(reason)"])
        store.writeBack(domain)
    }

    /// What an edit changed: the difference between the file and the state it was made from,
    /// applied over memory, so that what reached memory meanwhile (a write through the socket not
    /// yet on disk, or one that landed after the editor read the file) stays. The state it was made
    /// from is the known state closest to it: the daemon's last write, or the one before when the
    /// writer read the file just before that write landed (Foundation writes its whole domain). With
    /// no known state, memory is the base, and the file is taken as it stands.
    static func changes(
        from bases: [[String: PlistValue]], to file: [String: PlistValue], memory: [String: PlistValue], domain: DomainName
    ) -> Changeset {
        var best = Changeset.difference(from: memory, to: file, domain: domain)
        var closest = Int.max
        for base in bases {
            let changes = Changeset.difference(from: base, to: file, domain: domain)
            if changes.count < closest { (best, closest) = (changes, changes.count) }
        }
        return best
    }

    private func apply(_ changeset: Changeset, path: String, version: FileVersion?, holding values: [String: PlistValue]) {
        let domain = changeset.domain
        do throws(DefaultsError) {
            if !changeset.isEmpty {
                try store.apply(changeset, origin: .file)
                logger.info("took in a domain file edited outside the daemon", metadata: [
                    "file": "\(path)", "keys": "\(changeset.count)"])
            }
            if let version { store.fileVersions.remember(version, of: domain, holding: values) }
            store.fileVersions.clearRejected(of: domain)
            // Memory kept what the edit did not change: the file gets it back.
            if store.loadedValues(of: domain) != values { store.writeBack(domain) }
        } catch {
            if let version { reject(version, of: domain, path: path, reason: error.message) }
        }
    }

    private func reject(_ version: FileVersion, of domain: DomainName, path: String, reason: String) {
        store.fileVersions.reject(version, of: domain)
        logger.warning("domain file edited outside the daemon was not taken in; the values in memory stay, and the file is kept as <file>.rejected-<time> before the domain is next written", metadata: [
            "file": "\(path)", "error": "\(reason)"])
    }
}
