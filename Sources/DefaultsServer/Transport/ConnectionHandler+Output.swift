import DefaultsCore
import NIOCore

/// What the connection writes: its answers, in request order, and the events it is sent, kept in
/// its outbox while the socket is full.
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

    /// Answers one error line and ends the connection. The output side is closed at once; the input
    /// side is drained (and ignored) until the peer closes or a second passes, so a peer that is still
    /// sending its first request reads the error instead of failing on a broken pipe.
    func refuse(_ context: ChannelHandlerContext, _ error: DefaultsError) {
        let channel = context.channel
        let line = ByteBuffer(bytes: ResponseEncoding.encode(id: nil, .failure(error)))
        context.writeAndFlush(wrapOutboundOut(line)).assumeIsolated().whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
        refused = true
        accepted = false
    }

    // MARK: - Events

    /// Writes an event now, unless the connection still has answers to send: a connection that
    /// subscribes and writes reads the answer to its request before the event the request caused,
    /// and its answers leave only after the batch's events have gone to everyone else. The event
    /// then waits in the outbox, which ``writeAnswersAndEvents(_:)`` empties after the answers.
    func deliver(_ event: ChangeEvent, line: ByteBuffer) {
        guard let context else { return }
        if !outbox.hasEvents && canWriteEventNow(context) {
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        } else {
            outbox.keep(event)
        }
    }

    func deliverNotice(_ line: ByteBuffer, domain: DomainName) {
        guard let context else { return }
        if !outbox.hasNotices && canWriteEventNow(context) {
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        } else {
            outbox.keep(notice: line, domain: domain)
        }
    }

    private func canWriteEventNow(_ context: ChannelHandlerContext) -> Bool {
        context.channel.isWritable && replies.encodedBytes == 0
    }

    /// Sends the answers ready, then the events that waited behind them.
    func writeAnswersAndEvents(_ context: ChannelHandlerContext) {
        writePending(context, flush: true)
        drainOutbox(context)
    }

    func drainOutbox(_ context: ChannelHandlerContext) {
        while context.channel.isWritable, let line = outbox.next() {
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        }
    }
}
