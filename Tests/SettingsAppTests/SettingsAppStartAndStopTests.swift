import DaemonTestSupport
import Foundation
import Testing

/// Starting the Settings app on a port another program holds.
@Suite struct SettingsAppPortTests {
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
}
