import DefaultsCore
import NIOCore

/// What the connection writes: its answers, in request order, and the event lines the notifier
/// gives it.
extension ConnectionHandler {
    /// Hands the encoded answers to the channel as one buffer; flushes it when asked to
    /// (one pass down the pipeline instead of a write and a flush).
    func writePending(_ context: ChannelHandlerContext, flush: Bool = false) {
        guard let buffer = replies.takeEncoded(allocator: context.channel.allocator) else {
            if flush { context.flush() }
            return
        }
        if flush {
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        } else {
            context.write(wrapOutboundOut(buffer), promise: nil)
        }
    }

    func closeIfFinished(_ context: ChannelHandlerContext) {
        guard inputClosed, !paused, !replies.isHoldingAnswers else { return }
        writePending(context)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Answers one error line and ends the connection, as a refusal at connect does.
    func refuse(_ context: ChannelHandlerContext, _ error: DefaultsError) {
        AdmissionHandler.refuse(context.channel, error)
        refused = true
        accepted = false
    }

    // MARK: - Events

    /// The notifier decides which events go out and when (``Notifier``); the connection only
    /// says whether a line written now would be the next its client reads.
    var canTakeEventNow: Bool {
        guard let context else { return false }
        return context.channel.isWritable && replies.encodedBytes == 0
    }

    func write(eventLine line: ByteBuffer) {
        context?.writeAndFlush(wrapOutboundOut(line), promise: nil)
    }

    /// Sends the answers ready, then the events that waited behind them.
    func writeAnswersAndEvents(_ context: ChannelHandlerContext) {
        writePending(context, flush: true)
        server.notifier.sendWaiting(to: self)
    }
}
