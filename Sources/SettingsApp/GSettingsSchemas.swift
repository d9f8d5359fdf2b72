import DefaultsCore
import Foundation

/// The GSettings schema of a domain that GSettings programs keep in defaultsd, as
/// `defaultsd-schema` reads it through GIO (c/tools/schema.c): what the page shows of each key,
/// and the check of a value against its type and range before it is written.
///
/// A value: the path of the tool, found once (``HelperProgram``); without it, no domain has a
/// schema. Each call runs the tool, bounded by ``timeout``.
struct GSettingsSchemas: Sendable {
    let tool: String?
    /// The tool reads a few local files; a tool that takes longer is stopped.
    static let timeout: TimeInterval = 5

    /// The schema, as `defaultsd-schema describe` prints it; nil when the domain has none.
    func describe(_ domain: String) async -> JSON? {
        guard let (status, output, _) = await run(["describe", domain]), status == 0 else { return nil }
        return try? JSONParser.parse(Array(output.utf8))
    }

    /// Nil when `value` (wire JSON) fits the key, or the domain has no schema (without the tool,
    /// none has); else why it is not written, for the person. A check that could not be made
    /// (the tool killed, stopped at ``timeout``, or answering what it never answers) refuses
    /// the value: an unchecked value is the one a GSettings program would read as its default.
    func refusal(of value: JSON, for key: String, in domain: String) async -> String? {
        guard tool != nil else { return nil }
        var writer = JSONWriter()
        writer.json(value)
        let text = String(decoding: writer.bytes, as: UTF8.self)
        guard let (status, _, errors) = await run(["check", domain, key, text]) else {
            return "\(key) could not be checked against its GSettings schema (defaultsd-schema could not be run), so it was not written"
        }
        switch status {
        case 0, 3: return nil  // 3: no schema for the domain; the plain editor then writes any value.
        case 1: return errors.trimmingCharacters(in: .whitespacesAndNewlines)
        default:
            return "\(key) could not be checked against its GSettings schema (defaultsd-schema ended with status \(status), or was stopped after \(Int(Self.timeout)) s), so it was not written"
        }
    }

    /// The tool's exit status and output; nil when it cannot be run or does not finish in time.
    private func run(_ arguments: [String]) async -> (Int32, String, String)? {
        guard let tool else { return nil }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        let collected = Collected()
        output.fileHandleForReading.readabilityHandler = { collected.append($0.availableData, error: false) }
        errors.fileHandleForReading.readabilityHandler = { collected.append($0.availableData, error: true) }
        return await withCheckedContinuation { continuation in
            process.terminationHandler = { process in
                output.fileHandleForReading.readabilityHandler = nil
                errors.fileHandleForReading.readabilityHandler = nil
                collected.append(output.fileHandleForReading.readDataToEndOfFile(), error: false)
                collected.append(errors.fileHandleForReading.readDataToEndOfFile(), error: true)
                let (out, err) = collected.texts
                continuation.resume(returning: (process.terminationStatus, out, err))
            }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(returning: nil)
                return
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + Self.timeout) { [process] in
                if process.isRunning { process.terminate() }
            }
        }
    }

    /// What the tool wrote, gathered from the pipes' handlers.
    private final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var output = Data()
        private var errors = Data()

        func append(_ data: Data, error: Bool) {
            lock.lock()
            defer { lock.unlock() }
            if error { errors.append(data) } else { output.append(data) }
        }

        var texts: (String, String) {
            lock.lock()
            defer { lock.unlock() }
            return (String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self))
        }
    }
}
