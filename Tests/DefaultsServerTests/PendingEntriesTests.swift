@testable import DefaultsServer
import DefaultsCore
import Foundation
import TestThreads
import Testing

/// The journal's entries waiting for the disk: each writer kept once per run, whole entries made
/// back exactly, the bounds held, and a split that keeps both halves whole.
@Suite(.ownThreads) struct PendingEntriesTests {
    static let domain = try! DomainName("com.example.pending")
    static let time = Date(timeIntervalSince1970: 1_800_000_000)

    static func writer(_ command: String) -> Origin {
        var origin = Origin(pid: 42, uid: 1000, connection: 7, client: nil)
        origin.command = command
        return origin
    }

    static func filled(_ writers: [String]) -> PendingEntries {
        var pending = PendingEntries()
        for (index, command) in writers.enumerated() {
            pending.append(
                id: Int64(index + 1), time: time, key: "k\(index)", old: nil, new: .integer(Int64(index)), isSecure: false,
                origin: writer(command))
        }
        return pending
    }

    static func bytes(_ entries: [JournalEntry]) -> Int {
        entries.reduce(0) { $0 + ChangeJournal.approximateBytes(key: $1.key, change: $1.change) }
    }

    @Test("a run of changes by one writer keeps the writer once, and the entries come back whole, each with its own writer")
    func writersOncePerRun() {
        let pending = Self.filled(["defaults", "defaults", "firefox", "defaults"])
        #expect(pending.writers.map(\.command) == ["defaults", "firefox", "defaults"])
        let entries = pending.entries(of: Self.domain)
        #expect(entries.map(\.origin.command) == ["defaults", "defaults", "firefox", "defaults"])
        #expect(entries.map(\.id) == [1, 2, 3, 4])
        #expect(entries.allSatisfy { $0.domain == Self.domain && $0.time == Self.time })
        #expect(entries[2] == JournalEntry(
            id: 3, time: Self.time, domain: Self.domain, key: "k2", change: .values(old: nil, new: .integer(2)), origin: Self.writer("firefox")))
        #expect(pending.bytes == Self.bytes(entries))
    }

    @Test("a writer equal to the last one is the same run, though its strings are other copies; a writer that differs in one field starts a run")
    func writerComparedByValue() {
        var pending = PendingEntries()
        var first = Self.writer("defaults")
        first.executable = String(decoding: Array("/usr/bin/defaults".utf8), as: UTF8.self)
        // Equal, but its executable's path is another string storage: not the same bytes.
        var equal = Self.writer("defaults")
        equal.executable = "/usr/bin/" + String(decoding: Array("defaults".utf8), as: UTF8.self)
        var otherClient = equal
        otherClient.client = "Preferences"
        for (index, origin) in [first, first, equal, otherClient, otherClient].enumerated() {
            pending.append(id: Int64(index + 1), time: Self.time, key: "k", old: nil, new: .integer(1), isSecure: false, origin: origin)
        }
        #expect(pending.writers == [first, otherClient])
        #expect(pending.entries(of: Self.domain).map(\.origin) == [first, first, first, otherClient, otherClient])
    }

    @Test("past the point of compaction the oldest are dropped down to the bound, and the byte count follows")
    func boundsHeld() {
        var pending = Self.filled(Array(repeating: "defaults", count: 7))
        let bounds = JournalBounds(maximumEntries: 4, maximumAge: 86_400, maximumBytes: 1 << 20)
        pending.keep(within: bounds)
        #expect(pending.entries(of: Self.domain).map(\.id) == [4, 5, 6, 7])
        #expect(pending.bytes == Self.bytes(pending.entries(of: Self.domain)))
        // Within the point of compaction (6 entries), nothing is dropped.
        var few = Self.filled(Array(repeating: "defaults", count: 6))
        few.keep(within: bounds)
        #expect(few.count == 6)
        // Past the byte bound, the oldest go until the rest is within it.
        var large = Self.filled(Array(repeating: "defaults", count: 5))
        let each = large.bytes / 5
        large.keep(within: JournalBounds(maximumEntries: 100, maximumAge: 86_400, maximumBytes: 2 * each))
        #expect(large.entries(of: Self.domain).map(\.id) == [4, 5])
        #expect(large.bytes == 2 * each)
        // Within half as many bytes again as the bound, nothing is dropped.
        var within = Self.filled(Array(repeating: "defaults", count: 5))
        within.keep(within: JournalBounds(maximumEntries: 100, maximumAge: 86_400, maximumBytes: 4 * each))
        #expect(within.count == 5)
        // The newest entry stays, even past the byte bound alone.
        var one = Self.filled(["defaults", "defaults"])
        one.keep(within: JournalBounds(maximumEntries: 100, maximumAge: 86_400, maximumBytes: 1))
        #expect(one.entries(of: Self.domain).map(\.id) == [2])
    }

    @Test("changes that keep outrunning the byte bound are cut back in batches, a third at least each time, not one per change")
    func cutsInBatches() {
        var pending = PendingEntries()
        let each = ChangeJournal.approximateBytes(key: "k", change: .values(old: nil, new: .integer(1)))
        let bounds = JournalBounds(maximumEntries: 1000, maximumAge: 86_400, maximumBytes: 30 * each)
        var cuts = 0
        for id in 1...300 {
            let before = pending.count
            pending.append(id: Int64(id), time: Self.time, key: "k", old: nil, new: .integer(1), isSecure: false, origin: Self.writer("defaults"))
            pending.keep(within: bounds)
            if pending.count <= before { cuts += 1 }
            #expect(pending.bytes <= 45 * each)
        }
        // Cut from 46 entries to 30 each time: once per 16 changes after the first 45.
        #expect(cuts == (300 - 45) / 16 + 1)
        #expect(pending.entries(of: Self.domain).last?.id == 300)
    }

    @Test("a list cut back keeps only its entries' writers, and a change by its last writer, after a cut or a split, continues that writer's run")
    func writersAfterCutAndSplit() {
        var cut = Self.filled(["defaults", "firefox", "firefox", "gsettings", "gsettings", "gsettings", "gsettings"])
        cut.keep(within: JournalBounds(maximumEntries: 4, maximumAge: 86_400, maximumBytes: 1 << 20))
        #expect(cut.writers.map(\.command) == ["gsettings"])
        cut.append(id: 8, time: Self.time, key: "k", old: nil, new: .integer(8), isSecure: false, origin: Self.writer("gsettings"))
        #expect(cut.writers.map(\.command) == ["gsettings"])
        var (_, rest) = Self.filled(["defaults", "firefox", "gsettings"]).split(at: 1)
        rest.append(id: 4, time: Self.time, key: "k", old: nil, new: .integer(4), isSecure: false, origin: Self.writer("gsettings"))
        #expect(rest.writers.map(\.command) == ["firefox", "gsettings"])
        #expect(rest.entries(of: Self.domain).map(\.origin.command) == ["firefox", "gsettings", "gsettings"])
    }

    @Test("a split by generation gives the durable entries and the rest, each whole with its own writers")
    func split() {
        let pending = Self.filled(["defaults", "firefox", "firefox", "defaults", "gsettings"])
        let count = pending.count(upTo: 3)
        #expect(count == 3)
        let (first, rest) = pending.split(at: count)
        #expect(first.entries(of: Self.domain) == Array(pending.entries(of: Self.domain)[..<3]))
        #expect(rest.entries(of: Self.domain) == Array(pending.entries(of: Self.domain)[3...]))
        #expect(rest.entries(of: Self.domain).map(\.origin.command) == ["defaults", "gsettings"])
        // Each half keeps only its own writers: a list cut back holds no writer of a dropped entry.
        #expect(first.writers.map(\.command) == ["defaults", "firefox"])
        #expect(rest.writers.map(\.command) == ["defaults", "gsettings"])
        #expect(first.bytes + rest.bytes == pending.bytes)
        #expect(rest.bytes == Self.bytes(rest.entries(of: Self.domain)))
    }

    @Test("entries across several chunks come back in order, and a split or a cut inside a chunk keeps each half whole and appendable")
    func acrossChunks() {
        let total = PendingEntries.chunkSize * 2 + 300
        let pending = Self.filled((0..<total).map { $0 / 1000 % 2 == 0 ? "defaults" : "firefox" })
        #expect(pending.count == total)
        #expect(pending.entries(of: Self.domain).map(\.id) == (1...Int64(total)).map { $0 })
        #expect(pending.writers.map(\.command) == ["defaults", "firefox", "defaults"])

        // A split inside the second chunk: the rest goes on growing from where it was cut.
        var (first, rest) = pending.split(at: PendingEntries.chunkSize + 10)
        #expect(first.entries(of: Self.domain).map(\.id) == (1...Int64(PendingEntries.chunkSize + 10)).map { $0 })
        rest.append(id: Int64(total + 1), time: Self.time, key: "next", old: nil, new: .bool(true), isSecure: false, origin: Self.writer("defaults"))
        let restIDs = rest.entries(of: Self.domain).map(\.id)
        #expect(restIDs == (Int64(PendingEntries.chunkSize + 11)...Int64(total + 1)).map { $0 })
        #expect(rest.count == restIDs.count)
        #expect(rest.writers.map(\.command) == ["firefox", "defaults"])
        #expect(rest.bytes == Self.bytes(rest.entries(of: Self.domain)))

        // Cut back to a bound that is not a whole number of chunks.
        var kept = pending
        kept.keep(within: JournalBounds(maximumEntries: 1000, maximumAge: 86_400, maximumBytes: 1 << 30))
        #expect(kept.entries(of: Self.domain).map(\.id) == (Int64(total - 999)...Int64(total)).map { $0 })
        kept.append(id: Int64(total + 1), time: Self.time, key: "next", old: nil, new: .bool(true), isSecure: false, origin: Self.writer("defaults"))
        #expect(kept.count == 1001)
        #expect(kept.entries(of: Self.domain).last?.id == Int64(total + 1))
    }
}
