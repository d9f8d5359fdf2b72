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
/// - Nobody but this user and root can change the socket's directory, nor any folder above it
///   (``PathTrust/yoursOrRoot(uid:)``), so nobody else can put a socket there.
/// - The server's uid is this user's or root's (root runs the system-wide instance).
///
/// ```swift
/// try SocketTrust.checkDirectory(ofSocket: path)         // before connecting
/// try SocketTrust.checkServer(PeerCredentials.of(descriptor: fd))  // once connected
/// ```
public enum SocketTrust {
    public static func checkDirectory(ofSocket path: String, uid: UInt32 = getuid()) throws(DefaultsError) {
        if let problem = directoryProblem(ofSocket: path, uid: uid) {
            throw DefaultsError(
                .notPermitted,
                "the daemon's socket directory \(problem.component) is not safe: \(problem), so another user could stand in for defaultsd; refusing to connect")
        }
    }

    /// What makes the socket's directory unsafe; nil when it is safe, or missing (nothing listens
    /// there then). The daemon refuses to listen where a client would refuse to connect.
    public static func directoryProblem(ofSocket path: String, uid: UInt32 = getuid()) -> PathTrust.Problem? {
        // A relative path's directory may be the current one, which is checked like any other.
        let parent = SystemText.parentDirectory(of: path)
        let directory = parent.isEmpty ? "." : parent
        var info = stat()
        if lstat(directory, &info) != 0 && errno == ENOENT { return nil }
        if let problem = PathTrust.yoursOrRoot(uid: uid).problem(with: directory) { return problem }
        guard SystemText.isDirectory(directory) else { return PathTrust.Problem(component: directory, reason: "is not a directory") }
        return nil
    }

    public static func checkServer(_ peer: PeerCredentials?, uid: UInt32 = getuid()) throws(DefaultsError) {
        guard let peer else { throw DefaultsError(.notPermitted, "the daemon's socket does not say who serves it") }
        guard PathTrust.yoursOrRoot(uid: uid).acceptsOwner(peer.uid) else {
            throw DefaultsError(
                .notPermitted,
                "the process serving the daemon's socket runs as uid \(peer.uid) (pid \(peer.pid)), neither you nor root; refusing to talk to it")
        }
    }

}
