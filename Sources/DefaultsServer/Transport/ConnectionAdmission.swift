import DefaultsCore
import NIOCore

/// Whether a new connection is served: its peer must be the daemon's own user (or root), the
/// daemon must not be at its connection limit, and it must not be shutting down.
///
/// A value made for each connection by its `ConnectionHandler`, on the state-owning loop, and
/// asked once, when the peer's credentials are known.
struct ConnectionAdmission {
    let daemonUID: UInt32
    let maximumConnections: Int

    /// The refusal to answer, or nil to serve the connection. `openConnections` counts this one.
    func refusal(peer: PeerCredentials?, openConnections: Int, isStopping: Bool) -> DefaultsError? {
        guard let peer else { return DefaultsError(.notPermitted, "cannot read the peer's credentials") }
        if peer.uid != daemonUID && peer.uid != 0 {
            return DefaultsError(.notPermitted, "this defaultsd serves uid \(daemonUID) only")
        }
        if openConnections > maximumConnections {
            return DefaultsError(.tooManyConnections, "defaultsd serves at most \(maximumConnections) connections")
        }
        if isStopping { return DefaultsError(.shuttingDown, "defaultsd is shutting down") }
        return nil
    }
}

/// How a connection learns who is at the other end: `SO_PEERCRED` on a real socket; tests of
/// the handler on an `EmbeddedChannel` give a peer of their choosing.
typealias PeerReader = (Channel) -> EventLoopFuture<PeerCredentials>
