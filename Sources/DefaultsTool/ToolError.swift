/// How a `defaults` command ends when it does not succeed, with macOS's exit codes.
public enum ToolError: Error, Equatable {
    /// The arguments do not fit the syntax: the usage text on standard output, exit 255.
    case usage
    /// As ``usage``, where macOS prints the usage text alone: the usage text on standard output,
    /// exit 255, and one line on standard error (NSLog-style) that names the problem.
    case misuse(String)
    /// The operation failed: the message on standard error (with the NSLog-style prefix), exit 1.
    case failure(String)
    /// The daemon cannot be reached: one plain line on standard error, exit 1.
    case daemonUnavailable(String)
}
