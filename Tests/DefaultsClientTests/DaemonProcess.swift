import DefaultsCore
import Foundation
import LineSocket

/// The real `defaultsd` binary on a temporary socket and storage directory.
///
/// Copied from Tests/DaemonIntegrationTests (test targets cannot share sources); `socketName`
/// lets a second daemon serve the same storage on another socket.
final class DaemonProcess: @unchecked Sendable {
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["DEFAULTSD_BINARY"] { return path }
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("defaultsd").path
        if FileManager.default.isExecutableFile(atPath: besideTests) { return besideTests }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/defaultsd").path
    }()

    let directory: String
    let socketPath: String
    let storagePath: String
    let arguments: [String]
    let environment: [String: String]
    private(set) var process: Process
    private let log = LogBuffer()

    /// Starts a daemon in a new temporary directory, or on `reusing` another daemon's directory.
    init(
        arguments: [String] = [], environment: [String: String] = [:], reusing other: DaemonProcess? = nil,
        socketName: String = "socket"
    ) throws {
        directory = other?.directory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("defaultsd-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        socketPath = directory + "/" + socketName
        storagePath = directory + "/storage"
        self.arguments = arguments
        self.environment = environment
        ownsDirectory = other == nil
        process = Process()
        try launch()
    }

    /// Starts the binary and returns once it logs that it is listening.
    private func launch() throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonProcess.binary)
        process.arguments = ["--socket", socketPath, "--storage-dir", storagePath] + arguments
        var inherited = ProcessInfo.processInfo.environment
        for key in ["NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM"] {
            inherited[key] = nil
        }
        process.environment = inherited.merging(environment) { $1 }
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice  // never hold the test runner's output open
        let ready = DispatchSemaphore(value: 0)
        let log = self.log
        nonisolated(unsafe) var signalled = false
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty {
                handle.readabilityHandler = nil
                ready.signal()
                return
            }
            let text = log.append(String(decoding: chunk, as: UTF8.self))
            if !signalled, text.contains("listening") {
                signalled = true
                ready.signal()
            }
        }
        try process.run()
        guard ready.wait(timeout: .now() + 30) == .success, process.isRunning else {
            throw LineSocket.Failure(description: "defaultsd did not start: \(logText)")
        }
    }

    var logText: String { log.text }

    /// Waits until the daemon's log contains `text`; false after `timeout` seconds.
    @discardableResult
    func waitForLog(_ text: String, timeout: Double = 10) -> Bool { log.wait(for: text, timeout: timeout) }

    func send(_ signal: Int32) { Foundation.kill(process.processIdentifier, signal) }

    func connect() throws -> LineSocket { try LineSocket(path: socketPath) }

    /// Sends SIGTERM and returns the exit status.
    @discardableResult
    func terminate() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops this daemon and starts it again on the same directory.
    func restart() throws {
        if process.isRunning, case let status = terminate(), status != 0 {
            throw LineSocket.Failure(description: "defaultsd exited with \(status): \(logText)")
        }
        try launch()
    }

    var pid: Int32 { process.processIdentifier }

    /// The daemon's resident memory, in KiB, from /proc.
    func residentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    /// The domain file as the daemon left it on disk.
    func storedValues(_ domain: String) throws -> [String: PlistValue]? {
        let name = domain == "NSGlobalDomain" ? ".GlobalPreferences.plist" : domain + ".plist"
        guard let data = FileManager.default.contents(atPath: storagePath + "/" + name) else { return nil }
        return try PropertyListFile.decode(data)
    }

    func storageListing() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: storagePath)) ?? []).sorted()
    }

    /// Whether this instance removes the directory when released (false for one reusing another's).
    var ownsDirectory = true

    deinit {
        kill()
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }
}


/// The daemon's stderr, appended from the pipe's reader thread.
final class LogBuffer: @unchecked Sendable {
    private let condition = NSCondition()
    private var contents = ""

    func append(_ chunk: String) -> String {
        condition.lock()
        defer { condition.unlock() }
        contents += chunk
        condition.broadcast()
        return contents
    }

    var text: String {
        condition.lock()
        defer { condition.unlock() }
        return contents
    }

    func wait(for text: String, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !contents.contains(text) {
            if !condition.wait(until: deadline) { return contents.contains(text) }
        }
        return true
    }
}
