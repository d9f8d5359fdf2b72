import Glibc

/// The daemon's link to systemd: readiness and status notifications, socket activation and the
/// watchdog, spoken directly over the environment variables and the datagram socket that systemd
/// passes in.
///
/// Written here rather than linked from libsystemd because Debian ships libsystemd as a shared
/// library only, and one shared library keeps the whole daemon dynamic: libc, libstdc++ and
/// libsystemd's own seven libraries then stay mapped beside the executable, about 4 MiB of the
/// resident memory budget (docs/PERFORMANCE.md, "Where the memory goes"). The three interfaces
/// used are the ones systemd documents as stable and meant to be reimplemented (sd_notify(3)
/// "NOTES", sd_listen_fds(3), sd_watchdog_enabled(3)); the tests check them against the real
/// `systemd-socket-activate` and a real `NOTIFY_SOCKET`.
///
/// Every call is harmless without systemd: with no `NOTIFY_SOCKET` notifications are dropped,
/// with no `LISTEN_FDS` there are no sockets to adopt, with no `WATCHDOG_USEC` no watchdog.
///
/// ```swift
/// Systemd.notify("READY=1", "STATUS=serving")
/// if let fd = Systemd.listeningSockets().first { /* adopt it */ }
/// ```
public enum Systemd {
    /// The first file descriptor passed by socket activation (`SD_LISTEN_FDS_START`).
    public static let firstListeningDescriptor: Int32 = 3

    /// Sends state lines (`READY=1`, `STATUS=...`, `WATCHDOG=1`, ...) in one datagram; false when
    /// no service manager listens or the datagram could not be sent.
    @discardableResult
    public static func notify(_ lines: String...) -> Bool {
        guard let target = getenv("NOTIFY_SOCKET").map({ String(cString: $0) }),
              var address = NotifyAddress(target) else { return false }
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        let message = Array(lines.joined(separator: "\n").utf8)
        let sent = message.withUnsafeBytes { bytes in
            withUnsafePointer(to: &address.storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL), $0, address.length)
                }
            }
        }
        return sent == message.count
    }

    /// True when a service manager listens for notifications (`NOTIFY_SOCKET` is set).
    public static var isNotifying: Bool { getenv("NOTIFY_SOCKET") != nil }

    /// `RELOADING=1` with the `MONOTONIC_USEC` that systemd 253+ expects, then whatever follows.
    public static func notifyReloading() {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let microseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        notify("RELOADING=1", "MONOTONIC_USEC=\(microseconds)")
    }

    /// The file descriptors passed by socket activation: `LISTEN_FDS` of them from 3 on, when
    /// `LISTEN_PID` names this process. They are marked close-on-exec, and the variables are
    /// removed from the environment, so children inherit neither.
    public static func listeningSockets() -> [Int32] {
        defer {
            unsetenv("LISTEN_PID")
            unsetenv("LISTEN_FDS")
            unsetenv("LISTEN_FDNAMES")
        }
        guard let pid = environmentInteger("LISTEN_PID"), pid == Int(getpid()),
              let count = environmentInteger("LISTEN_FDS"), count > 0 else { return [] }
        let descriptors = (0..<Int32(count)).map { firstListeningDescriptor + $0 }
        for fd in descriptors {
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0 { _ = fcntl(fd, F_SETFD, flags | FD_CLOEXEC) }
        }
        return descriptors
    }

    /// True when `fd` is a listening Unix stream socket.
    public static func isListeningUnixStreamSocket(_ fd: Int32) -> Bool {
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFSOCK else { return false }
        guard socketOption(fd, SO_TYPE) == Int32(SOCK_STREAM.rawValue),
              socketOption(fd, SO_ACCEPTCONN) == 1 else { return false }
        var address = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return named == 0 && Int32(address.ss_family) == AF_UNIX
    }

    /// The watchdog interval when systemd enabled it for this process: `WATCHDOG_USEC`, and
    /// `WATCHDOG_PID`, when set, naming this process.
    public static func watchdogInterval() -> Duration? {
        guard let microseconds = environmentInteger("WATCHDOG_USEC"), microseconds > 0 else { return nil }
        if getenv("WATCHDOG_PID") != nil {
            guard environmentInteger("WATCHDOG_PID") == Int(getpid()) else { return nil }
        }
        return .microseconds(Int64(microseconds))
    }

    private static func environmentInteger(_ name: String) -> Int? {
        getenv(name).flatMap { Int(String(cString: $0)) }
    }

    private static func socketOption(_ fd: Int32, _ option: Int32) -> Int32? {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, option, &value, &length) == 0 ? value : nil
    }
}

/// `NOTIFY_SOCKET`'s address: an absolute path, or `@name` for the abstract namespace. Other
/// forms (systemd's `vsock:` for virtual machines) are not for a per-user daemon and are ignored.
struct NotifyAddress {
    var storage = sockaddr_un()
    let length: socklen_t

    init?(_ text: String) {
        var bytes = Array(text.utf8)
        guard let first = bytes.first, first == UInt8(ascii: "/") || first == UInt8(ascii: "@") else { return nil }
        let capacity = MemoryLayout.size(ofValue: storage.sun_path)
        // A path needs its terminating NUL; an abstract name is its bytes exactly.
        guard bytes.count < capacity || (first == UInt8(ascii: "@") && bytes.count <= capacity) else { return nil }
        if first == UInt8(ascii: "@") { bytes[0] = 0 }
        storage.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &storage.sun_path) { $0.copyBytes(from: bytes) }
        // `sun_path` is a stored property of a C struct, which always has an offset.
        let pathOffset = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)!
        length = socklen_t(pathOffset + bytes.count + (first == UInt8(ascii: "/") ? 1 : 0))
    }
}
