import DefaultsCore
import FoundationEssentials

/// A domain's entries recorded and not yet handed to the journal thread, kept small: the domain
/// once for the list, and each writer once per run of changes it made in a row (a burst from one
/// connection shares one), so that recording a change copies no writer's strings. The journal
/// thread makes whole ``JournalEntry`` values of them (``entries(of:)``).
///
/// Owned by the ``ChangeJournal`` on the loop; a list handed over, or read by `history`, is a
/// value the journal thread then reads alone.
struct PendingEntries: Sendable {
    /// One key's change, its writer an index into ``writers``.
    struct Recorded: Sendable {
        var id: Int64
        var time: Date
        var key: String
        var change: JournalEntry.Change
        var writer: Int
    }

    private(set) var recorded: [Recorded] = []
    /// The writers of ``recorded``: one for each run of changes by the same writer. An entry
    /// dropped for the bounds leaves its writer here, so the indices stay valid.
    private(set) var writers: [Origin] = []
    /// About how many bytes the entries would take in the domain's file.
    private(set) var bytes = 0

    var count: Int { recorded.count }

    mutating func append(id: Int64, time: Date, key: String, change: JournalEntry.Change, origin: Origin) {
        if writers.isEmpty || writers[writers.count - 1] != origin { writers.append(origin) }
        bytes += ChangeJournal.approximateBytes(key: key, change: change)
        recorded.append(Recorded(id: id, time: time, key: key, change: change, writer: writers.count - 1))
    }

    /// Drops the oldest entries past what a compaction would keep: changes that outrun the disk
    /// hold no more than that in memory (the values they replaced, above all).
    mutating func keep(within bounds: JournalBounds) {
        guard recorded.count > bounds.compactionEntries || bytes > bounds.maximumBytes else { return }
        var dropped = max(0, recorded.count - bounds.maximumEntries)
        for entry in recorded[..<dropped] { bytes -= ChangeJournal.approximateBytes(key: entry.key, change: entry.change) }
        while bytes > bounds.maximumBytes, dropped < recorded.count - 1 {
            bytes -= ChangeJournal.approximateBytes(key: recorded[dropped].key, change: recorded[dropped].change)
            dropped += 1
        }
        recorded.removeFirst(dropped)
    }

    /// How many of the entries, from the first, have ids up to `generation`.
    func count(upTo generation: Int64) -> Int {
        recorded.prefix { $0.id <= generation }.count
    }

    /// The first `count` entries, and the rest; both share the writers.
    func split(at count: Int) -> (first: PendingEntries, rest: PendingEntries) {
        var first = PendingEntries(), rest = PendingEntries()
        first.recorded = Array(recorded[..<count])
        rest.recorded = Array(recorded[count...])
        first.writers = writers
        rest.writers = writers
        for entry in rest.recorded { rest.bytes += ChangeJournal.approximateBytes(key: entry.key, change: entry.change) }
        first.bytes = bytes - rest.bytes
        return (first, rest)
    }

    /// The entries whole, oldest first.
    func entries(of domain: DomainName) -> [JournalEntry] {
        recorded.map { JournalEntry(id: $0.id, time: $0.time, domain: domain, key: $0.key, change: $0.change, origin: writers[$0.writer]) }
    }
}
