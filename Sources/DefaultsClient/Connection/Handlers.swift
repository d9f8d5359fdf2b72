import DefaultsCore
import Glibc
import NIOCore

// The client's pipeline, one job per handler:
//
//   bytes ─▶ LineBasedFrameDecoder ─▶ MessageCodec ─▶ DaemonLink ─▶ ConnectionDriver
//   bytes ◀────────────── MessageCodec ◀── (request lines)
//
// All three run on the connection's event loop, the thread that owns ConnectionDriver. Lines are
// cut by NIOExtras' LineBasedFrameDecoder (`\n`, a `\r` before it dropped), bounded by
// `ConnectionLimits.maximumLineBytes`; a longer line, or a partial one when the daemon goes away,
// is an error that closes the connection, and the driver reconnects.

enum ConnectionLimits {
    /// A whole domain comes back in one `get` line: the daemon's 4 MiB default limit, JSON-escaped,
    /// fits well within this.
    static let maximumLineBytes = 64 << 20
}

/// A line from the daemon, parsed.
enum DaemonMessage {
    /// The answer to the oldest request still unanswered.
    case response(JSON)
    /// A `didChange` (or any future) event.
    case event(JSON)
}

/// JSON in both directions: parses each line, and writes each request line (already encoded by
/// `Requests`) to the socket.
final class MessageCodec: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = DaemonMessage
    typealias OutboundIn = [UInt8]
    typealias OutboundOut = ByteBuffer

    struct BadLine: Error, CustomStringConvertible {
        var description: String
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let line = unwrapInboundIn(data)
        guard line.readableBytes > 0 else { return }
        let (isEvent, parsed) = line.withUnsafeReadableBytes { raw in
            (EventName.isEvent(raw), Result { () throws(JSONParseError) -> JSON in try JSONParser.parse(raw) })
        }
        switch parsed {
        case .success(let json) where isEvent:
            context.fireChannelRead(wrapInboundOut(.event(json)))
        case .success(let json):
            context.fireChannelRead(wrapInboundOut(.response(json)))
        case .failure(let error):
            // Without a parseable answer, request and response order can no longer be matched.
            context.fireErrorCaught(BadLine(description: "the daemon sent a line that is not JSON: \(error)"))
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let bytes = unwrapOutboundIn(data)
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.write(wrapOutboundOut(buffer), promise: promise)
    }
}

/// Hands messages and the connection's end to the driver; closes the channel on any error.
final class DaemonLink: ChannelInboundHandler {
    typealias InboundIn = DaemonMessage

    private let driver: ConnectionDriver

    init(driver: ConnectionDriver) { self.driver = driver }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        driver.received(unwrapInboundIn(data), on: context.channel)
    }

    func channelInactive(context: ChannelHandlerContext) {
        driver.closed(context.channel)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        driver.logger.warning("connection to defaultsd failed", metadata: ["error": "\(error)"])
        context.close(promise: nil)
    }
}

/// The server end of a new connection, checked by ``SocketTrust`` before the first request;
/// a connection to a server of another user is closed and fails with `not_permitted`.
enum DaemonPeer {
    static func check(_ channel: Channel) -> EventLoopFuture<Void> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(DefaultsError(.notPermitted, "the daemon's socket does not say who serves it"))
        }
        let read: EventLoopFuture<PeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
        // A server that closed at once said nothing about itself: refused like any other.
        let credentials = read.map { Optional($0) }.recover { _ in nil }
        return credentials.flatMapThrowing { peer in
            do { try SocketTrust.checkServer(peer) } catch {
                channel.close(promise: nil)
                throw error
            }
        }
    }
}
