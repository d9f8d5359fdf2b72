import DefaultsCore
import NIOCore
import NIOExtras
import NIOPosix

/// One plain connection to defaultsd, for programs that speak the protocol themselves
/// (docs/PROTOCOL.md) rather than through ``SharedUserDefaults``'s cache: the Settings app, tools.
/// Requests are answered in order; events (`didChange`, `bundleDefaultsChanged`) arrive on
/// ``events``, which finishes when the connection ends. There is no reconnection: a caller that
/// wants one connects again.
///
/// ```swift
/// let daemon = try await DaemonChannel.connect(socketPath: path)
/// let answer = try await daemon.request(.request(.get, ["domain": "com.example.app"]))
/// _ = try await daemon.request(.request(.subscribe, ["all": true]))
/// for await event in daemon.events { print(event["domain"] ?? .null) }
/// ```
///
/// The pipeline is the client library's own (NIOExtras' `LineBasedFrameDecoder`, the JSON
/// `MessageCodec`), with events split off and NIOExtras' `RequestResponseHandler` matching each
/// answer to the oldest request. Safe to use from any task.
public final class DaemonChannel: Sendable {
    /// Events as the daemon sent them, in order.
    public let events: AsyncStream<JSON>
    private let channel: Channel

    private init(channel: Channel, events: AsyncStream<JSON>) {
        self.channel = channel
        self.events = events
    }

    /// Connects to the daemon's socket. Throws when nothing listens there.
    public static func connect(
        socketPath: String, group: EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> DaemonChannel {
        try SocketTrust.checkDirectory(ofSocket: socketPath)
        let (events, continuation) = AsyncStream.makeStream(of: JSON.self, bufferingPolicy: .bufferingNewest(10_000))
        // Nothing is read, and no handler added, until the server is known to be the user's or root's.
        let channel = try await ClientBootstrap(group: group)
            .channelOption(ChannelOptions.autoRead, value: false)
            .connect(unixDomainSocketPath: socketPath).get()
        try await DaemonPeer.check(channel).flatMapThrowing {
            try channel.pipeline.syncOperations.addHandlers([
                ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: ConnectionLimits.maximumLineBytes),
                MessageCodec(),
                EventSplitter(continuation: continuation),
                RequestResponseHandler<[UInt8], JSON>(),
            ])
        }.get()
        try await channel.setOption(ChannelOptions.autoRead, value: true).get()
        return DaemonChannel(channel: channel, events: events)
    }

    /// The daemon did not answer a request within its timeout; the connection was closed.
    public struct TimedOut: Error, CustomStringConvertible {
        public let timeout: TimeAmount
        public var description: String { "defaultsd did not answer within \(timeout.nanoseconds / 1_000_000) ms" }
    }

    /// Sends one request and returns the daemon's answer, `{"ok":false,...}` included
    /// (`DefaultsError(answer:)` reads it). Throws when the connection ends first, and
    /// ``TimedOut`` when `timeout` passes first: answers come in order, so a late one could only
    /// be taken for the next request's, and the connection is closed.
    public func request(_ request: JSON, timeout: TimeAmount? = nil) async throws -> JSON {
        var writer = JSONWriter(capacity: 256)
        writer.json(request)
        var line = writer.bytes
        line.append(LineFraming.newline)
        let answer = channel.eventLoop.makePromise(of: JSON.self)
        if let timeout {
            let channel = self.channel
            let expiry = channel.eventLoop.scheduleTask(in: timeout) {
                answer.fail(TimedOut(timeout: timeout))
                channel.close(promise: nil)
            }
            answer.futureResult.whenComplete { _ in expiry.cancel() }
        }
        channel.writeAndFlush((line, answer), promise: nil)
        return try await answer.futureResult.get()
    }

    /// Closes the connection; pending requests fail and ``events`` finishes.
    public func close() {
        channel.close(promise: nil)
    }

    /// A future that completes when the connection has ended, for whatever reason.
    public var closeFuture: EventLoopFuture<Void> { channel.closeFuture }
}

/// Sends events to the stream and answers on to the request matcher; finishes the stream when
/// the connection ends.
private final class EventSplitter: ChannelInboundHandler {
    typealias InboundIn = DaemonMessage
    typealias InboundOut = JSON

    private let continuation: AsyncStream<JSON>.Continuation

    init(continuation: AsyncStream<JSON>.Continuation) { self.continuation = continuation }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .event(let json): continuation.yield(json)
        case .response(let json): context.fireChannelRead(wrapInboundOut(json))
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        continuation.finish()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A line that is not JSON leaves answers unmatched: the connection cannot go on.
        context.fireErrorCaught(error)
        context.close(promise: nil)
    }
}
