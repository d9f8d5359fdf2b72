import DaemonTestSupport
import Foundation
import LocalServices
import TestThreads
import Testing
import WebDriver

/// The Settings app's start on a busy port, and its stop.
@Suite(.ownThreads) struct SettingsAppStartAndStopTests {
    /// A port held by another program: a listening socket on 127.0.0.1.
    func holdPort() throws -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    @Test("a busy port: one line naming the port and --port 0, and exit code 69")
    func aBusyPortIsOneClearLine() throws {
        let daemon = try DaemonProcess()
        let held = try holdPort()
        defer { close(held.fd) }
        let run = try FinishedRun.run(
            SettingsAppProcess.binary, ["--port", String(held.port), "--socket", daemon.socketPath], environment: daemon.clientEnvironment)
        #expect(run.status == 69)
        let lines = run.output.split(separator: "\n")
        #expect(lines.last == "defaultsd-settings: port \(held.port) is in use by another program (another Settings app?); --port 0 takes any free port")
        #expect(!run.output.contains("bind(") && !run.output.contains("errno"), "one clear line, not the socket layer's words: \(run.output)")
    }

    @Test("a second instance refuses with the first's port, and leaves the first's address file alone")
    func aSecondInstanceRefuses() throws {
        let daemon = try DaemonProcess()
        let first = try SettingsAppProcess(daemon: daemon)
        defer { first.stop() }
        let before = try String(contentsOfFile: first.addressFile, encoding: .utf8)
        let second = try FinishedRun.run(
            SettingsAppProcess.binary, ["--port", "0", "--socket", daemon.socketPath], environment: daemon.clientEnvironment)
        #expect(second.status == 69)
        #expect(second.output.split(separator: "\n").last
            == "defaultsd-settings: the Settings app is already running on port \(first.port); its address is in \(first.addressFile)")
        #expect(try String(contentsOfFile: first.addressFile, encoding: .utf8) == before, "the first's file, untouched")
        #expect(try LoopbackHTTP.send(port: first.port, "GET", "/?token=\(first.token)").status == 303, "the first still serves")
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
