import Foundation

/// Stops what a test started in `directory` when the test's process ends, however it ends.
///
/// A `deinit` does not run when the process is killed (SIGKILL, a crash, a timeout's kill), and
/// Linux ties `PR_SET_PDEATHSIG` to the thread that started a child, which in a Swift test may
/// end first. So a watcher process holds the read end of a pipe whose only write end this
/// process keeps: when this process ends, however it ends, the pipe closes, and the watcher kills
/// every process whose command line names `directory` (the etcd members started on their data
/// directories inside it, frozen ones too) and removes the directory.
///
/// ```swift
/// let leash = try ProcessLeash(directory: directory)   // before starting anything there
/// leash.release()   // an orderly end: whatever is still running there is stopped now
/// ```
public final class ProcessLeash: @unchecked Sendable {
    // Sendable: both are set once in init; `FileHandle.closeFile` may be called from any thread.
    private let watcher: Process
    private let writeEnd: FileHandle

    public init(directory: String) throws {
        let pipe = Pipe()
        let watcher = Process()
        watcher.executableURL = URL(fileURLWithPath: "/bin/sh")
        // pgrep leaves itself out; the watcher, whose own command line names the directory, skips $$.
        watcher.arguments = [
            "-c", #"read -r _; for pid in $(pgrep -f -- "$1"); do [ "$pid" = $$ ] || kill -KILL "$pid"; done; rm -rf -- "$1""#,
            "process-leash", directory,
        ]
        watcher.standardInput = pipe
        watcher.standardOutput = FileHandle.nullDevice
        watcher.standardError = FileHandle.nullDevice
        try watcher.run()
        try pipe.fileHandleForReading.close()
        self.watcher = watcher
        self.writeEnd = pipe.fileHandleForWriting
    }

    /// Lets the watcher act now: what still runs in the directory is killed, the directory removed.
    public func release() {
        try? writeEnd.close()
        watcher.waitUntilExit()
    }

    deinit { release() }
}
