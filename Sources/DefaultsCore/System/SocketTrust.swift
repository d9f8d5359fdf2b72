import FoundationEssentials
import Glibc

/// The peer of a Unix socket as the kernel reports it (`SO_PEERCRED`).
///
/// Laid out as Linux's `struct ucred`, which Swift's Glibc module does not export.
public struct PeerCredentials: Sendable, Hashable {
    public var pid: Int32
    public var uid: UInt32
    public var gid: UInt32

    public init(pid: Int32, uid: UInt32, gid: UInt32) {
        self.pid = pid
        self.uid = uid
        self.gid = gid
    }

    /// The credentials of the peer of a connected socket descriptor; nil when there are none.
    public static func of(descriptor: Int32) -> PeerCredentials? {
        var credentials = PeerCredentials(pid: 0, uid: 0, gid: 0)
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0 else { return nil }
        return credentials
    }
}

/// Whom a client of the daemon talks to: the one rule that `defaults`, the client library, the
/// Settings app and `LineSocket` apply before their first request. Without it, another local
/// user who made the socket's directory first (the `/tmp/defaultsd-<uid>` fallback when there
/// is no `XDG_RUNTIME_DIR`) would receive every write and could answer with forged values.
///
/// - The socket's directory is owned by this user or by root, and neither its group nor others
///   may write to it (so nobody else can put a socket there); a link to it is judged by its
///   target, and must itself belong to this user or root.
/// - The server's uid is this user's or root's (root runs the system-wide instance).
///
/// ```swift
/// try SocketTrust.checkDirectory(ofSocket: path)         // before connecting
/// try SocketTrust.checkServer(PeerCredentials.of(descriptor: fd))  // once connected
/// ```
public enum SocketTrust {
    public static func checkDirectory(ofSocket path: String, uid: UInt32 = getuid()) throws(DefaultsError) {
        let directory = SystemText.parentDirectory(of: path)
        var info = stat()
        guard lstat(directory, &info) == 0 else {
            // No directory: nothing listens there, and the connection attempt says so.
            if errno == ENOENT { return }
            throw DefaultsError(.notPermitted, "cannot inspect the socket directory \(directory): \(SystemText.errorMessage(errno))")
        }
        if info.st_mode & S_IFMT == S_IFLNK {
            guard trusted(owner: info.st_uid, uid: uid) else { throw refusal(directory, "is a link owned by uid \(info.st_uid)") }
            guard stat(directory, &info) == 0 else { return }
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw refusal(directory, "is not a directory") }
        guard trusted(owner: info.st_uid, uid: uid) else { throw refusal(directory, "is owned by uid \(info.st_uid)") }
        guard info.st_mode & 0o022 == 0 else {
            throw refusal(directory, "can be written by others (mode \(String(info.st_mode & 0o777, radix: 8)))")
        }
    }

    public static func checkServer(_ peer: PeerCredentials?, uid: UInt32 = getuid()) throws(DefaultsError) {
        guard let peer else { throw DefaultsError(.notPermitted, "the daemon's socket does not say who serves it") }
        guard trusted(owner: peer.uid, uid: uid) else {
            throw DefaultsError(
                .notPermitted,
                "the process serving the daemon's socket runs as uid \(peer.uid) (pid \(peer.pid)), neither you nor root; refusing to talk to it")
        }
    }

    private static func trusted(owner: UInt32, uid: UInt32) -> Bool { owner == uid || owner == 0 }

    private static func refusal(_ directory: String, _ problem: String) -> DefaultsError {
        DefaultsError(
            .notPermitted,
            "the daemon's socket directory \(directory) \(problem), so another user could stand in for defaultsd; refusing to connect")
    }
}
