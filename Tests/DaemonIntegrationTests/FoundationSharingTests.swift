import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import LocalServices
import TestThreads
import Testing

/// A program that uses plain Foundation `UserDefaults` (FoundationDefaultsProbe: it imports
/// Foundation and nothing else) and the daemon, in its default folder, share one database.
@Suite(.ownThreads) struct FoundationSharingTests {
    static let probe: String = {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("FoundationDefaultsProbe").path
        if FileManager.default.isExecutableFile(atPath: beside) { return beside }
        return SharedData.repository.appendingPathComponent(".build/debug/FoundationDefaultsProbe").path
    }()
    static let domain = "com.example.foundation"

    func probe(_ daemon: DaemonProcess, _ arguments: String...) throws -> String {
        let run = try FinishedRun.run(Self.probe, arguments, environment: daemon.clientEnvironment)
        return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func defaults(_ daemon: DaemonProcess, _ arguments: String...) throws -> String {
        try FinishedRun.run(DefaultsCommandTests.binary, arguments, environment: daemon.clientEnvironment).output
    }

    @Test("a Foundation program's set + synchronize reaches subscribers as a didChange from the file, and defaults reads it")
    func aFoundationWriteIsShared() throws {
        let daemon = try DaemonProcess(defaultPaths: true)
        let subscriber = try daemon.connect()
        #expect(try subscriber.request(#"{"op":"subscribe","domains":["\#(Self.domain)","FoundationDefaultsProbe"]}"#).hasPrefix(#"{"ok":true"#))

        #expect(try probe(daemon, "set", Self.domain, "rank", "Captain") == "ok")
        let event = try JSONParser.parse(try subscriber.readEvent(timeout: 2))
        #expect(event["domain"] == .string(Self.domain))
        #expect(event["changes"] == ["rank": "Captain"])
        #expect(event["origin"] == ["source": "file"])
        #expect(try defaults(daemon, "read", Self.domain, "rank") == "Captain\n")

        // UserDefaults.standard: the domain Foundation names for the executable.
        #expect(try probe(daemon, "set", "-", "warpFactor", "8") == "ok")
        let standard = try JSONParser.parse(try subscriber.readEvent(timeout: 2))
        #expect(standard["domain"] == "FoundationDefaultsProbe" && standard["changes"] == ["warpFactor": 8])
        #expect(FileManager.default.fileExists(atPath: daemon.home + "/.config/FoundationDefaultsProbe.plist"))
    }

    @Test("the daemon's writes reach a new Foundation program at once, and a running one at its next synchronize")
    func aDaemonWriteIsShared() throws {
        let daemon = try DaemonProcess(defaultPaths: true)
        // `defaults sync` waits until the daemon's write is on disk, where Foundation reads.
        _ = try defaults(daemon, "write", Self.domain, "rank", "Admiral")
        _ = try defaults(daemon, "sync")
        #expect(try probe(daemon, "get", Self.domain, "rank") == "String Admiral")

        let running = Process()
        running.executableURL = URL(fileURLWithPath: Self.probe)
        running.arguments = ["serve", Self.domain]
        running.environment = daemon.clientEnvironment
        let input = Pipe(), output = Pipe()
        running.standardInput = input
        running.standardOutput = output
        try running.run()
        defer { running.terminate() }
        let lines = LineReader(output.fileHandleForReading)
        func ask(_ command: String) -> String? {
            input.fileHandleForWriting.write(Data((command + "\n").utf8))
            return lines.next(timeout: 5)
        }
        #expect(ask("get rank") == "String Admiral")
        _ = try defaults(daemon, "write", Self.domain, "rank", "Commodore")
        _ = try defaults(daemon, "sync")
        #expect(ask("get rank") == "String Admiral", "Foundation serves what it holds until it synchronizes")
        #expect(ask("sync") == "ok")
        #expect(ask("get rank") == "String Commodore")

        // And the global domain, as Foundation reads it (.GlobalPreferences.plist).
        _ = try defaults(daemon, "write", "-g", "AppleLanguages", "-array", "fr", "en")
        _ = try defaults(daemon, "sync")
        let languages = try probe(daemon, "get", Self.domain, "AppleLanguages")
        #expect(languages.hasPrefix("Array"), "\(languages)")
        #expect(FileManager.default.fileExists(atPath: daemon.home + "/.config/.GlobalPreferences.plist"))
    }

    /// A program's file that lands while writes through the socket are on their way is merged
    /// with them against the version it was made from: what the file did not change stays, in
    /// memory and on disk.
    @Test("a Foundation program and a socket client writing one domain at the same time: every acknowledged write of both survives, in the daemon and on disk")
    func concurrentWritersBothSurvive() throws {
        let daemon = try DaemonProcess(defaultPaths: true)
        let program = Process()
        program.executableURL = URL(fileURLWithPath: Self.probe)
        program.arguments = ["serve", Self.domain]
        program.environment = daemon.clientEnvironment
        let input = Pipe(), output = Pipe()
        program.standardInput = input
        program.standardOutput = output
        try program.run()
        defer { program.terminate() }
        let lines = LineReader(output.fileHandleForReading)
        let socket = try daemon.connect()
        // Interleaved: each of the program's set + synchronize, then a socket write acknowledged
        // before the program's next write, so the two race in every round.
        for index in 0..<60 {
            input.fileHandleForWriting.write(Data("set p\(index) \(index)\n".utf8))
            let written = try socket.request(#"{"op":"set","domain":"\#(Self.domain)","key":"d\#(index)","value":\#(index)}"#)
            #expect(written.hasPrefix(#"{"ok":true"#), "\(written)")
            #expect(lines.next(timeout: 5) == "ok")
        }
        var expected: [String: PlistValue] = [:]
        for index in 0..<60 {
            expected["p\(index)"] = .integer(Int64(index))
            expected["d\(index)"] = .integer(Int64(index))
        }
        // The program's last file is taken in a few milliseconds after it lands.
        var missing: [String] = []
        let deadline = Date().addingTimeInterval(5)
        repeat {
            let held = try JSONParser.parse(try socket.request(#"{"op":"get","domain":"\#(Self.domain)"}"#))
            guard case .object(let values)? = held["value"] else { Issue.record("no values: \(held)"); return }
            missing = expected.keys.filter { values[$0] == nil }.sorted()
            if missing.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.02)
        } while Date() < deadline
        #expect(missing.isEmpty, "lost from the daemon: \(missing)")
        #expect(try socket.request(#"{"op":"synchronize"}"#).hasPrefix(#"{"ok":true"#))
        let onDisk = try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: daemon.home + "/.config/\(Self.domain).plist")))
        #expect(onDisk == expected, "lost from disk: \(expected.keys.filter { onDisk[$0] == nil }.sorted())")
    }

