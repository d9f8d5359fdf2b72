import Glibc

/// What the kernel says a process is: its name and its executable, as the change journal names a
/// connection's writer. Read once, at connect: a process may change its name later, and its id
/// may be reused after it exits.
///
/// ```swift
/// PeerProcess(pid: peer.pid).command      // "firefox"
/// PeerProcess(pid: peer.pid).executable   // "/usr/lib/firefox/firefox"
/// ```
package struct PeerProcess: Sendable, Hashable {
    /// `/proc/<pid>/comm`: at most 15 bytes, as the kernel cuts it.
    package var command: String?
    /// `/proc/<pid>/exe`'s target; nil for another user's process, which the kernel does not show.
    package var executable: String?

    package init(pid: Int32) {
        guard pid > 0 else { return }
        command = Self.firstLine(of: "/proc/\(pid)/comm", maximumBytes: 64)
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/\(pid)/exe", &target, target.count - 1)
        if count > 0 {
            executable = String(decoding: target[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }

    /// The first line of a small kernel file; nil when it cannot be read. `/proc` files never
    /// block, but the read is bounded all the same.
    private static func firstLine(of path: String, maximumBytes: Int) -> String? {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: maximumBytes)
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        let line = buffer[..<count].prefix { $0 != UInt8(ascii: "\n") }
        return line.isEmpty ? nil : String(decoding: line, as: UTF8.self)
    }
}
