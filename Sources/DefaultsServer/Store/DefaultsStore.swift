import DefaultsCore
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix

/// Checks a changeset before the store applies it (the Settings bundles' specifiers).
protocol ChangesetCheck: AnyObject {
    /// The refusal, or nil to allow the changeset.
    func check(_ changeset: Changeset) -> DefaultsError?
}

/// The one owner of the defaults database.
///
/// Owned by a single event loop (`eventLoop`); every method checks that it is called there, in
/// release builds too, as every connection handler does. Nothing here takes a lock: the writer
/// thread receives immutable snapshots, and the notifier runs on the same loop (the Redis model).
/// A set is: change the table, mark the domain dirty, notify.
///
/// Domains are loaded on first use, so start-up does not grow with the number of domains.
final class DefaultsStore {
    let eventLoop: EventLoop
    let notifier: Notifier
    let writeBehind: WriteBehind
    private let table: DomainTable
    private let files: DomainFiles
    /// The checks every changeset passes, in order: the managed preferences (`forced`), then the
    /// Settings bundles (`invalid_value`).
    private let checks: [ChangesetCheck]
    let managed: ManagedPreferences
    private let logger: Logger
    private(set) var maximumDomainBytes: Int
    /// Domain files refused at load, with the status they were refused at and why. Owned by the
    /// loop, like the store. At most ``refusedFilesKept``: past that it starts again, which costs
    /// only reads.
    private var refusedFiles: [DomainName: (version: FileVersion, error: DefaultsError)] = [:]
    private static let refusedFilesKept = 1024
    /// Told of each domain loaded into memory, on the loop: the file watcher, which watches the
    /// folder a loaded domain's file links into.
    var didLoad: ((DomainName) -> Void)?
    /// The roaming link's bookkeeping, when roaming is on: every effective local change of a
    /// roaming domain is queued there for etcd.
    var roaming: RoamingState?
    /// The change journal, when the daemon keeps one: every effective change of a journaled
    /// domain is recorded there, with the values it replaced.
    let journal: ChangeJournal?

    /// The store and its collaborators, all on `eventLoop`: the table of domains, the
    /// write-behind that snapshots it, the notifier, the managed preferences and the Settings
    /// bundles' check that every changeset passes.
    init(
        table: DomainTable, files: DomainFiles, writeBehind: WriteBehind, notifier: Notifier,
        managed: ManagedPreferences = ManagedPreferences(), check: ChangesetCheck?, journal: ChangeJournal? = nil,
        maximumDomainBytes: Int, logger: Logger
    ) {
        self.eventLoop = table.eventLoop
        self.table = table
        self.files = files
        self.writeBehind = writeBehind
        self.notifier = notifier
        self.managed = managed
        self.checks = [managed] + (check.map { [$0] } ?? [])
        self.journal = journal
        self.maximumDomainBytes = maximumDomainBytes
        self.logger = logger
    }

    /// Applies the settings that can change while running (on reload).
    func reconfigure(_ configuration: DaemonConfiguration) {
        eventLoop.preconditionInEventLoop()
        maximumDomainBytes = configuration.maximumDomainBytes
        writeBehind.coalesceDelay = configuration.coalesceDelay
        writeBehind.maximumCoalesceDelay = configuration.maximumCoalesceDelay
        journal?.reconfigure(configuration.journal)
    }

    // MARK: - Reading

    /// The values of a domain and its generation; loads the domain on first use. A domain that
    /// holds nothing is answered without being kept in memory: reading domains that do not
    /// exist leaves nothing behind (a file made for one later is read on its next use).
    func state(of domain: DomainName) throws(DefaultsError) -> DomainState {
        if let index = table.index(of: domain) { return table[index] }
        let values = try read(domain)
        if values.isEmpty { return DomainState(values: [:], generation: table.ledgerGeneration(of: domain)) }
        return table[table.insert(domain, values: values)]
    }

