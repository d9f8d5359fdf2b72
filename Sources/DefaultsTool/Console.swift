import DefaultsCore
import FoundationEssentials
import Glibc

/// Where `defaults` writes: standard output, and standard error in macOS's NSLog form.
public struct Console: Sendable {
    public var standardOutput: @Sendable (String) -> Void
    public var standardError: @Sendable (String) -> Void

    public static let process = Console(
        standardOutput: { text in FileDescriptorIO.write(text, to: STDOUT_FILENO) },
        standardError: { text in FileDescriptorIO.write(text, to: STDERR_FILENO) })

    /// Output of `read` and `find`: encoded as macOS's printer does (`NonLossyASCII`).
    public func print(_ text: String) { standardOutput(NonLossyASCII.encode(text)) }

    /// Output written as it is (`export -`, JSON, help).
    public func printRaw(_ text: String) { standardOutput(text) }

    /// An error as macOS's `NSLog` writes it: `2026-11-21 10:00:00.250 defaults[4242:4242] message`,
    /// with a newline added unless the message ends with one.
    public func log(_ message: String) {
        let stamp = LocalTime.format(Date(), milliseconds: true)
        // defaults is single-threaded: its main thread's id is the process id on Linux.
        let line = "\(stamp) defaults[\(getpid()):\(getpid())] \(message)"
        standardError(line.hasSuffix("\n") ? line : line + "\n")
    }
}
