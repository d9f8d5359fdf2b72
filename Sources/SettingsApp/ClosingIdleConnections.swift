import HummingbirdCore
import Logging
import NIOCore

/// A server child channel that closes a connection nothing has been read from or written to for
/// `timeout`, from the moment it is accepted; the HTTP and WebSocket handling is `inner`'s.
///
/// Hummingbird's own idle timeout starts only once a first request has come (its WebSocket
/// upgrade channel adds it after the upgrade check), so a connection that never sends one would
/// be held for good. This puts NIO's `IdleStateHandler` in front of everything instead. The live
/// page's WebSocket stays open: the app pings it every 30 s, and the browser's answers are reads.
///
/// ```swift
/// HTTPServerBuilder { responder in
///     ClosingIdleConnections(inner: HTTP1Channel(responder: responder), timeout: .seconds(75))
/// }
/// ```
struct ClosingIdleConnections<Inner: ServerChildChannel>: ServerChildChannel {
    let inner: Inner
    let timeout: TimeAmount

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<Inner.Value> {
        channel.eventLoop.makeCompletedFuture {
            try channel.pipeline.syncOperations.addHandlers([IdleStateHandler(allTimeout: timeout), CloseWhenIdle()])
        }.flatMap { inner.setup(channel: channel, logger: logger) }
    }

    func handle(value: Inner.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }

    /// Closes the connection at the idle handler's event.
    private final class CloseWhenIdle: ChannelInboundHandler, RemovableChannelHandler {
        typealias InboundIn = NIOAny

        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if event is IdleStateHandler.IdleStateEvent {
                context.close(promise: nil)
            } else {
                context.fireUserInboundEventTriggered(event)
            }
        }
    }
}
