import Foundation

/// What a short-lived run of a program printed, and how it ended.
public struct FinishedRun: Sendable {
    public var status: Int32
    public var output: String
    public var errors: String

    public init(status: Int32, output: String, errors: String) {
        self.status = status
        self.output = output
        self.errors = errors
    }
}

extension FinishedRun {
    /// Runs any program to completion with its standard output and error in one text
    /// (`output`; `errors` stays empty), as a person running it in a terminal would read them.
    public static func run(
        _ executable: String, _ arguments: [String], environment: [String: String], in directory: String? = nil
    ) throws -> FinishedRun {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return FinishedRun(status: process.terminationStatus, output: text, errors: "")
    }
}

/// The daemon's stderr, appended from the pipe's reader thread.
public final class LogBuffer: @unchecked Sendable {
    public init() {}

    /// Collects everything written to `handle` (a pipe's reading end) until it closes.
    public func capture(_ handle: FileHandle) {
        handle.readabilityHandler = { [self] handle in
            let chunk = handle.availableData
            if chunk.isEmpty {
                handle.readabilityHandler = nil
                finish()
            } else {
                _ = append(String(decoding: chunk, as: UTF8.self))
            }
        }
    }
    private let condition = NSCondition()
    private var contents = ""

    private var ended = false

    private func finish() {
        condition.lock()
        ended = true
        condition.broadcast()
        condition.unlock()
    }

    public func append(_ chunk: String) -> String {
        condition.lock()
        defer { condition.unlock() }
        contents += chunk
        condition.broadcast()
        return contents
    }

    /// How many times `text` appears in what was captured so far.
    public func occurrences(of text: String) -> Int { LogBuffer.count(of: text, in: self.text) }

    private static func count(of text: String, in contents: String) -> Int {
        contents.components(separatedBy: text).count - 1
    }

    public var text: String {
        condition.lock()
        defer { condition.unlock() }
        return contents
    }

    /// Everything captured once the pipe has closed (after the process ended).
    public func waitForEnd(timeout: Double = 10) -> String {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !ended, condition.wait(until: deadline) {}
        return contents
    }

    public func wait(for text: String, occurrences: Int = 1, timeout: Double) -> Bool {
        wait(until: { LogBuffer.count(of: text, in: $0) >= occurrences }, timeout: timeout)
    }

    /// Waits until what was captured satisfies `condition`, woken by each chunk; false after `timeout`.
    public func wait(until condition: (String) -> Bool, timeout: Double) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        self.condition.lock()
        defer { self.condition.unlock() }
        while !condition(contents) {
            if !self.condition.wait(until: deadline) { return condition(contents) }
        }
        return true
    }
}
