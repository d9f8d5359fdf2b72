import DefaultsCore
import NIOCore

/// The domains held in memory and every domain's generation: the state that the store changes
/// and that `WriteBehind` takes snapshots of.
///
/// Owned by the state-owning event loop: the store and the write-behind, both on that loop,
/// share it; every access checks the loop, in release builds too.
final class DomainTable: SnapshotSource {
    let eventLoop: EventLoop
    private let files: DomainFiles
    private(set) var states: [DomainName: DomainState] = [:]
    /// Generations from the ledger, read on first use; kept up to date by every snapshot.
    private var ledger: [DomainName: Int64]?

    init(eventLoop: EventLoop, files: DomainFiles) {
        self.eventLoop = eventLoop
        self.files = files
    }

    var count: Int { states.count }

    /// Where a loaded domain sits in `states`; nil when it is not loaded.
    func index(of domain: DomainName) -> Dictionary<DomainName, DomainState>.Index? {
        eventLoop.preconditionInEventLoop()
        return states.index(forKey: domain)
    }

    subscript(index: Dictionary<DomainName, DomainState>.Index) -> DomainState {
        get { states.values[index] }
        _modify { yield &states.values[index] }
    }

    /// Adds a domain just read from its file, with the generation the ledger has for it.
    func insert(_ domain: DomainName, values: [String: PlistValue]) -> Dictionary<DomainName, DomainState>.Index {
        eventLoop.preconditionInEventLoop()
        if ledger == nil { ledger = GenerationLedger(files: files).load() }
        states[domain] = DomainState(values: values, generation: ledger?[domain] ?? 0)
        return states.index(forKey: domain)!
    }

    /// The values of the dirty domains (copy-on-write: nothing is copied until the loop writes
    /// to one of them again) and every domain's generation, loaded or not.
    func snapshot(of dirty: Set<DomainName>) -> WriteBehind.Snapshot {
        eventLoop.preconditionInEventLoop()
        var generations = ledger ?? [:]
        for (domain, state) in states { generations[domain] = state.generation }
        ledger = generations
        return WriteBehind.Snapshot(domains: dirty.map { ($0, states[$0]?.values ?? [:]) }, generations: generations)
    }
}
