import FoundationEssentials
import Glibc
import NIOCore

/// The peer of a Unix socket as the kernel reports it (`SO_PEERCRED`).
///
/// Laid out as Linux's `struct ucred`, which Swift's Glibc module does not export.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0

    /// Reads the credentials of a connected channel; completes at once on the channel's loop.
    static func of(_ channel: Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
    }
}