    /// Like ``state(of:)``, and keeps the domain in memory even when it holds nothing, so that
    /// a file made for it later is compared and announced (`subscribe`).
    func stateKeptInMemory(of domain: DomainName) throws(DefaultsError) -> DomainState {
        table[try index(loading: domain)]
    }

    /// Where the domain sits in the table, loading it from its file on first use.
    private func index(loading domain: DomainName) throws(DefaultsError) -> DomainTable.Index {
        if let index = table.index(of: domain) { return index }
        return try load(domain)
    }

    func values(of domain: DomainName) throws(DefaultsError) -> [String: PlistValue] {
        try state(of: domain).values
    }

    /// The values of a domain already in memory; nil when it has not been loaded.
    func loadedValues(of domain: DomainName) -> [String: PlistValue]? {
        eventLoop.preconditionInEventLoop()
        return table.index(of: domain).map { table[$0].values }
    }

    var loadedDomains: [DomainName] {
        eventLoop.preconditionInEventLoop()
        return Array(table.states.keys)
    }

    /// Resolves `key` along `list`: the persistent domains from the store (loaded on first use;
    /// one whose file is refused fails the lookup only when it is the list's own domain),
    /// the bundle layer from the installed Settings bundles' defaults, the registration domain of
    /// the connection that asks.
    func lookup(
        _ key: String, in list: SearchList, bundleDefaults: [DomainName: [String: PlistValue]],
        registration: [String: PlistValue]
    ) throws(DefaultsError) -> (value: PlistValue, layer: SearchList.Layer)? {
        try list.resolve { (layer) throws(DefaultsError) -> PlistValue? in
            switch layer {
            case .managed(let domain): managed.forced[domain]?[key]
            case .persistent(let domain) where domain.anyHost == list.appDomain: try state(of: domain).values[key]
            case .persistent(let domain):
                // Another domain's refused file (NSGlobalDomain past the size cap, say) fails only
                // requests for that domain: the lookups that reach it skip it (logged once, in `read`).
                (try? state(of: domain))?.values[key]
            case .bundle(let domain): bundleDefaults[domain]?[key]
            case .registration: registration[key]
            case .argument: nil
            }
        }
    }

    /// Every domain that holds at least one value, sorted.
    func domainNames() -> [DomainName] {
        eventLoop.preconditionInEventLoop()
        var names = Set(files.storedDomains())
        for (domain, state) in table.states {
            if state.values.isEmpty { names.remove(domain) } else { names.insert(domain) }
        }
        return names.sorted()
    }

    /// The counters of the store and its write-behind, for `stats` and the service manager's
    /// status line. Each is read where it is kept, so taking them costs nothing.
    struct Statistics {
        var domainsLoaded: Int
        var dirtyDomains: Int
        var flushes: Int
        var fileWrites: Int
        /// The file writes of the domain asked about, if one was.
        var domainFileWrites: Int?
    }

    func statistics(of domain: DomainName? = nil) -> Statistics {
        eventLoop.preconditionInEventLoop()
        return Statistics(
            domainsLoaded: table.count, dirtyDomains: writeBehind.dirtyCount, flushes: writeBehind.flushCount,
            fileWrites: writeBehind.fileWrites, domainFileWrites: domain.map { writeBehind.fileWritesByDomain[$0] ?? 0 })
    }

    // MARK: - Writing

    /// Applies a changeset all or nothing. Returns the domain's generation afterwards.
    ///
    /// With `expected`, only if each key holds the value given (nil: absent) right now: else
    /// nothing changes and the refusal (`conflict`) names the first key that differs and what it
    /// holds. The check and the change happen in one turn of the loop, so no other write comes
    /// between them: this is compare-and-set.
    @discardableResult
    func apply(_ changeset: Changeset, origin: Origin, expecting expected: [String: PlistValue?] = [:]) throws(DefaultsError) -> Int64 {
        let index = try index(loading: changeset.domain)
        for (key, value) in expected.sorted(by: { $0.key < $1.key }) {
            let found = table[index].values[key]
            // Compared as the wire carries values: a client can only expect what it was sent
            // (a date to the microsecond, where a binary file keeps more).
            guard found != value, found.map(WireValue.asSent) != value else { continue }
            throw DefaultsError.conflict(key: key, expected: value, found: found)
        }
        return try apply(changeset, origin: origin, at: index)
    }

