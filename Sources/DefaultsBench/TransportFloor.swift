import DefaultsServer
import NIOCore
import NIOPosix

/// A line server that does no work: every `\n` it reads is answered `{"ok":true}`.
///
/// It is built from the same SwiftNIO parts as defaultsd's transport (one event loop, the same
/// child channel options, one inbound handler, one flushed write per read batch), so its round
/// trip is what SwiftNIO and the Swift runtime cost before defaultsd parses, stores or encodes
/// anything. The benchmark runs it as a third server, beside defaultsd and Redis, to show that
/// floor in the same run (`defaultsd-bench --serve-floor PATH` starts it by itself).
enum TransportFloor {
    static let answer = #"{"ok":true}"# + "\n"

    static func serve(path: String) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let channel = try ServerBootstrap(group: group)
            .defaultsdChannelOptions()
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FloorHandler())
                }
            }
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: true)
            .wait()
        try channel.closeFuture.wait()
    }
}

/// Answers each line of a read batch; the answers leave in one flushed buffer when the batch
/// ends. Owned by its channel's event loop.
private final class FloorHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private var lines = 0
    private var outbound: ByteBuffer?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // Counting newlines is enough: a line split across reads is answered when its end arrives.
        unwrapInboundIn(data).withUnsafeReadableBytes { bytes in
            for byte in bytes where byte == UInt8(ascii: "\n") { lines += 1 }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        guard lines > 0 else { return }
        var buffer = outbound ?? context.channel.allocator.buffer(capacity: 1024)
        outbound = nil  // the only reference again, so clearing and writing reuse the storage
        buffer.clear()
        for _ in 0..<lines { buffer.writeString(TransportFloor.answer) }
        lines = 0
        outbound = buffer
        context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event { context.close(promise: nil) }
    }
}
