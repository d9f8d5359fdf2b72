import DefaultsCore
import NIOCore

/// Decides once, at connect, whether a connection is served (``ConnectionAdmission``), and counts
/// the connections open. A connection served is announced down the pipeline with ``Admitted``;
/// one refused is answered with one error line and closed, and nothing it sends is read.
///
/// One per connection, on the state-owning loop, first in the pipeline.
final class AdmissionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// The event that tells the rest of the pipeline the connection is served, and whose it is.
    struct Admitted {
        let peer: PeerCredentials
    }

    private let server: ServerContext
    private let readPeer: PeerReader
    private var admitted = false
    private var refused = false

    init(server: ServerContext, readPeer: @escaping PeerReader = PeerCredentials.of) {
        self.server = server
        self.readPeer = readPeer
    }

    func channelActive(context: ChannelHandlerContext) {
        server.connectionCount += 1
        let admission = ConnectionAdmission(daemonUID: server.daemonUID, maximumConnections: server.connectionLimit)
        context.fireChannelActive()
        readPeer(context.channel).assumeIsolated().whenComplete { [self] result in
            let peer = try? result.get()
            if let refusal = admission.refusal(peer: peer, openConnections: server.connectionCount, isStopping: server.isStopping) {
                if refusal.code == .notPermitted, let peer {
                    server.logger.warning("refused a connection from another user", metadata: ["uid": "\(peer.uid)"])
                }
                refused = true
                AdmissionHandler.refuse(context.channel, refusal)
            } else if let peer {
                admitted = true
                context.fireUserInboundEventTriggered(Admitted(peer: peer))
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        server.connectionCount -= 1
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard admitted else { return }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if refused, case ChannelEvent.inputClosed = event { return context.close(promise: nil) }
        context.fireUserInboundEventTriggered(event)
    }

    /// Answers one error line and ends the connection. The output side is closed at once; the
    /// input side is drained (and ignored) until the peer closes or a second passes, so a peer that
    /// is still sending its first request reads the error instead of failing on a broken pipe.
    static func refuse(_ channel: Channel, _ error: DefaultsError) {
        let line = ByteBuffer(bytes: ResponseEncoding.encode(id: nil, .failure(error)))
        channel.writeAndFlush(line).assumeIsolated().whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
    }
}
