import DaemonTestSupport
import Foundation
import Testing

/// The Settings app's start on a busy port, and its stop.
@Suite struct SettingsAppStartAndStopTests {
    @Test("a busy port: one line naming the port and --port 0, and exit code 69")
    func aBusyPortIsOneClearLine() throws {
        let daemon = try DaemonProcess()
        let first = try SettingsAppProcess(daemon: daemon)
        defer { first.stop() }
        let second = try FinishedRun.run(
            SettingsAppProcess.binary, ["--port", String(first.port), "--socket", daemon.socketPath], environment: daemon.clientEnvironment)
        #expect(second.status == 69)
        let lines = second.output.split(separator: "\n")
        #expect(lines.last == "defaultsd-settings: port \(first.port) is in use by another program (another Settings app?); --port 0 takes any free port")
        #expect(!second.output.contains("bind(") && !second.output.contains("errno"), "one clear line, not the socket layer's words: \(second.output)")
    }

    @Test("a stop by SIGTERM is clean: exit 0 and no error or reconnection in the log")
    func aStopIsClean() throws {
        let daemon = try DaemonProcess()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: SettingsAppProcess.binary)
        process.arguments = ["--port", "0", "--socket", daemon.socketPath]
        process.environment = daemon.clientEnvironment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let log = LineReader(errors.fileHandleForReading)
        try process.run()
        var lines: [String] = []
        while let line = log.next(timeout: 10) {
            lines.append(line)
            if line.contains("connected to defaultsd") { break }
        }
        #expect(lines.contains { $0.contains("connected to defaultsd") }, "\(lines)")
        process.terminate()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        while let line = log.next(timeout: 1) { lines.append(line) }
        #expect(!lines.contains { $0.contains(" error ") || $0.contains("reconnecting") }, "\(lines.joined(separator: "\n"))")
    }
}
