import DefaultsCore
import FoundationEssentials

/// A domain's entries recorded and not yet handed to the journal thread, kept small: the domain
/// once for the list, and each writer once per run of changes it made in a row (a burst from one
/// connection shares one), so that recording a change copies no writer's strings. The journal
/// thread makes whole ``JournalEntry`` values of them (``entries(of:)``).
///
/// The entries lie in chunks of ``chunkSize``, each allocated once at its full size: a burst's
/// list grows without copying what it holds, and in blocks the allocator keeps and gives out
/// again, where one array doubling would be copied at each doubling and, past glibc's mapping
/// threshold, mapped afresh (a page fault per page) at every burst.
///
/// Owned by the ``ChangeJournal`` on the loop; a list handed over, or read by `history`, is a
/// value the journal thread then reads alone.
struct PendingEntries: Sendable {
    /// One key's change, its writer an index into ``writers``. 80 bytes: the index is an
    /// `Int32` and comes last, in the change's padding.
    struct Recorded: Sendable {
        var id: Int64
        var time: Date
        var key: String
        var change: JournalEntry.Change
        var writer: Int32
    }

    static let chunkSize = 1024

    /// The chunks filled, oldest first, and the one being filled (``tail``), held apart so that
    /// an append changes one array, not an array inside another.
    private var chunks: [[Recorded]] = []
    private var tail: [Recorded] = []
    /// The writers of the entries: one for each run of changes by the same writer. A list cut
    /// back or split keeps only the writers of its own entries.
    private(set) var writers: [Origin] = []
    /// The last of ``writers``, kept beside it so that each change's writer is compared with it
    /// in place: an element read out of the array is a copy, which retains each of the writer's
    /// strings and releases them again, at every change. Unused while ``writers`` is empty.
    private var lastWriter = Origin.file
    private(set) var count = 0
    /// About how many bytes the entries would take in the domain's file.
    private(set) var bytes = 0

    /// Every entry, oldest first.
    private var recorded: FlattenSequence<[[Recorded]]> { (chunks + [tail]).joined() }

    /// Appends one key's change: what it held and holds now, or for a key whose values are secret
    /// (`isSecure`) only that it changed. The values come apart, not as a
    /// ``JournalEntry/Change``, so that their size is read from them where they are: taking them
    /// out of a change copies each, at every change.
    mutating func append(
        id: Int64, time: Date, key: String, old: PlistValue?, new: PlistValue?, isSecure: Bool, origin: Origin
    ) {
        if writers.isEmpty || lastWriter != origin {
            writers.append(origin)
            lastWriter = origin
        }
        let change: JournalEntry.Change
        if isSecure {
            change = .secure
            bytes += ChangeJournal.approximateBytes(key: key, change: .secure)
        } else {
            change = .values(old: old, new: new)
            bytes += ChangeJournal.approximateBytes(key: key, old: old, new: new)
        }
        if tail.count == Self.chunkSize {
            chunks.append(tail)
            tail = []
        }
        if tail.capacity < Self.chunkSize { tail.reserveCapacity(Self.chunkSize) }
        tail.append(Recorded(id: id, time: time, key: key, change: change, writer: Int32(writers.count - 1)))
        count += 1
    }

    /// Drops the oldest entries past what a compaction would keep: changes that outrun the disk
    /// hold no more than that in memory (the values they replaced, above all). As with a
    /// compaction, the entries are cut back once they are half as many again as the bounds
    /// keep, or take half as many bytes again: each cut drops a third of them at least, so
    /// that a burst pays for one pass over the list per that many changes, never one per change.
    @inline(__always) mutating func keep(within bounds: JournalBounds) {
        guard count > bounds.compactionEntries || bytes > bounds.maximumBytes + bounds.maximumBytes / 2 else { return }
        cutBack(within: bounds)
    }

    private mutating func cutBack(within bounds: JournalBounds) {
        let all = Array(recorded)
        // The oldest past the entry bound, then more of the oldest while the rest is past the
        // byte bound; the newest entry always stays.
        var dropped = max(0, all.count - bounds.maximumEntries)
        var remaining = bytes - all[..<dropped].reduce(0) { $0 + Self.approximateBytes($1) }
        while remaining > bounds.maximumBytes, dropped < all.count - 1 {
            remaining -= Self.approximateBytes(all[dropped])
            dropped += 1
        }
        self = Self.from(Array(all[dropped...]), writers: writers)
    }

    /// How many of the entries, from the first, have ids up to `generation`.
    func count(upTo generation: Int64) -> Int {
        recorded.prefix { $0.id <= generation }.count
    }

    /// The first `count` entries, and the rest, each with its writers.
    func split(at count: Int) -> (first: PendingEntries, rest: PendingEntries) {
        (Self.from(Array(recorded.prefix(count)), writers: writers), Self.from(Array(recorded.dropFirst(count)), writers: writers))
    }

    /// The entries whole, oldest first.
    func entries(of domain: DomainName) -> [JournalEntry] {
        recorded.map { JournalEntry(id: $0.id, time: $0.time, domain: domain, key: $0.key, change: $0.change, origin: writers[Int($0.writer)]) }
    }

    /// A list of `entries`, whose writers are indices into `writers`, with only the writers
    /// they name: those of entries dropped or split off go with them.
    private static func from(_ entries: [Recorded], writers: [Origin]) -> PendingEntries {
        var list = PendingEntries()
        var entries = entries
        var previous: Int32 = -1
        for index in entries.indices {
            // Each run's index is larger than the last one's.
            if entries[index].writer != previous {
                previous = entries[index].writer
                list.writers.append(writers[Int(previous)])
            }
            entries[index].writer = Int32(list.writers.count - 1)
        }
        if let last = list.writers.last { list.lastWriter = last }
        list.count = entries.count
        list.chunks = stride(from: 0, to: entries.count, by: chunkSize).map { Array(entries[$0..<min($0 + chunkSize, entries.count)]) }
        list.tail = list.chunks.popLast() ?? []
        list.bytes = entries.reduce(0) { $0 + approximateBytes($1) }
        return list
    }

    private static func approximateBytes(_ entry: Recorded) -> Int {
        ChangeJournal.approximateBytes(key: entry.key, change: entry.change)
    }
}