    /// Applies a change another machine made, taken from etcd: it was checked where it was
    /// made, and every machine must take it for all of them to converge, so the checks are not
    /// applied again (a forced key still reads as forced). This machine's size limit still
    /// holds: a change past it is refused with `too_large`, and the domain stops roaming.
    func applyRoaming(_ changeset: Changeset, host: String?) throws(DefaultsError) {
        _ = try apply(changeset, origin: .roaming(host: host), at: try index(loading: changeset.domain), checked: false)
    }

    /// The domain is found by one hash of its name and changed in place through the table (a
    /// copy of its state would make the mutation copy every value). The table is borrowed only
    /// for the commit itself: the checks, the write-behind, the notifier and roaming run after,
    /// and may read the table.
    private func apply(
        _ changeset: Changeset, origin: Origin, at index: DomainTable.Index, checked: Bool = true
    ) throws(DefaultsError) -> Int64 {
        let change = table[index].prepare(changeset)
        // A domain past the limit (the limit lowered at reload) may still shrink.
        if change.newSize > maximumDomainBytes && change.newSize > table[index].size {
            throw DefaultsError(
                .tooLarge,
                "domain \(changeset.domain) would be \(change.newSize) bytes; the limit is \(maximumDomainBytes)")
        }
        if change.newFileBytes > PropertyListLimits.maximumFileBytes && change.newFileBytes > table[index].fileBytes {
            throw DefaultsError(
                .tooLarge,
                "domain \(changeset.domain)'s file would be \(change.newFileBytes) bytes, more than the \(PropertyListLimits.maximumFileBytes) a property-list file may be")
        }
        if checked {
            if changeset.domain.isCurrentHost, files.hostID == nil { throw MachineID.refusal(writing: changeset.domain) }
            for check in checks { if let refusal = check.check(changeset) { throw refusal } }
        }
        let before = journal?.records(changeset.domain) == true ? table[index].valuesBefore(changeset, change) : nil
        let effective = table[index].commit(changeset, change)
        guard !effective.isEmpty else { return table[index].generation }
        table[index].generation += 1
        let generation = table[index].generation
        writeBehind.markDirty(changeset.domain)
        if let journal, let before {
            journal.record(effective, before: before, in: table.domain(at: index), generation: generation, origin: origin)
        }
        notifier.publish(effective, generation: generation, origin: origin)
        if let roaming, origin.source != .roaming, roaming.roams(changeset.domain) { roaming.recordLocal(effective, in: self) }
        return generation
    }

    /// Announces a change of what the domain resolves to that is not a change of its stored
    /// values (the managed preferences changed): generation +1, and `changes` (the keys'
    /// effective new values) to the subscribers.
    func announce(_ changes: Changeset, origin: Origin) throws(DefaultsError) {
        guard !changes.isEmpty else { return }
        let index = try index(loading: changes.domain)
        table[index].generation += 1
        // The ledger keeps the new generation; the domain's file is written unchanged.
        writeBehind.markDirty(changes.domain)
        notifier.publish(changes, generation: table[index].generation, origin: origin)
    }

    /// Replaces a whole domain (empty values delete it): the difference, applied as one
    /// changeset under the same checks and size limit as any other.
    @discardableResult
    func replace(_ domain: DomainName, with values: [String: PlistValue], origin: Origin) throws(DefaultsError) -> Int64 {
        let current = try state(of: domain)
        return try apply(Changeset.difference(from: current.values, to: values, domain: domain), origin: origin)
    }

