import DaemonTestSupport
import DefaultsClient
import DefaultsCore
import Foundation
import LineSocket
import LocalServices
import TestThreads
import Testing

/// The change journal through the real daemon: writers that are real processes, `history` and
/// `revert` on the socket, kill -9, a burst past the bound, compaction off the loop, secrets.
@Suite("The change journal: who changed it, history and undo", .serialized, .ownThreads)
struct ChangeJournalTests {
    static let domain = "com.example.BridgeControl"

    /// `history`'s entries, parsed by the one reader of entries.
    static func history(_ daemon: DaemonProcess, _ request: String) throws -> [JournalEntry] {
        let answer = try JSONParser.parse(try rawRequest(daemon, request)[0])
        guard case .array(let items)? = answer["entries"] else {
            Issue.record("no entries in \(answer)")
            return []
        }
        return items.map { JournalEntry(json: $0, domain: nil)! }
    }

    static func journalPath(_ daemon: DaemonProcess, _ domain: String = domain) -> String {
        daemon.journalPath + "/" + domain + ".journal"
    }

    /// Writers that are each a real process: `defaults`, a Swift client (the BridgeControl
    /// example) and a hand edit. `history` names each, with the values before and after, and
    /// `revert` to the first returns the domain to what it held, types included.
    @Test func historyNamesEachWriterAndRevertRestoresTheStateExactly() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(
            daemon, #"{"op":"hello","client":"journal-test"}"#,
            #"{"op":"apply","domain":"\#(Self.domain)","set":{"warpFactor":5.0,"ship":"Enterprise","stardate":{"$date":"2026-11-27T08:00:00Z"}}}"#)
        let before = try rawRequest(daemon, #"{"op":"get","domain":"\#(Self.domain)"}"#)[0]

        #expect(try defaultsCommand(daemon, "write", Self.domain, "warpFactor", "-int", "9").status == 0)
        let counter = try BridgeControlProcess(daemon, ["count", "1"])
        #expect(try await counter.exitStatus(timeout: 60) == 0)
        // A hand edit: a new file renamed over the domain's, as an editor saves it.
        let path = daemon.storagePath + "/" + Self.domain + ".plist"
        _ = try rawRequest(daemon, #"{"op":"synchronize"}"#)
        var file = try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: path)))
        file["ship"] = "Voyager"
        try PropertyListFile.encode(file, format: .xml).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        var entries: [JournalEntry] = []
        for _ in 0..<200 where entries.last?.origin.source != .file {
            entries = try Self.history(daemon, #"{"op":"history","domain":"\#(Self.domain)"}"#)
            try await Task.sleep(for: .milliseconds(50))
        }

        // This test process, as the daemon names it.
        var me = Origin(pid: getpid(), uid: getuid(), connection: 0)
        me.command = PeerProcess(pid: getpid()).command
        me.executable = PeerProcess(pid: getpid()).executable
        let changes = entries.map { "\($0.origin.writerName) \($0.key) \($0.change)" }.map { $0.replacingOccurrences(of: me.writerName, with: "test") }
        #expect(changes == [
            #"test ship values(old: nil, new: Optional(DefaultsCore.PlistValue.string("Enterprise")))"#,
            #"test stardate values(old: nil, new: Optional(DefaultsCore.PlistValue.date(2026-11-27 08:00:00 +0000)))"#,
            #"test warpFactor values(old: nil, new: Optional(DefaultsCore.PlistValue.real(5.0)))"#,
            #"defaults warpFactor values(old: Optional(DefaultsCore.PlistValue.real(5.0)), new: Optional(DefaultsCore.PlistValue.integer(9)))"#,
            #"BridgeControl launches values(old: nil, new: Optional(DefaultsCore.PlistValue.integer(1)))"#,
            #"file ship values(old: Optional(DefaultsCore.PlistValue.string("Enterprise")), new: Optional(DefaultsCore.PlistValue.string("Voyager")))"#,
        ])
        let first = try #require(entries.first)
        #expect(first.origin.client == "journal-test" && first.origin.pid > 0 && first.origin.executable != nil)
        #expect(entries.map(\.id) == [1, 1, 1, 2, 3, 4], "an entry's id is the domain's generation after its change")
        #expect(entries[4].origin.executable?.hasSuffix("/BridgeControl") == true)
        #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.time <= $1.time })
        // Asked by writer, by key, from a time.
        #expect(try Self.history(daemon, #"{"op":"history","domain":"\#(Self.domain)","writer":"defaults"}"#).map(\.key) == ["warpFactor"])
        #expect(try Self.history(daemon, #"{"op":"history","domain":"\#(Self.domain)","writer":"file"}"#).map(\.key) == ["ship"])
        #expect(try Self.history(daemon, #"{"op":"history","domain":"\#(Self.domain)","key":"warpFactor","limit":1}"#).map(\.id) == [2])
        #expect(try Self.history(daemon, #"{"op":"history","writer":"BridgeControl"}"#).map(\.domain.rawValue) == [Self.domain])
        let since = RFC3339.format(entries[3].time)
        #expect(try Self.history(daemon, #"{"op":"history","domain":"\#(Self.domain)","since":"\#(since)"}"#).count == 3)

        // Undo everything from the `defaults write` on: one apply, whose origin says so.
        let events = try daemon.connect()
        _ = try events.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        #expect(try rawRequest(daemon, #"{"op":"revert","domain":"\#(Self.domain)","to":2}"#)
            == [#"{"ok":true,"generation":5,"to":2,"changes":{"launches":null,"ship":"Enterprise","warpFactor":5.0}}"#])
        let event = try events.readEvent()
        #expect(event.contains(#""changes":{"launches":null,"ship":"Enterprise","warpFactor":5.0}"#) && event.contains(#""revert":2"#))
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"\#(Self.domain)"}"#)[0] == before.replacingOccurrences(of: #""generation":1"#, with: #""generation":5"#))
        let reverted = try Self.history(daemon, #"{"op":"history","domain":"\#(Self.domain)","limit":3}"#)
        #expect(reverted.allSatisfy { $0.id == 5 && $0.origin.revert == 2 && $0.origin.client == nil })

        // Undo the latest change (the revert itself), and one key back to before an entry.
        #expect(try rawRequest(daemon, #"{"op":"revert","domain":"\#(Self.domain)"}"#)
            == [#"{"ok":true,"generation":6,"to":5,"changes":{"launches":1,"ship":"Voyager","warpFactor":9}}"#])
        #expect(try rawRequest(daemon, #"{"op":"revert","domain":"\#(Self.domain)","to":4,"key":"ship"}"#)
            == [#"{"ok":true,"generation":7,"to":4,"changes":{"ship":"Enterprise"}}"#])
        #expect(try rawRequest(daemon, #"{"op":"revert","domain":"\#(Self.domain)","time":"\#(RFC3339.format(Date()))"}"#)
            == [#"{"ok":true,"generation":7,"changes":{}}"#], "nothing changed since now")
        #expect(try rawRequest(daemon, #"{"op":"revert","domain":"\#(Self.domain)","to":99}"#)
            == [#"{"ok":false,"error":{"code":"invalid_parameter","message":"the change journal has no entry 99 for com.example.BridgeControl"}}"#])
    }

    /// The journal survives kill -9 at random instants in a stream of writes: after each restart,
    /// every entry answered is whole, the ids never go back, and the entries of earlier runs stay.
    @Test func theJournalSurvivesKillNineWithNoTornEntryShown() async throws {
        let daemon = try DaemonProcess()
        var kept = 0
        for round in 0..<5 {
            let writer = try daemon.connect()
            // Past the write-behind's longest wait (1 s) and the journal's hand-over a second after
            // a flush, so that each round's first changes can reach the file before the kill.
            let stop = Date().addingTimeInterval(Double.random(in: 2.5...4))
            var sent = 0
            // Twenty at a time: the daemon is killed with requests and entries in flight, and
            // never stops reading for answers not read.
            while Date() < stop {
                var lines = ""
                for _ in 0..<20 {
                    lines += #"{"op":"set","domain":"com.example.crash","key":"k\#(sent % 7)","value":"\#(round)-\#(sent)"}"# + "\n"
                    sent += 1
                }
                try writer.send(bytes: Array(lines.utf8))
                for _ in 0..<20 { _ = try writer.readResponse() }
            }
            daemon.kill()
            try daemon.restart()
            let entries = try Self.history(daemon, #"{"op":"history","domain":"com.example.crash","limit":10000}"#)
            #expect(entries.count >= min(kept, 10_000), "round \(round): entries of earlier runs stay")
            #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.id <= $1.id }, "round \(round)")
            #expect(entries.allSatisfy { if case .values(_, .string(let text)?) = $0.change { text.contains("-") } else { false } })
            kept = entries.count
            // What the file holds beyond the entries answered is at most the line the kill cut.
            let domain = try DomainName("com.example.crash")
            let lines = ((try? String(contentsOfFile: Self.journalPath(daemon, "com.example.crash"), encoding: .utf8)) ?? "")
                .split(separator: "\n").filter { (try? JSONParser.parse(String($0))).flatMap { JournalEntry(json: $0, domain: domain) } == nil }
            #expect(lines.count <= 1, "round \(round): \(lines.count) lines that are not entries")
        }
        #expect(kept > 0)
    }

    /// A burst of 100,000 changes to one domain: the journal keeps the newest 10,000 (its bound),
    /// its file never holds more than a compaction leaves plus half again, and the last change
    /// is the last entry.
    @Test func aBurstStaysWithinTheBound() async throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.connect()
        let total = 100_000
        var batch = ""
        for index in 1...total {
            batch += #"{"op":"set","domain":"com.example.burst","key":"counter","value":\#(index)}"# + "\n"
            if index % 1000 == 0 {
                try writer.send(bytes: Array(batch.utf8))
                batch = ""
                for _ in 0..<1000 { _ = try writer.readResponse(timeout: 60) }
            }
        }
        let entries = try Self.history(daemon, #"{"op":"history","domain":"com.example.burst","limit":10000}"#)
        #expect(entries.count == 10_000)
        #expect(entries.last?.change == .values(old: .integer(Int64(total - 1)), new: .integer(Int64(total))))
        #expect(entries.first?.change == .values(old: .integer(Int64(total - 10_000)), new: .integer(Int64(total - 9_999))))
        let lines = try String(contentsOfFile: Self.journalPath(daemon, "com.example.burst"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count <= 15_000, "\(lines.count) lines on disk")
    }

    /// 400 changes of 60 KB values (48 MB of entries, old and new): the journal holds what its
    /// byte bound says in memory, not the changes' worth. Two daemons alike but for the journal,
    /// the same changes: the one with a journal grows by at most three times its 4 MiB bound
    /// more (the entries waiting for their changes to be durable, and a compaction's read and
    /// its new lines).
    @Test func largeValuesKeepTheJournalsMemoryWithinItsBound() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #"{ "journal": { "enabled": false } }"#.write(toFile: directory + "/off.json", atomically: true, encoding: .utf8)
        var growth: [Int] = []
        let daemons = [try DaemonProcess(), try DaemonProcess(arguments: ["--config", directory + "/off.json"])]
        for daemon in daemons {
            let writer = try daemon.connect()
            let baseline = daemon.anonymousResidentKiB()
            let payload = String(repeating: "z", count: 60_000)
            for round in 0..<400 {
                _ = try writer.request(#"{"op":"set","domain":"com.example.large","key":"k\#(round % 4)","value":"\#(payload)\#(round)"}"#)
            }
            _ = try writer.request(#"{"op":"synchronize"}"#)
            _ = try writer.request(#"{"op":"ping"}"#)
            growth.append(daemon.anonymousResidentKiB() - baseline)
        }
        #expect(growth[0] - growth[1] < 3 * 4096, "with the journal the daemon grew by \(growth[0]) KiB, without it by \(growth[1]) KiB")
        // The newest changes are recorded, within the byte bound.
        let entries = try Self.history(daemons[0], #"{"op":"history","domain":"com.example.large","limit":10000}"#)
        #expect(entries.count > 10 && entries.count < 40, "\(entries.count) entries of 120 KB within 4 MiB")
        #expect(entries.last?.change == .values(old: .string(String(repeating: "z", count: 60_000) + "395"), new: .string(String(repeating: "z", count: 60_000) + "399")))
    }

    /// Two bursts of 10,000 changes: once the journal has written them and been quiet, the
    /// daemon's anonymous memory is back within 1 MiB of what it was before. The journal's
    /// batches are megabytes of text, which glibc, left to itself, would keep in the arena from
    /// then on (`JournalMemory.keepLargeBuffersMapped`).
    @Test func memoryIsGivenBackAfterBursts() throws {
        let daemon = try DaemonProcess()
        let writer = try daemon.connect()
        _ = try writer.request(#"{"op":"ping"}"#)
        let baseline = daemon.anonymousResidentKiB()
        for round in 0..<2 {
            var lines = ""
            for i in 0..<10_000 {
                lines += #"{"op":"set","domain":"com.example.given-back","key":"k\#(i % 50)","value":\#(round * 10_000 + i)}"# + "\n"
            }
            try writer.send(bytes: Array(lines.utf8))
            for _ in 0..<10_000 {
                #expect(try writer.nextLine(hasPrefix: Array(#"{"ok":true"#.utf8), timeout: 30))
            }
        }
        _ = try writer.request(#"{"op":"synchronize"}"#)
        // The journal takes the entries a second after their changes are durable, and gives
        // its memory back a second after it is quiet: the growth is read until it is within
        // the bound, for at most 20 s.
        let deadline = Date().addingTimeInterval(20)
        var growth = daemon.anonymousResidentKiB() - baseline
        while growth >= 1024, Date() < deadline {
            usleep(100_000)
            growth = daemon.anonymousResidentKiB() - baseline
        }
        #expect(growth < 1024, "the daemon holds \(growth) KiB more than before the bursts")
        let entries = try Self.history(daemon, #"{"op":"history","domain":"com.example.given-back","limit":1}"#)
        #expect(entries.map(\.change) == [.values(old: .integer(19_949), new: .integer(19_999))])
    }

    /// A compaction of a 15 MB journal runs on the journal thread: while it reads and rewrites
    /// the file (seconds, in a debug build), the daemon answers every other request within 0.5 s.
    @Test func compactionNeverHoldsARequest() async throws {
        // Bounded by entries, not bytes, so that the whole file is read and rewritten.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try #"{ "journal": { "maximumBytesPerDomain": 33554432 } }"#.write(toFile: directory + "/defaultsd.json", atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", directory + "/defaultsd.json"])
        let journal = daemon.journalPath
        try FileManager.default.createDirectory(atPath: journal, withIntermediateDirectories: true)
        // 14,000 entries of a 1 KiB value: past the entry bound, so the next write compacts it.
        let value = String(repeating: "x", count: 1024)
        var writer = JSONWriter(capacity: 16 << 20)
        for id in 1...14_000 {
            JournalEntry(
                id: Int64(id), time: Date(), domain: try DomainName("com.example.big"), key: "k\(id % 100)",
                change: .values(old: nil, new: .string(value)), origin: .file
            ).encode(into: &writer, withDomain: false)
            writer.newline()
        }
        let path = journal + "/com.example.big.journal"
        try Data(writer.bytes).write(to: URL(fileURLWithPath: path))
        let inode = try #require(FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int)

        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.big","key":"k1","value":"y"}"#)
        let pings = try daemon.connect()
        var slowest = 0.0
        var compacted = false
        let deadline = Date().addingTimeInterval(60)
        while !compacted && Date() < deadline {
            let start = Date()
            _ = try pings.request(#"{"op":"ping"}"#)
            slowest = max(slowest, Date().timeIntervalSince(start))
            compacted = (try? FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? Int) != inode
        }
        #expect(compacted, "the journal was compacted (a new file)")
        #expect(slowest < 0.5, "the slowest ping took \(slowest) s")
        let entries = try Self.history(daemon, #"{"op":"history","domain":"com.example.big","limit":10000}"#)
        #expect(entries.count == 10_000 && entries.last?.change == .values(old: nil, new: .string("y")))
    }

    /// A secure key's change is recorded without its values: not in the file, not in `history`,
    /// not in `defaults history`; `revert` leaves it as it is and says so.
    @Test func secureValuesAreNeverRecorded() async throws {
        let bundles = try BundleDirectory()
        try bundles.install(Self.domain)
        let daemon = try bundles.daemon(loading: [Self.domain])
        let secret = "7364-ALPHA-SECRET"
        _ = try rawRequest(
            daemon, #"{"op":"set","domain":"\#(Self.domain)","key":"authorizationCode","value":"\#(secret)"}"#,
            #"{"op":"set","domain":"\#(Self.domain)","key":"authorizationCode","value":"\#(secret)-2"}"#,
            #"{"op":"set","domain":"\#(Self.domain)","key":"officer","value":"Riker"}"#,
            #"{"op":"synchronize"}"#)
        let answer = try rawRequest(daemon, #"{"op":"history","domain":"\#(Self.domain)"}"#)[0]
        #expect(!answer.contains(secret))
        let entries = try Self.history(daemon, #"{"op":"history","domain":"\#(Self.domain)"}"#)
        #expect(entries.map(\.change) == [.secure, .secure, .values(old: nil, new: .string("Riker"))])
        let output = try defaultsCommand(daemon, "history", Self.domain)
        #expect(!(output.output + output.errors).contains(secret))
        #expect(try rawRequest(daemon, #"{"op":"revert","domain":"\#(Self.domain)","to":2}"#)
            == [#"{"ok":true,"generation":4,"to":2,"changes":{"officer":null},"skipped":["authorizationCode"]}"#])
        // An orderly stop writes every entry whose change is durable to the file.
        #expect(daemon.terminate() == 0)
        let file = try String(contentsOfFile: Self.journalPath(daemon), encoding: .utf8)
        #expect(file.split(separator: "\n").count == 4)
        #expect(!file.contains(secret) && file.contains(#""secure":true"#))
    }

    /// Turned off, or a domain excluded: nothing is recorded, and `history` says why.
    @Test func anExcludedDomainIsNotRecorded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/defaultsd.json"
        try #"{ "journal": { "excludedDomains": ["com.example.private"] } }"#.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", config])
        _ = try rawRequest(
            daemon, #"{"op":"set","domain":"com.example.private","key":"k","value":1}"#,
            #"{"op":"set","domain":"com.example.open","key":"k","value":1}"#)
        #expect(try rawRequest(daemon, #"{"op":"history","domain":"com.example.private"}"#)
            == [#"{"ok":false,"error":{"code":"no_journal","message":"the change journal does not keep com.example.private: it is off, or excludes the domain (journal.excludedDomains)"}}"#])
        #expect(try Self.history(daemon, #"{"op":"history"}"#).map(\.domain.rawValue) == ["com.example.open"])
        #expect(!FileManager.default.fileExists(atPath: Self.journalPath(daemon, "com.example.private")))

        try #"{ "journal": { "enabled": false } }"#.write(toFile: config, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        #expect(daemon.waitForLog("configuration reloaded"))
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.open","key":"k","value":2}"#)
        #expect(try rawRequest(daemon, #"{"op":"history"}"#)
            == [#"{"ok":false,"error":{"code":"no_journal","message":"the change journal is off (journal.enabled)"}}"#])
    }
}
