import DefaultsCore
import Foundation
import LineSocket

/// A server process started for the benchmark.
final class Server {
    let process: Process

    init(process: Process) { self.process = process }

    static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/sbin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// The path of a program the measurement cannot do without, or an error that names it.
    static func required(_ name: String) throws -> String {
        guard let path = which(name) else { throw LineSocket.Failure(description: "\(name) is not installed") }
        return path
    }

    /// Starts `binary` and waits until `readyWhen` appears on its stderr, or until `socket` accepts
    /// connections (for at most `within` seconds).
    static func start(_ binary: String, _ arguments: [String], readyWhen: String?, socket: String? = nil, within: Double = 10) throws -> Server {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let server = Server(process: process)
        if let readyWhen {
            var seen = ""
            while !seen.contains(readyWhen) {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { throw LineSocket.Failure(description: "\(binary) exited: \(seen)") }
                seen += String(decoding: chunk, as: UTF8.self)
            }
        } else if let socket {
            let deadline = LineSocket.now() + within
            while (try? LineSocket(path: socket)) == nil {
                if LineSocket.now() > deadline { throw LineSocket.Failure(description: "\(binary) did not listen on \(socket)") }
                usleep(10_000)
            }
        }
        // Keep draining stderr so the server never blocks on logging.
        errors.fileHandleForReading.readabilityHandler = { handle in
            if handle.availableData.isEmpty { handle.readabilityHandler = nil }
        }
        return server
    }

    /// Restricts every thread of the servers to `cpus`, and this process to `client` (`taskset` lists).
    static func pin(_ servers: [Server], cpus: String, client: String) throws {
        for (pid, list) in servers.map({ ($0.process.processIdentifier, cpus) }) + [(getpid(), client)] {
            let taskset = Process()
            taskset.executableURL = URL(fileURLWithPath: try required("taskset"))
            taskset.arguments = ["--all-tasks", "--cpu-list", "--pid", list, "\(pid)"]
            taskset.standardOutput = FileHandle.nullDevice
            try taskset.run()
            taskset.waitUntilExit()
            guard taskset.terminationStatus == 0 else {
                throw LineSocket.Failure(description: "taskset could not pin \(pid) to CPU \(list)")
            }
        }
    }

    /// Runs `binary` to its end and returns what it wrote to standard output; throws when it
    /// exits with another status than 0. `environment` nil: this process's; `quiet`: what it
    /// writes to standard error is dropped (callgrind_control's progress lines).
    @discardableResult
    static func run(
        _ binary: String, _ arguments: [String], environment: [String: String]? = nil, quiet: Bool = false
    ) throws -> String {
        let process = Process(), output = Pipe()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = output
        if quiet { process.standardError = FileHandle.nullDevice }
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw LineSocket.Failure(description: "\(binary) \(arguments.joined(separator: " ")) exited with \(process.terminationStatus)")
        }
        return String(decoding: data, as: UTF8.self)
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
