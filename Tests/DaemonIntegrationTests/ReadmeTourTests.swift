import DaemonTestSupport
import Foundation
import LocalServices
import TestThreads
import Testing

/// Runs README.md's tour as written, in one shell, against a daemon started as `make run` starts
/// it (no flags; its default socket and storage in a private home), so the README cannot drift.
/// A line marked `# keeps running` runs in the background, as in a terminal of its own; the next
/// line waits until it has shown that it is ready.
@Suite(.ownThreads) struct ReadmeTourTests {
    static let readme = SharedData.repository.appendingPathComponent("README.md").path

    /// What each long-running command of the tour prints once it is ready.
    static let readiness: [(command: String, ready: String)] = [
        (#"{"op":"subscribe""#, #"^{"ok":true,"#),
        (".build/debug/BridgeControl", "^---$"),
        (".build/debug/defaults watch", "^watching com.example.BridgeControl; Ctrl-C to stop$"),
    ]

    /// The command lines of the tour's `sh` blocks, in order.
    static func tourCommands() throws -> [String] {
        let text = try String(contentsOfFile: readme, encoding: .utf8)
        let tour = try #require(text.components(separatedBy: "## A 60-second tour").dropFirst().first)
            .components(separatedBy: "\n## ").first ?? ""
        var commands: [String] = []
        var inShell = false
        for line in tour.components(separatedBy: "\n") {
            if line.hasPrefix("```") {
                inShell = line == "```sh"
                continue
            }
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if inShell, !trimmed.isEmpty, !trimmed.hasPrefix("#") { commands.append(line) }
        }
        return commands
    }

    /// One shell script: each command after a marker line. A background command runs from a
    /// script of its own in a session of its own (`setsid`), its output in a file, and is stopped
    /// with everything it started when the tour ends (SIGKILL: the test runner's children may
    /// inherit an ignored SIGTERM). Variables are exported (`set -a`) so it sees
    /// the tour's `SOCK`.
    static func script(_ commands: [String], output directory: String) throws -> String {
        var lines = [
            "set -ea", "cd '\(SharedData.repository.path)'",
            "trap 'for job in $(cat \(directory)/jobs 2>/dev/null); do kill -9 -$job 2>/dev/null || true; done' EXIT",
        ]
        var background = 0
        for (number, command) in commands.enumerated() {
            lines.append("echo '### \(number)'")
            guard let marker = command.range(of: "# keeps running") else {
                lines.append(command)
                continue
            }
            background += 1
            let file = "\(directory)/background-\(background)"
            let bare = command[..<marker.lowerBound].trimmingCharacters(in: .whitespaces)
            let ready = try #require(readiness.first { bare.contains($0.command) }?.ready, "no readiness known for \(bare)")
            try (bare + "\n").write(toFile: file + ".sh", atomically: true, encoding: .utf8)
            lines.append("setsid sh \(file).sh > \(file) 2>&1 < /dev/null & echo $! >> \(directory)/jobs")
            lines.append("i=0; until grep -q -- '\(ready)' \(file); do i=$((i+1)); [ $i -lt 400 ] || exit 3; sleep 0.05; done")
        }
        lines.append("echo '### end'")
        return lines.joined(separator: "\n") + "\n"
    }

    @Test func theTourRunsAsWritten() throws {
        let commands = try Self.tourCommands()
        #expect(commands.count == 11)  // a command that stops being found fails here
        let daemon = try DaemonProcess(defaultPaths: true)
        let output = daemon.directory + "/tour"
        try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
        try Self.script(commands, output: output).write(toFile: output + "/tour.sh", atomically: true, encoding: .utf8)

        var environment = daemon.clientEnvironment
        environment["DEFAULTSD_SOCKET"] = nil  // the README relies on the default socket
        let run = try FinishedRun.run("/bin/sh", [output + "/tour.sh"], environment: environment)
        let text = run.output
        #expect(run.status == 0, "\(text)")

        // Each command's output, by its number.
        var printed: [Int: [String]] = [:]
        var current = -1
        for line in text.components(separatedBy: "\n") where !line.isEmpty {
            if line.hasPrefix("### ") { current = Int(line.dropFirst(4)) ?? -1 } else { printed[current, default: []].append(line) }
        }
        #expect(printed[1] == [#"{"ok":true,"generation":1}"#])
        #expect(printed[2] == [#"{"ok":true,"value":{"warpFactor":5},"generation":1}"#])
        #expect(printed[5] == [#"{"ok":true,"generation":2}"#])
        #expect(printed[6] == [#"{"ok":true}"#])
        let file = (printed[7] ?? []).joined(separator: "\n")
        #expect(file.contains("<key>warpFactor</key>\n\t<real>7.5</real>"), "\(file)")
        #expect(file.contains("<key>officer</key>\n\t<string>Jean-Luc Picard</string>"), "\(file)")
        #expect(printed[9] == ["{", #"    officer = "Jean-Luc Picard";"#, "    warpFactor = 8;", "}"])

        // The watcher and the example app saw both changes.
        let watcher = try String(contentsOfFile: output + "/background-1", encoding: .utf8)
        #expect(watcher.contains(#""changes":{"officer":"Jean-Luc Picard","warpFactor":7.5}"#), "\(watcher)")
        #expect(watcher.contains(#""changes":{"warpFactor":8.0}"#), "\(watcher)")
        let app = try String(contentsOfFile: output + "/background-2", encoding: .utf8)
        #expect(app.contains("--- changed: officer, warpFactor"), "\(app)")
        #expect(app.contains("Warp factor:        8.0"), "\(app)")
    }
}
