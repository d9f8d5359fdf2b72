import DefaultsCore
import NIOCore

/// The domains held in memory, every domain's generation and what the daemon knows of the files
/// on disk: the state that the store changes, that `WriteBehind` takes snapshots of, and where
/// the writer's answer is recorded.
///
/// Owned by the state-owning event loop: the store, the write-behind and the file watcher, all
/// on that loop, share it; every method checks the loop, in release builds too.
final class DomainTable: SnapshotSource {
    let eventLoop: EventLoop
    private let files: DomainFiles
    private(set) var states: [DomainName: DomainState] = [:]
    /// Generations from the ledger, read on first use; kept up to date by every snapshot.
    private var ledger: [DomainName: Int64]?
    /// The ledger on disk, once this process has written it.
    private var durableLedger: [DomainName: Int64]?
    /// The versions of the domain files that memory holds.
    var fileVersions = KnownFileVersions()
    /// Told, on the loop, of the domains each flush made durable and their generations then:
    /// the change journal, which writes an entry only once its change is on disk.
    var didWrite: (([DomainName: Int64]) -> Void)?

    init(eventLoop: EventLoop, files: DomainFiles) {
        self.eventLoop = eventLoop
        self.files = files
    }

    var count: Int { states.count }

    /// Where a loaded domain sits in `states`; nil when it is not loaded.
    func index(of domain: DomainName) -> Index? {
        eventLoop.preconditionInEventLoop()
        return states.index(forKey: domain)
    }

    typealias Index = Dictionary<DomainName, DomainState>.Index

    /// The name of the domain at `index` as the table holds it: one string's storage for every
    /// change to the domain, where each request's name is a storage of its own, so that comparing
    /// it with a name held from an earlier change compares their storage, not their text.
    func domain(at index: Index) -> DomainName { states.keys[index] }

    /// A domain's state, read and changed in place: a getter would copy it (its values'
    /// storage retained and released) at every read of one of its fields.
    subscript(index: Index) -> DomainState {
        _read { yield states.values[index] }
        _modify { yield &states.values[index] }
    }

    /// Adds a domain just read from its file, with the generation the ledger has for it.
    func insert(_ domain: DomainName, values: [String: PlistValue]) -> Index {
        eventLoop.preconditionInEventLoop()
        states[domain] = DomainState(values: values, generation: ledgerGeneration(of: domain))
        // Present: just stored, and `Dictionary` has no insertion that answers the index.
        return states.index(forKey: domain)!
    }

    /// The generation the ledger has for a domain not in memory: 0 for one never changed.
    func ledgerGeneration(of domain: DomainName) -> Int64 {
        eventLoop.preconditionInEventLoop()
        if ledger == nil { ledger = GenerationLedger(files: files).load() }
        return ledger?[domain] ?? 0
    }

    /// The values of the dirty domains (copy-on-write: nothing is copied until the loop writes
    /// to one of them again) and every domain's generation, loaded or not.
    func snapshot(of dirty: Set<DomainName>) -> WriteBehind.Snapshot {
        eventLoop.preconditionInEventLoop()
        var generations = ledger ?? [:]
        // Generation 0 is every domain never changed: the ledger keeps none of them, so reading
        // domains that do not exist leaves nothing on disk.
        for (domain, state) in states where state.generation > 0 { generations[domain] = state.generation }
        ledger = generations
        return WriteBehind.Snapshot(
            domains: dirty.map { ($0, states[$0]?.values ?? [:]) }, generations: generations, versions: fileVersions,
            durableLedger: durableLedger)
    }

    /// What a flush of `snapshot` wrote: the files' versions and what they hold, and the ledger now durable.
    func record(_ outcome: FlushOutcome, of snapshot: WriteBehind.Snapshot) {
        eventLoop.preconditionInEventLoop()
        fileVersions.record(outcome, of: snapshot)
        if let written = outcome.ledger { durableLedger = written }
        if let didWrite, !outcome.written.isEmpty {
            didWrite(outcome.written.keys.reduce(into: [:]) { $0[$1] = snapshot.generations[$1] ?? 0 })
        }
    }
}
