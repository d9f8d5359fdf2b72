import Foundation

/// A socket served by another user (uid 65534, through `setpriv` and `socat`), in a directory
/// only root can write once it listens: what a client must refuse to talk to. Needs root.
public final class ForeignServer {
    public let directory: String
    public var socketPath: String { directory + "/socket" }
    private let process = Process()

    public init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("foreign-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        chmod(directory, 0o777)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = [
            "--reuid=65534", "--regid=65534", "--clear-groups", "socat",
            // Each connection gets a forged answer, then stays open until the client closes it.
            "UNIX-LISTEN:\(directory)/socket,fork", #"SYSTEM:echo '{"ok":true,"value":"forged","generation":99}'; cat >/dev/null"#,
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date(timeIntervalSinceNow: 5)
        while !FileManager.default.fileExists(atPath: socketPath) {
            guard Date() < deadline else { throw CocoaError(.fileNoSuchFile) }
            usleep(10_000)
        }
        chmod(directory, 0o755)
    }

    deinit {
        // SIGKILL: socat inherits the test runner's blocked signals, SIGTERM among them.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