    @Test("by-host values are shared: defaults -currentHost reaches the program over its domain's value, and Foundation's by-host file is the daemon's")
    func byHostValuesAreShared() throws {
        let daemon = try DaemonProcess(defaultPaths: true)
        _ = try defaults(daemon, "write", "FoundationDefaultsProbe", "rank", "Ensign")
        _ = try defaults(daemon, "-currentHost", "write", "FoundationDefaultsProbe", "rank", "Captain")
        _ = try defaults(daemon, "sync")
        #expect(FileManager.default.fileExists(atPath: daemon.home + "/.config/ByHost/FoundationDefaultsProbe..plist"))
        #expect(try probe(daemon, "get", "-", "rank") == "String Captain", "this machine's value wins, as in Foundation's search list")

        // A by-host file as Foundation names it is this machine's variant of the domain.
        let path = daemon.home + "/.config/ByHost/\(Self.domain)..plist"
        try PropertyListFile.encode(["shields": .bool(true)], format: .xml).write(to: URL(fileURLWithPath: path))
        #expect(try defaults(daemon, "-currentHost", "read", Self.domain, "shields") == "1\n")
        #expect(try probe(daemon, "get", Self.domain, "shields") == "Bool true")
    }

    @Test("a domain whose name has a space, as Foundation allows (a suite or a program called `My Tool`), is shared both ways")
    func aNameWithASpace() throws {
        let daemon = try DaemonProcess(defaultPaths: true)
        let subscriber = try daemon.connect()
        #expect(try subscriber.request(#"{"op":"subscribe","domains":["My Tool"]}"#).hasPrefix(#"{"ok":true"#))
        #expect(try probe(daemon, "set", "My Tool", "rank", "Captain") == "ok")
        let event = try JSONParser.parse(try subscriber.readEvent(timeout: 2))
        #expect(event["domain"] == "My Tool" && event["changes"] == ["rank": "Captain"])
        #expect(try defaults(daemon, "read", "My Tool", "rank") == "Captain\n")
        _ = try defaults(daemon, "write", "My Tool", "rank", "Admiral")
        _ = try defaults(daemon, "sync")
        #expect(try probe(daemon, "get", "My Tool", "rank") == "String Admiral")
        #expect(FileManager.default.fileExists(atPath: daemon.home + "/.config/My Tool.plist"))
    }
}
