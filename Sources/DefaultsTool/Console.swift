import Foundation

/// Where `defaults` writes: standard output, and standard error in macOS's NSLog form.
public struct Console: Sendable {
    public var standardOutput: @Sendable (String) -> Void
    public var standardError: @Sendable (String) -> Void

    public static let process = Console(
        standardOutput: { text in FileHandle.standardOutput.write(Data(text.utf8)) },
        standardError: { text in FileHandle.standardError.write(Data(text.utf8)) })

    /// Output of `read` and `find`: encoded as macOS's printer does (`NonLossyASCII`).
    public func print(_ text: String) { standardOutput(NonLossyASCII.encode(text)) }

    /// Output written as it is (`export -`, JSON, help).
    public func printRaw(_ text: String) { standardOutput(text) }

    /// An error as macOS's `NSLog` writes it: `2026-11-21 10:00:00.250 defaults[4242:4242] message`,
    /// with a newline added unless the message ends with one.
    public func log(_ message: String) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var parts = tm()
        var seconds = now.tv_sec
        localtime_r(&seconds, &parts)
        let stamp = String(
            format: "%04d-%02d-%02d %02d:%02d:%02d.%03d", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), now.tv_nsec / 1_000_000)
        // defaults is single-threaded: its main thread's id is the process id on Linux.
        let line = "\(stamp) defaults[\(getpid()):\(getpid())] \(message)"
        standardError(line.hasSuffix("\n") ? line : line + "\n")
    }
}
