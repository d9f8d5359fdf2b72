import Foundation

/// Reads lines from a pipe with a deadline (a child's output), for tests that wait on what a
/// process prints.
public final class LineReader: @unchecked Sendable {
    // @unchecked Sendable: `buffer` is touched only under `condition`.
    private let condition = NSCondition()
    private var buffer = ""

    public init(_ handle: FileHandle) {
        handle.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            guard let self else { return }
            if chunk.isEmpty { handle.readabilityHandler = nil }
            self.condition.lock()
            self.buffer += String(decoding: chunk, as: UTF8.self)
            self.condition.broadcast()
            self.condition.unlock()
        }
    }

    /// The next whole line, or nil when none comes within `timeout` seconds.
    public func next(timeout: Double) -> String? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let newline = buffer.firstIndex(of: "\n") {
                let line = String(buffer[..<newline])
                buffer.removeSubrange(...newline)
                return line
            }
            if !condition.wait(until: deadline) { return nil }
        }
    }
}
