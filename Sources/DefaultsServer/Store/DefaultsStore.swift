import DefaultsCore
import Foundation
import Logging
import NIOCore
import NIOPosix

/// The one owner of the defaults database.
///
/// Owned by a single event loop (`eventLoop`); every method must be called on it, as every
/// connection handler is. Nothing here takes a lock: the writer thread receives immutable
/// snapshots, and the notifier runs on the same loop (the Redis model).
///
/// Domains are loaded on first use, so start-up does not grow with the number of domains.
public final class DefaultsStore: @unchecked Sendable {
    public let eventLoop: EventLoop
    let notifier: Notifier
    let writeBehind: WriteBehind
    private let files: DomainFiles
    private let logger: Logger
    private(set) var maximumDomainBytes: Int
    private var domains: [DomainName: DomainState] = [:]
    /// The domain used last and where it sits in `domains`: a client names the same domain
    /// request after request, and comparing the name (the same string as last time) costs
    /// less than hashing it. Forgotten whenever a domain is added, which moves the indices.
    private var lastUsed: (domain: DomainName, index: Dictionary<DomainName, DomainState>.Index)?
    /// Checks a changeset before it is applied (the Settings bundles' specifiers); nil allows it.
    var check: ((Changeset) -> DefaultsError?)?
    /// Generations of domains not loaded yet, read from the ledger on first use.
    private var ledger: [DomainName: Int64]?

    public init(eventLoop: EventLoop, writer: NIOThreadPool, configuration: DaemonConfiguration, logger: Logger) {
        self.eventLoop = eventLoop
        self.files = DomainFiles(directory: configuration.storageDirectory, format: configuration.fileFormat)
        self.logger = logger
        self.maximumDomainBytes = configuration.maximumDomainBytes
        self.notifier = Notifier(eventLoop: eventLoop)
        self.writeBehind = WriteBehind(
            eventLoop: eventLoop, writer: writer, files: files, configuration: configuration, logger: logger)
        writeBehind.takeSnapshot = { [unowned self] dirty in snapshot(of: dirty) }
    }

    /// Applies the settings that can change while running (on reload).
    func reconfigure(_ configuration: DaemonConfiguration) {
        eventLoop.assertInEventLoop()
        maximumDomainBytes = configuration.maximumDomainBytes
        writeBehind.coalesceDelay = configuration.coalesceDelay
        writeBehind.maximumCoalesceDelay = configuration.maximumCoalesceDelay
    }

    // MARK: - Reading

    /// The values of a domain and its generation; loads the domain on first use.
    func state(of domain: DomainName) throws(DefaultsError) -> DomainState {
        eventLoop.assertInEventLoop()
        if let index = loadedIndex(of: domain) { return domains.values[index] }
        return try load(domain)
    }

    private func loadedIndex(of domain: DomainName) -> Dictionary<DomainName, DomainState>.Index? {
        if let lastUsed, lastUsed.domain == domain { return lastUsed.index }
        guard let index = domains.index(forKey: domain) else { return nil }
        lastUsed = (domain, index)
        return index
    }

    func values(of domain: DomainName) throws(DefaultsError) -> [String: PlistValue] {
        try state(of: domain).values
    }

    /// Every domain that holds at least one value, sorted.
    func domainNames() -> [DomainName] {
        var names = Set(files.storedDomains())
        for (domain, state) in domains {
            if state.values.isEmpty { names.remove(domain) } else { names.insert(domain) }
        }
        return names.sorted()
    }

    var loadedDomainCount: Int { domains.count }

    // MARK: - Writing

    /// Applies a changeset all or nothing. Returns the domain's generation afterwards.
    @discardableResult
    func apply(_ changeset: Changeset, origin: Origin) throws(DefaultsError) -> Int64 {
        eventLoop.assertInEventLoop()
        // Changed in place through the table (a copy of the state would make the mutation copy
        // every value of the domain), found by one hash of its name.
        if let index = loadedIndex(of: changeset.domain) {
            return try apply(changeset, origin: origin, to: &domains.values[index])
        }
        _ = try load(changeset.domain)
        return try apply(changeset, origin: origin, to: &domains[changeset.domain]!)
    }

    private func apply(_ changeset: Changeset, origin: Origin, to state: inout DomainState) throws(DefaultsError) -> Int64 {
        let change = state.prepare(changeset)
        if change.newSize > maximumDomainBytes && change.newSize > state.size {
            throw DefaultsError(
                .tooLarge,
                "domain \(changeset.domain) would be \(change.newSize) bytes; the limit is \(maximumDomainBytes)")
        }
        if let refusal = check?(changeset) { throw refusal }
        let effective = state.commit(changeset, change)
        guard !effective.isEmpty else { return state.generation }
        state.generation += 1
        writeBehind.markDirty(changeset.domain)
        notifier.publish(effective, generation: state.generation, origin: origin)
        return state.generation
    }

    /// Replaces a whole domain (empty values delete it).
    @discardableResult
    func replace(_ domain: DomainName, with values: [String: PlistValue], origin: Origin) throws(DefaultsError) -> Int64 {
        let current = try state(of: domain)
        let newSize = DomainState.size(of: values)
        if newSize > maximumDomainBytes {
            throw DefaultsError(.tooLarge, "domain \(domain) would be \(newSize) bytes; the limit is \(maximumDomainBytes)")
        }
        return try apply(Changeset.difference(from: current.values, to: values, domain: domain), origin: origin)
    }

    /// Succeeds once every write accepted before the call is durable on disk.
    func synchronize() -> EventLoopFuture<Void> { writeBehind.synchronize() }

    // MARK: - Loading and snapshots

    private func load(_ domain: DomainName) throws(DefaultsError) -> DomainState {
        if ledger == nil { ledger = GenerationLedger(files: files).load() }
        var values: [String: PlistValue] = [:]
        switch try files.load(domain) {
        case .missing: break
        case .loaded(let loaded): values = loaded
        case .corrupt(let reason, let movedTo):
            logger.error(
                "domain file could not be parsed; moved aside and starting empty",
                metadata: ["domain": "\(domain)", "reason": "\(reason)", "movedTo": "\(movedTo)"])
        }
        let state = DomainState(values: values, generation: ledger?[domain] ?? 0)
        lastUsed = nil
        domains[domain] = state
        logger.debug("loaded domain", metadata: ["domain": "\(domain)", "keys": "\(values.count)"])
        return state
    }

    private func snapshot(of dirty: Set<DomainName>) -> WriteBehind.Snapshot {
        var generations = ledger ?? [:]
        for (domain, state) in domains { generations[domain] = state.generation }
        ledger = generations
        return WriteBehind.Snapshot(
            domains: dirty.map { ($0, domains[$0]?.values ?? [:]) },
            generations: generations)
    }
}
