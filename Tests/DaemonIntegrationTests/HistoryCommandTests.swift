import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// `defaults history`, `undo` and `blame` against a real daemon's change journal, the changes
/// made by the real `defaults`, so the writer is `defaults`. The expected times are read from the
/// journal itself (`history` over the socket); `defaults` runs in UTC, where local time is the
/// journal's own time to the second, unless a test gives another time zone.
@Suite(.ownThreads) struct HistoryCommandTests {
    static func run(_ daemon: DaemonProcess, _ arguments: [String], timeZone: String = "UTC") throws -> DefaultsCommandTests.Result {
        try DefaultsCommandTests.run(arguments, in: daemon.clientEnvironment.merging(["TZ": timeZone]) { $1 })
    }

    static func run(_ daemon: DaemonProcess, _ arguments: String...) throws -> DefaultsCommandTests.Result {
        try run(daemon, arguments)
    }

    /// Runs each command, expecting each to succeed silently.
    static func change(_ daemon: DaemonProcess, _ commands: [[String]]) throws {
        for arguments in commands {
            let result = try run(daemon, arguments)
            #expect(result.status == 0 && result.out.isEmpty && result.err.isEmpty, "\(arguments): \(result)")
        }
    }

    /// The entries the journal answers to `request`, oldest first.
    static func entries(_ daemon: DaemonProcess, _ request: String) throws -> [JSON] {
        let answer = try JSONParser.parse(try daemon.connect().request(request))
        guard case .array(let entries)? = answer["entries"] else {
            Issue.record("no entries in \(answer)")
            return []
        }
        return entries
    }

    /// An entry's time as `history` prints it in UTC: the journal's RFC 3339 time, to the second.
    static func stamp(_ entry: JSON) -> String {
        guard case .string(let time)? = entry["time"] else { return "?" }
        return String(time.prefix(19)).replacingOccurrences(of: "T", with: " ")
    }

    static func time(_ entry: JSON) throws -> Date {
        guard case .string(let text)? = entry["time"], let time = RFC3339.parse(text) else { throw LineSocket.Failure(description: "\(entry)") }
        return time
    }

    /// Changes a second apart, so that a time to the second falls between the two groups.
    static let pause = 1.1