    /// What the daemon knows of the domain files on disk (the file watcher's and the writer's).
    var fileVersions: KnownFileVersions {
        get { table.fileVersions }
        _modify {
            eventLoop.preconditionInEventLoop()
            yield &table.fileVersions
        }
    }

    /// Writes a loaded domain's values to its file again, unchanged: over a file that could not
    /// be taken in, which the write keeps aside first.
    func writeBack(_ domain: DomainName) {
        guard table.index(of: domain) != nil else { return }
        writeBehind.markDirty(domain)
    }

    /// Succeeds once every write accepted before the call is durable on disk.
    func synchronize() -> EventLoopFuture<Void> { writeBehind.synchronize() }

    /// The last write, at stop: every change, then the exact generations.
    func finish() -> EventLoopFuture<Void> { writeBehind.finish() }

    // MARK: - Loading

    private func load(_ domain: DomainName) throws(DefaultsError) -> DomainTable.Index {
        let index = table.insert(domain, values: try read(domain))
        // A domain kept in memory without a file: "no file" is the state an edit that creates
        // it is made from. Only kept domains get one, so reading names that do not exist leaves
        // nothing behind.
        if table.fileVersions.bases(of: domain).isEmpty { table.fileVersions.remember(nil, of: domain, holding: [:]) }
        didLoad?(domain)
        return index
    }

    /// A domain's values as its file holds them; empty without a file, or with one judged torn
    /// (its bytes kept aside). A file refused (not a regular file, unreadable, too large) is
    /// refused again without being read until its status changes.
    private func read(_ domain: DomainName) throws(DefaultsError) -> [String: PlistValue] {
        let status = files.path(of: domain).flatMap(FileVersion.init(statusAt:))
        if let refused = refusedFiles[domain] {
            if refused.version == status { throw refused.error }
            refusedFiles[domain] = nil
        }
        do throws(DefaultsError) {
            return try readFile(domain)
        } catch {
            // A file changed within the settle time may be a write under way: it is read again.
            if let status, status.age(at: Date()) >= Double(DomainFiles.settleTime.nanoseconds) / 1e9 {
                if refusedFiles.count >= Self.refusedFilesKept { refusedFiles = [:] }
                refusedFiles[domain] = (status, error)
                logger.warning(
                    "domain file refused; requests for the domain answer the error, and lookups that reach it through another domain's search list skip it, until the file changes",
                    metadata: ["domain": "\(domain)", "error": "\(error.message)"])
            }
            throw error
        }
    }

    private func readFile(_ domain: DomainName) throws(DefaultsError) -> [String: PlistValue] {
        var values: [String: PlistValue] = [:]
        switch try files.load(domain) {
        case .missing: break
        case .settling(let error): throw error
        case .loaded(let loaded, let version):
            values = loaded
            table.fileVersions.remember(version, of: domain, holding: loaded)
        case .torn(let reason, let version):
            // A version judged torn before (an empty domain is not kept in memory) is kept once.
            guard !table.fileVersions.isKnown(version, of: domain) else { break }
            let keptAs = try files.keepTorn(version, of: domain)
            // Known as holding nothing: the domain's next write replaces it, without waiting for it.
            table.fileVersions.remember(version, of: domain, holding: [:])
            logger.warning(
                "domain file stayed empty, cut short or unparseable: starting the domain empty; the file stays until the domain is next written",
                metadata: ["domain": "\(domain)", "reason": "\(reason)", "keptAs": "\(keptAs ?? "nothing to keep")"])
        }
        let size = DomainState.size(of: values)
        guard size <= maximumDomainBytes else {
            throw DefaultsError(
                .tooLarge,
                "\(domain)'s file holds \(size) bytes, more than the \(maximumDomainBytes) a domain may; it is left as it is and not served")
        }
        logger.debug("loaded domain", metadata: ["domain": "\(domain)", "keys": "\(values.count)"])
        return values
    }
}
