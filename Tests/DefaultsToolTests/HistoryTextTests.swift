import DefaultsCore
@testable import DefaultsTool
import Foundation
import TestThreads
import Testing

/// What `history`, `undo` and `blame` print of the journal's entries, and the times `--since` and
/// `--to` take. Local time depends on the process's time zone, so the lines are checked against
/// ``LocalTime`` here and against a fixed `TZ` in `HistoryCommandTests`, which runs the binary.
@Suite(.ownThreads) struct HistoryTextTests {
    @Test func valuesOnOneLineInDefaultsSyntax() {
        let cases: [(PlistValue, String)] = [
            ("dark", "dark"), ("high contrast", "\"high contrast\""), (7, "7"), (-3, "\"-3\""), (2.5, "\"2.5\""),
            (5.0, "5"), (true, "1"), (.data(Data([1, 2, 3, 4])), "{length = 4, bytes = 0x01020304}"),
            (.date(RFC3339.parse("2026-11-21T10:00:00Z")!), "\"2026-11-21 10:00:00 +0000\""),
            (["a", "b c", 3], "(a, \"b c\", 3)"), ([], "()"), ([:], "{}"),
            (["n": 1, "k": "v", "list": ["x", ["deep": true]]], "{k = v; list = (x, {deep = 1;}); n = 1;}"),
        ]
        for (value, text) in cases { #expect(OldStyleText.oneLine(value) == text, "\(value)") }
    }

    @Test func linesAlignTheirColumnsAndSayWhatChanged() throws {
        let time = try #require(RFC3339.parse("2026-11-27T10:00:00.750Z"))
        let app = try DomainName("com.example.app")
        let other = try DomainName("com.example.longer.name").currentHost
        let entries = [
            JournalEntry(id: 1, time: time, domain: app, key: "volume", change: .values(old: nil, new: 3),
                         origin: Origin(pid: 42, uid: 1000, connection: 1, client: "defaults")),
            JournalEntry(id: 2, time: time, domain: other, key: "a key", change: .values(old: ["x": "Siân"], new: nil), origin: .file),
            JournalEntry(id: 3, time: time, domain: app, key: "password", change: .secure, origin: .roaming(host: "laptop")),
        ]
        let stamp = LocalTime.format(time)
        #expect(HistoryText.lines(entries, showingDomain: false) == """
            \(stamp)  defaults  volume    (absent) → 3
            \(stamp)  file      "a key"   {x = "Si\\\\U00e2n";} → (absent)
            \(stamp)  laptop    password  (secure value, not recorded)

            """)
        #expect(HistoryText.lines(entries, showingDomain: true) == """
            \(stamp)  defaults  com.example.app                         volume    (absent) → 3
            \(stamp)  file      com.example.longer.name (current host)  "a key"   {x = "Si\\\\U00e2n";} → (absent)
            \(stamp)  laptop    com.example.app                         password  (secure value, not recorded)

            """)
        #expect(HistoryText.lines([], showingDomain: true) == "")
    }

    @Test func blameNamesTheWriterAndWhatItsOriginTells() throws {
        let time = try #require(RFC3339.parse("2026-11-27T10:00:00Z"))
        var origin = Origin(pid: 4242, uid: 1000, connection: 7)
        origin.command = "defaults"
        origin.executable = "/usr/bin/defaults"
        let app = try DomainName("com.example.app")
        let stamp = LocalTime.format(time)
        let written = JournalEntry(id: 12, time: time, domain: app, key: "volume", change: .values(old: 3, new: 7), origin: origin)
        #expect(HistoryText.author(of: written) == "defaults, \(stamp) (pid 4242, uid 1000, /usr/bin/defaults)\n")
        origin.revert = 9
        let undone = JournalEntry(id: 13, time: time, domain: app, key: "volume", change: .values(old: 7, new: 3), origin: origin)
        #expect(HistoryText.author(of: undone) == "defaults, \(stamp) (pid 4242, uid 1000, /usr/bin/defaults, an undo back to before change 9)\n")
        let edited = JournalEntry(id: 14, time: time, domain: app, key: "volume", change: .values(old: 3, new: 4), origin: .file)
        #expect(HistoryText.author(of: edited) == "file, \(stamp)\n")
        let roamed = JournalEntry(id: 15, time: time, domain: app, key: "volume", change: .values(old: 4, new: 5), origin: .roaming(host: "laptop"))
        #expect(HistoryText.author(of: roamed) == "laptop, \(stamp) (roaming)\n")
    }

    @Test func localTimeReadsWhatItWrites() throws {
        // Midsummer: no time zone changes its clocks then, so every local time is one moment.
        let time = try #require(RFC3339.parse("2026-07-15T12:30:15Z"))
        let text = LocalTime.format(time)
        #expect(text.count == 19)
        #expect(LocalTime.parse(text) == time)
        #expect(LocalTime.parse(text.replacingOccurrences(of: " ", with: "T")) == time)
        #expect(LocalTime.parse(String(text.prefix(16))) == time.addingTimeInterval(-15))
        for refused in ["2026-02-30", "2026-13-01", "2026-1-01", "2026-11-27 9:00", "2026-11-27 09:00:00:00", "26-11-27", "2026-11-27 24:00", "yesterday", ""] {
            #expect(LocalTime.parse(refused) == nil, "\(refused)")
        }
    }

    @Test func timeArgumentsAreDurationsOrTimes() throws {
        let now = try #require(RFC3339.parse("2026-11-27T10:00:00Z"))
        let cases: [(String, String)] = [
            ("30s", "2026-11-27T09:59:30Z"), ("15m", "2026-11-27T09:45:00Z"), ("1h", "2026-11-27T09:00:00Z"),
            ("2d", "2026-11-25T10:00:00Z"), ("0s", "2026-11-27T10:00:00Z"),
            ("2026-11-27T09:00:00Z", "2026-11-27T09:00:00Z"), ("2026-11-27T10:00:00+01:00", "2026-11-27T09:00:00Z"),
        ]
        for (text, expected) in cases { #expect(TimeArgument.parse(text, now: now) == RFC3339.parse(expected), "\(text)") }
        #expect(TimeArgument.parse("2026-11-27 09:00", now: now) == LocalTime.parse("2026-11-27 09:00:00"))
        for refused in ["h", "-1h", "1.5h", "1w", "1 h", "soon", ""] {
            #expect(TimeArgument.parse(refused, now: now) == nil, "\(refused)")
        }
    }

    @Test func flagsAreTakenWithTheirValuesAnywhere() throws {
        let (flags, words) = try Command.flags(in: ["--since", "1h", "-g", "--by", "firefox", "AppleLocale"], taking: ["--since", "--by"])
        #expect(flags == ["--since": "1h", "--by": "firefox"])
        #expect(words == ["-g", "AppleLocale"])
        #expect(throws: ToolError.usage) { try Command.flags(in: ["--sinse", "1h"], taking: ["--since"]) }
        #expect(throws: ToolError.misuse("--limit needs a value after it")) { try Command.flags(in: ["com.x", "--limit"], taking: ["--limit"]) }
    }
}
