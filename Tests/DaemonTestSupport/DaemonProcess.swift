import DefaultsCore
import Foundation
import LineSocket
import LocalServices

/// The real `defaultsd` binary on a temporary socket and storage directory, with a private `HOME`
/// and XDG directories (``TestEnvironment``), so nothing of the invoking user's setup reaches it.
///
/// Shared by the test targets that run the real daemon; `socketName` lets a second daemon serve
/// the same storage on another socket.
public final class DaemonProcess: @unchecked Sendable {
    public static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["DEFAULTSD_BINARY"] { return path }
        let besideTests = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("defaultsd").path
        if FileManager.default.isExecutableFile(atPath: besideTests) { return besideTests }
        return SharedData.repository.appendingPathComponent(".build/debug/defaultsd").path
    }()

    /// The machine id test daemons are given (in `<directory>/machine-id`), which names their
    /// by-host files, unless a test passes `--machine-id-file`.
    public static let machineID = "d5e1a7c0ffee4242b0a7d0c70123abcd"

    public let directory: String
    public let socketPath: String
    public let storagePath: String
    public let arguments: [String]
    public let environment: [String: String]
    /// The private home of this daemon and of the processes a test starts beside it.
    public let home: String
    private let usesDefaultPaths: Bool
    /// The namespace of a ``TestNetwork`` host the daemon runs in, if any.
    public let networkNamespace: String?
    /// What the daemon's command line is run through (a ``UnitSandbox``'s `commandPrefix`); empty
    /// to run it directly.
    public let commandPrefix: [String]
    /// What the daemon's environment was made from (the test runner's own, unless a test says otherwise).
    public let inheritedEnvironment: [String: String]
    public private(set) var process: Process
    private let log = LogBuffer()

    /// Starts a daemon in a new temporary directory, or on `reusing` another daemon's directory.
    /// `environment` is added to the isolated one; `inheriting` stands in for the test runner's
    /// environment (to show that the user's own setup does not leak in). With `defaultPaths` the
    /// daemon is given no socket or storage flags, as `make run` starts it, and so uses the
    /// default places in its private home.
    public init(
        arguments: [String] = [], environment: [String: String] = [:], reusing other: DaemonProcess? = nil,
        socketName: String = "socket", inheriting: [String: String] = ProcessInfo.processInfo.environment,
        defaultPaths: Bool = false, networkNamespace: String? = nil, commandPrefix: [String] = []
    ) throws {
        self.networkNamespace = networkNamespace
        self.commandPrefix = commandPrefix
        directory = other?.directory ?? FileManager.default.temporaryDirectory
            .appendingPathComponent("defaultsd-test-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        home = directory + "/home"
        socketPath = defaultPaths ? home + "/run/defaultsd/socket" : directory + "/" + socketName
        storagePath = defaultPaths ? home + "/.config" : directory + "/storage"
        self.usesDefaultPaths = defaultPaths
        self.arguments = arguments
        self.environment = environment
        inheritedEnvironment = inheriting
        ownsDirectory = other == nil
        process = Process()
        try launch()
    }

    /// The environment for a process that talks to this daemon (`defaults`, an example app, a
    /// shell running socat): the daemon's private home, and `DEFAULTSD_SOCKET` naming its socket.
    public var clientEnvironment: [String: String] {
        TestEnvironment.isolated(home: home, inheriting: inheritedEnvironment).merging(["DEFAULTSD_SOCKET": socketPath]) { $1 }
    }

    /// Starts the binary and returns once this process (not an earlier one of a restart) logs that
    /// it is listening.
    private func launch() throws {
        process = Process()
        // The machine's managed preferences (/etc/defaultsd/managed) are replaced by an empty
        // private directory, unless the test gives one.
        let managed = usesDefaultPaths || arguments.contains("--managed-dir") ? [] : ["--managed-dir", directory + "/managed"]
        // Likewise the machine's id, so by-host file names are known to the tests.
        var machineID: [String] = []
        if !usesDefaultPaths && !arguments.contains("--machine-id-file") {
            try (DaemonProcess.machineID + "\n").write(toFile: directory + "/machine-id", atomically: true, encoding: .utf8)
            machineID = ["--machine-id-file", directory + "/machine-id"]
        }
        let command = [DaemonProcess.binary] + (usesDefaultPaths ? [] : ["--socket", socketPath, "--storage-dir", storagePath])
            + managed + machineID + arguments
        let wrapped = commandPrefix + command
        let placed = networkNamespace.map { TestNetwork.inside($0, wrapped) } ?? wrapped
        process.executableURL = URL(fileURLWithPath: placed[0])
        process.arguments = Array(placed.dropFirst())
        process.environment = TestEnvironment.isolated(home: home, inheriting: inheritedEnvironment).merging(environment) { $1 }
        let stderr = Pipe()
        process.standardError = stderr
        process.standardOutput = FileHandle.nullDevice  // never hold the test runner's output open
        let ready = DispatchSemaphore(value: 0)
        let log = self.log
        // Only what this process wrote is searched: the log kept across restarts already says "listening".
        nonisolated(unsafe) var ownOutput = ""
        nonisolated(unsafe) var signalled = false
        stderr.fileHandleForReading.readabilityHandler = { handle in
            let chunk = handle.availableData
            if chunk.isEmpty {
                handle.readabilityHandler = nil
                if !signalled { ready.signal() }
                return
            }
            let text = String(decoding: chunk, as: UTF8.self)
            _ = log.append(text)
            guard !signalled else { return }
            ownOutput += text
            if ownOutput.contains(" listening") {
                signalled = true
                ownOutput = ""
                ready.signal()
            }
        }
        try process.run()
        guard ready.wait(timeout: .now() + 30) == .success, process.isRunning else {
            throw LineSocket.Failure(description: "defaultsd did not start: \(logText)")
        }
    }

    public var logText: String { log.text }

    /// How many times the daemon's log holds `text` so far.
    public func logOccurrences(of text: String) -> Int { log.occurrences(of: text) }

    /// Waits until the daemon's log contains `text` (`occurrences` times); false after `timeout` seconds.
    @discardableResult
    public func waitForLog(_ text: String, occurrences: Int = 1, timeout: Double = 10) -> Bool {
        log.wait(for: text, occurrences: occurrences, timeout: timeout)
    }

    public func send(_ signal: Int32) { Foundation.kill(process.processIdentifier, signal) }

    public func connect() throws -> LineSocket { try LineSocket(path: socketPath) }

    /// Sends SIGTERM and returns the exit status.
    @discardableResult
    public func terminate() -> Int32 {
        guard process.isRunning else { return process.terminationStatus }
        process.terminate()
        process.waitUntilExit()
        return process.terminationStatus
    }

    public func kill() {
        guard process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Stops this daemon and starts it again on the same directory.
    public func restart() throws {
        if process.isRunning, case let status = terminate(), status != 0 {
            throw LineSocket.Failure(description: "defaultsd exited with \(status): \(logText)")
        }
        try launch()
    }

    public var pid: Int32 { process.processIdentifier }

    /// The daemon's anonymous resident memory (its heap and stacks, `RssAnon`), in KiB, from
    /// /proc. Not `VmRSS`: the daemon releases its start-up code's mappings a second after it is
    /// ready, which would hide growth measured across that moment.
    public func anonymousResidentKiB() -> Int {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
    }

    /// The domain file as the daemon left it on disk.
    public func storedValues(_ domain: String) throws -> [String: PlistValue]? {
        let name = domain == "NSGlobalDomain" ? ".GlobalPreferences.plist" : domain + ".plist"
        guard let data = FileManager.default.contents(atPath: storagePath + "/" + name) else { return nil }
        return try PropertyListFile.decode(data)
    }

    /// Where this daemon keeps its own files (ledger, journal, rejected edits): the state
    /// directory beside the shared folder, the storage directory beside a folder of its own.
    public var statePath: String { usesDefaultPaths ? home + "/.local/state/defaultsd" : storagePath }

    public func storageListing() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: storagePath)) ?? []).sorted()
    }

    /// The change journal's folder in the daemon's state folder (docs/ADMINISTRATION.md).
    public var journalPath: String { statePath + "/" + Self.journalFolder }
    public static let journalFolder = ".defaultsd-journal"

    /// ``storageListing()`` without the change journal's folder, which a daemon whose state
    /// folder is its storage folder (as in most tests) keeps there beside the domains' files.
    public func storageListingWithoutJournal() -> [String] {
        storageListing().filter { $0 != Self.journalFolder }
    }

    /// Whether this instance removes the directory when released (false for one reusing another's).
    public var ownsDirectory = true

    deinit {
        kill()
        if ownsDirectory { try? FileManager.default.removeItem(atPath: directory) }
    }
}


extension DaemonProcess {
    /// Runs the binary to completion (for runs that are expected to end by themselves:
    /// `--print-config`, a refused configuration, a refused socket).
    /// `environment` replaces the whole environment; without it the run gets an isolated one
    /// (``TestEnvironment``) in a temporary home.
    public static func runToCompletion(_ arguments: [String], environment: [String: String]? = nil) throws -> FinishedRun {
        if let environment { return try run(arguments, environment: environment) }
        return try TestEnvironment.withTemporaryHome { try run(arguments, environment: $0) }
    }

    private static func run(_ arguments: [String], environment: [String: String]) throws -> FinishedRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.environment = environment
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        let log = LogBuffer()
        log.capture(errors.fileHandleForReading)
        try process.run()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return FinishedRun(status: process.terminationStatus, output: printed, errors: log.waitForEnd())
    }
}

