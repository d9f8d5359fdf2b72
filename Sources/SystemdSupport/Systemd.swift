import CSystemd
import FoundationEssentials
import Glibc

/// The daemon's link to systemd, through libsystemd: readiness and status notifications,
/// socket activation and the watchdog. The only code in the project that imports C.
///
/// Every call is harmless without systemd: with no `NOTIFY_SOCKET` notifications are dropped,
/// with no `LISTEN_FDS` there are no sockets to adopt, with no `WATCHDOG_USEC` no watchdog.
///
/// ```swift
/// Systemd.notify("READY=1", "STATUS=serving")
/// if let fd = Systemd.listeningSockets().first { /* adopt it */ }
/// ```
public enum Systemd {
    /// Sends state lines (`READY=1`, `STATUS=...`, `WATCHDOG=1`, ...) in one datagram; false when
    /// no service manager listens (`sd_notify` itself checks `NOTIFY_SOCKET`).
    @discardableResult
    public static func notify(_ lines: String...) -> Bool {
        sd_notify(0, lines.joined(separator: "\n")) > 0
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

    /// The file descriptors passed by socket activation (`LISTEN_FDS`, checked against `LISTEN_PID`).
    /// The variables are removed from the environment, so children do not inherit them.
    public static func listeningSockets() -> [Int32] {
        let count = sd_listen_fds(1)
        guard count > 0 else { return [] }
        return (0..<count).map { SD_LISTEN_FDS_START + $0 }
    }

    /// True when `fd` is a listening Unix stream socket.
    public static func isListeningUnixStreamSocket(_ fd: Int32) -> Bool {
        sd_is_socket_unix(fd, Int32(SOCK_STREAM.rawValue), 1, nil, 0) > 0
    }

    /// The watchdog interval when systemd enabled it for this process (`WATCHDOG_USEC`, `WATCHDOG_PID`).
    public static func watchdogInterval() -> Duration? {
        var microseconds: UInt64 = 0
        guard sd_watchdog_enabled(0, &microseconds) > 0, microseconds > 0 else { return nil }
        return .microseconds(Int64(microseconds))
    }
}