    @Test func historyPrintsEachChangeOldestFirst() throws {
        let daemon = try DaemonProcess()
        try Self.change(daemon, [
            ["write", "com.example.app", "volume", "-int", "3"], ["write", "com.example.app", "volume", "-int", "7"],
            ["write", "com.example.other", "list", "-array", "a", "b c"],
        ])
        Thread.sleep(forTimeInterval: Self.pause)
        try Self.change(daemon, [["write", "com.example.app", "mode", "high contrast"], ["delete", "com.example.app", "volume"]])
        let all = try Self.entries(daemon, #"{"op":"history"}"#)
        try #require(all.count == 5)
        let s = all.map(Self.stamp)

        let domain = try Self.run(daemon, "history", "com.example.app")
        #expect(domain.status == 0 && domain.err.isEmpty)
        #expect(domain.out == """
            \(s[0])  defaults  volume  (absent) → 3
            \(s[1])  defaults  volume  3 → 7
            \(s[3])  defaults  mode    (absent) → "high contrast"
            \(s[4])  defaults  volume  7 → (absent)

            """)
        #expect(try Self.run(daemon, "history").out == """
            \(s[0])  defaults  com.example.app    volume  (absent) → 3
            \(s[1])  defaults  com.example.app    volume  3 → 7
            \(s[2])  defaults  com.example.other  list    (absent) → (a, "b c")
            \(s[3])  defaults  com.example.app    mode    (absent) → "high contrast"
            \(s[4])  defaults  com.example.app    volume  7 → (absent)

            """)
        #expect(try Self.run(daemon, "history", "com.example.app", "volume").out == """
            \(s[0])  defaults  volume  (absent) → 3
            \(s[1])  defaults  volume  3 → 7
            \(s[4])  defaults  volume  7 → (absent)

            """)
        let newest = """
            \(s[3])  defaults  mode    (absent) → "high contrast"
            \(s[4])  defaults  volume  7 → (absent)

            """
        #expect(try Self.run(daemon, "history", "com.example.app", "--limit", "2").out == newest)
        // A local time to the second: in UTC, the journal's time of the first later change.
        #expect(try Self.run(daemon, "history", "--since", s[3], "com.example.app").out == newest)
        #expect(try Self.run(daemon, "history", "com.example.app", "--since", "1h").out == domain.out)
        #expect(try Self.run(daemon, "history", "com.example.app", "--by", "defaults").out == domain.out)
        #expect(try Self.run(daemon, "history", "com.example.app", "--by", "firefox").out == "No recorded changes.\n")
        #expect(try Self.run(daemon, "history", "com.example.app", "--since", "2999-01-01T00:00:00Z").out == "No recorded changes.\n")

        let json = try Self.run(daemon, "--json", "history", "com.example.app")
        #expect(try JSONParser.parse(json.out) == .array(try Self.entries(daemon, #"{"op":"history","domain":"com.example.app"}"#)))

        // Local time: 5:30 ahead of UTC (a POSIX time zone, which needs no zone files).
        let utc = DateFormatter()
        utc.locale = Locale(identifier: "en_US_POSIX")
        utc.timeZone = TimeZone(identifier: "UTC")
        utc.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let shifted = utc.string(from: try #require(utc.date(from: s[2])).addingTimeInterval(5.5 * 3600))
        #expect(try Self.run(daemon, ["history", "com.example.other"], timeZone: "XST-05:30").out
            == "\(shifted)  defaults  list  (absent) → (a, \"b c\")\n")
    }

    /// Each variant of a domain has its own history; without a domain, a by-host one says so.
    @Test func historyOfTheCurrentHostsVariant() throws {
        let daemon = try DaemonProcess()
        try Self.change(daemon, [
            ["write", "com.example.display", "scale", "-int", "1"], ["-currentHost", "write", "com.example.display", "scale", "-int", "2"],
        ])
        let s = try Self.entries(daemon, #"{"op":"history"}"#).map(Self.stamp)
        try #require(s.count == 2)
        #expect(try Self.run(daemon, "-currentHost", "history", "com.example.display").out == "\(s[1])  defaults  scale  (absent) → 2\n")
        #expect(try Self.run(daemon, "history", "com.example.display").out == "\(s[0])  defaults  scale  (absent) → 1\n")
        #expect(try Self.run(daemon, "history").out == """
            \(s[0])  defaults  com.example.display                 scale  (absent) → 1
            \(s[1])  defaults  com.example.display (current host)  scale  (absent) → 2

            """)
    }

    @Test func undoReturnsADomainToBeforeItsLatestChangeOrToATime() throws {
        let daemon = try DaemonProcess()
        try Self.change(daemon, [["write", "com.example.app", "mode", "dark"], ["write", "com.example.app", "volume", "-int", "3"]])
        Thread.sleep(forTimeInterval: Self.pause)
        try Self.change(daemon, [
            ["write", "com.example.app", "volume", "-int", "7"], ["write", "com.example.app", "extra", "-bool", "yes"],
            ["delete", "com.example.app", "mode"],
        ])
        let earlier = try Self.entries(daemon, #"{"op":"history","domain":"com.example.app"}"#)
        try #require(earlier.count == 5)

        #expect(try Self.run(daemon, "undo", "com.example.app").out == "mode = dark\n")
        // The undo is the latest change now: undoing it brings back what it undid.
        #expect(try Self.run(daemon, "undo", "com.example.app").out == "mode removed\n")
        #expect(try Self.run(daemon, "read", "com.example.app").out == "{\n    extra = 1;\n    volume = 7;\n}\n")

        let before = try Self.time(earlier[1]), after = try Self.time(earlier[2])
        let between = before.addingTimeInterval(after.timeIntervalSince(before) / 2)
        let undone = try Self.run(daemon, "undo", "com.example.app", "--to", RFC3339.format(between))
        #expect(undone.status == 0 && undone.err.isEmpty)
        #expect(undone.out == "extra removed\nmode = dark\nvolume = 3\n")
        #expect(try Self.run(daemon, "read", "com.example.app").out == "{\n    mode = dark;\n    volume = 3;\n}\n")
        #expect(try Self.run(daemon, "undo", "com.example.app", "--to", RFC3339.format(between)).out
            == "Nothing to undo: com.example.app already holds the values it had then.\n")

        // blame names the undo, and the change it went back before.
        let last = try #require(try Self.entries(daemon, #"{"op":"history","domain":"com.example.app","key":"volume","limit":1}"#).last)
        guard case .integer(let pid)? = last["origin"]?["pid"], case .integer(let uid)? = last["origin"]?["uid"],
            case .integer(let revert)? = last["origin"]?["revert"], case .string(let program)? = last["origin"]?["executable"] ?? last["origin"]?["command"]
        else {
            Issue.record("\(last)")
            return
        }
        #expect(try Self.run(daemon, "blame", "com.example.app", "volume").out == """
            defaults, \(Self.stamp(last)) (pid \(pid), uid \(uid), \(program), an undo back to before change \(revert))
            \(Self.stamp(last))  defaults  volume  7 → 3

            """)

        let nothing = try Self.run(daemon, "undo", "com.example.never")
        #expect(nothing.status == 1 && nothing.out.isEmpty)
        #expect(nothing.message == "Nothing to undo: no change of com.example.never is recorded\n")
    }

    @Test func blameNamesWhoMadeTheLastChange() throws {
        let daemon = try DaemonProcess()
        try Self.change(daemon, [
            ["write", "com.example.app", "volume", "-int", "3"], ["write", "com.example.app", "volume", "-int", "7"],
            ["write", "com.example.app", "mode", "dark"],
        ])
        let volume = try Self.entries(daemon, #"{"op":"history","domain":"com.example.app","key":"volume"}"#)
        try #require(volume.count == 2)
        let last = volume[1]
        guard case .integer(let pid)? = last["origin"]?["pid"], case .integer(let uid)? = last["origin"]?["uid"],
            case .string(let program)? = last["origin"]?["executable"] ?? last["origin"]?["command"]
        else {
            Issue.record("\(last)")
            return
        }
        let blame = try Self.run(daemon, "blame", "com.example.app", "volume")
        #expect(blame.status == 0 && blame.err.isEmpty)
        #expect(blame.out == """
            defaults, \(Self.stamp(last)) (pid \(pid), uid \(uid), \(program))
            \(Self.stamp(last))  defaults  volume  3 → 7

            """)
        #expect(try JSONParser.parse(try Self.run(daemon, "--json", "blame", "com.example.app", "volume").out) == last)
        #expect(try Self.run(daemon, "blame", "com.example.app", "nothing").out
            == "The current value of nothing in com.example.app has no recorded change.\n")
    }

    /// Where macOS would print only the usage, a line names the problem; the arguments are
    /// checked before the daemon is asked.
    @Test func argumentErrorsPrintTheUsage() throws {
        let daemon = try DaemonProcess()
        let help = try Self.run(daemon, "help").out
        let times = "a duration (30s, 15m, 1h, 2d) or a time (2026-11-27 09:00, 2026-11-27T09:00:00Z)"
        for (arguments, problem) in [
            (["history", "com.example.app", "--since", "yesterday"], "--since takes \(times), not \"yesterday\""),
            (["undo", "com.example.app", "--to", "later"], "--to takes \(times), not \"later\""),
            (["history", "--limit", "0"], "--limit takes a number of changes, not \"0\""),
            (["history", "com.example.app", "--limit"], "--limit needs a value after it"),
        ] {
            let result = try Self.run(daemon, arguments)
            #expect(result.status == 255 && result.out == help, "\(arguments)")
            #expect(result.message == problem + "\n", "\(arguments): \(result.err)")
        }
        for arguments in [["history", "a", "b", "c"], ["history", "--frobnicate"], ["undo"], ["undo", "a", "b"], ["blame", "com.example.app"]] {
            let result = try Self.run(daemon, arguments)
            #expect(result.status == 255 && result.out == help && result.err.isEmpty, "\(arguments): \(result)")
        }
    }

    /// With the journal off, or a domain left out of it, every journal verb says so and exits 1.
    @Test func aJournalThatIsOffOrExcludesTheDomainIsSaidSo() throws {
        let config = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString.prefix(8)).json").path
        defer { try? FileManager.default.removeItem(atPath: config) }
        try #"{ "journal": { "enabled": false } }"#.write(toFile: config, atomically: true, encoding: .utf8)
        let off = try DaemonProcess(arguments: ["--config", config])
        let domainOff = "The change journal is off (or excludes com.example.app); see ADMINISTRATION.md\n"
        for (arguments, message) in [
            (["history", "com.example.app"], domainOff), (["history"], "The change journal is off; see ADMINISTRATION.md\n"),
            (["undo", "com.example.app"], domainOff), (["blame", "com.example.app", "volume"], domainOff),
        ] {
            let result = try Self.run(off, arguments)
            #expect(result.status == 1 && result.out.isEmpty && result.message == message, "\(arguments): \(result)")
        }

        try #"{ "journal": { "excludedDomains": ["com.example.private"] } }"#.write(toFile: config, atomically: true, encoding: .utf8)
        let excluding = try DaemonProcess(arguments: ["--config", config])
        try Self.change(excluding, [["write", "com.example.private", "secret", "x"], ["write", "com.example.app", "volume", "-int", "1"]])
        let excluded = try Self.run(excluding, "history", "com.example.private")
        #expect(excluded.status == 1)
        #expect(excluded.message == "The change journal is off (or excludes com.example.private); see ADMINISTRATION.md\n")
        let s = try Self.entries(excluding, #"{"op":"history"}"#).map(Self.stamp)
        try #require(s.count == 1)
        #expect(try Self.run(excluding, "history", "com.example.app").out == "\(s[0])  defaults  volume  (absent) → 1\n")
    }
}
