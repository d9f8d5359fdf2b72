import DefaultsCore
import NIOCore

/// One connection's requests: runs each line as a request and writes the answers in order.
///
/// Runs on the store's event loop (every connection is registered on it), so it can call the
/// store directly. It comes after ``AdmissionHandler``, which decides whether the connection is
/// served. The parts it owns, each a type of its own: ``LineFrameDecoder`` cuts the bytes read
/// into lines; ``RequestDecoder`` and ``ResponseEncoding`` turn them into requests and answers;
/// ``ReplyQueue`` keeps the answers in request order behind one that waits (`synchronize`). The
/// events it is sent are the ``Notifier``'s to decide; the connection only writes them
/// (``EventSink``).
///
/// The answers of one read batch leave as one flushed buffer when the batch ends (or the input
/// ends, or an answer that waited completes), right after the batch's events are delivered.
/// Memory per connection is bounded, as Redis's `client-output-buffer-limit` bounds it: once the
/// answers encoded reach `maximumPendingReplyBytes` they are handed to the socket, and while the
/// socket is not writable (or ``BufferSizes/mostHeldAnswers`` wait behind a `synchronize`) the
/// connection's requests wait, unread, until the client reads. Every request is still answered,
/// in order; other connections are served meanwhile. A line left unfinished, with no line
/// completed, for `unfinishedLineTimeout` ends the connection with `line_timed_out`, so stalled
/// partial lines cannot hold memory forever; a connection with no partial line (a subscriber)
/// may stay idle as long as it likes.
final class ConnectionHandler: ChannelInboundHandler, EventSink {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    let server: ServerContext
    private let session: Session
    var context: ChannelHandlerContext?
    var replies = ReplyQueue()
    private var lines: LineFrameDecoder
    /// The members of the request being run, kept between requests for their storage.
    private var members = JSONMembers()
    var inputClosed = false
    /// True between the first line of a read batch and its end, while the notifier holds
    /// the batch's events.
    private var inBatch = false
    /// Set when the channel went inactive: lines still in the framer are not run.
    var closed = false
    var accepted = false
    var refused = false
    /// True while this connection's requests wait for its client to read its answers; the lines
    /// already read stay in `lines`, and nothing more is read.
    var paused = false
    private let maximumPendingReplyBytes: Int
    private let unfinishedLineTimeout: TimeAmount
    /// Armed while a partial line is held; see ``armUnfinishedLineTimer(_:)``.
    private var unfinishedLineTimer: Scheduled<Void>?
    /// Lines run so far: a timer that fires after one more has completed sees progress.
    private var linesRun = 0

    var sinkID: UInt64 { session.id }

    init(server: ServerContext) {
        self.server = server
        let id = server.makeConnectionID()
        self.session = Session(id: id, origin: Origin(pid: 0, uid: 0, connection: id))
        self.lines = LineFrameDecoder(maximumLineBytes: server.configuration.maximumLineBytes)
        self.maximumPendingReplyBytes = server.configuration.maximumPendingReplyBytes
        self.unfinishedLineTimeout = server.configuration.unfinishedLineTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        endBatch()
        self.context = nil
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        unfinishedLineTimer?.cancel()
        unfinishedLineTimer = nil
        // Unsubscribed first, so the events of the batch that ends here skip this connection.
        server.notifier.unsubscribeFromEverything(self)
        endBatch()
        server.channels[session.id] = nil
        server.forgetRegistrations(of: session.id, for: session.publishedDomains)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard accepted, !closed else { return }
        lines.receive(unwrapInboundIn(data))
        runLines(context)
    }

    /// Runs the lines received, in order, until none is left or the client must read first.
    private func runLines(_ context: ChannelHandlerContext) {
        while !closed, !paused, let frame = lines.next() {
            linesRun &+= 1
            run(frame)
            if replies.encodedBytes >= maximumPendingReplyBytes { writePending(context, flush: true) }
            if !context.channel.isWritable || replies.heldCount >= BufferSizes.mostHeldAnswers { pause(context) }
        }
    }

    /// Stops running and reading this connection's requests until ``resume(_:)``.
    private func pause(_ context: ChannelHandlerContext) {
        paused = true
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
    }

    /// Runs the requests that waited, once the client has read and fewer answers are held, then
    /// reads again.
    private func resume(_ context: ChannelHandlerContext) {
        guard paused, !closed, context.channel.isWritable, replies.heldCount < BufferSizes.mostHeldAnswers else { return }
        paused = false
        runLines(context)
        endBatch()
        writeAnswersAndEvents(context)
        guard !paused else { return }
        if inputClosed {
            finishInput(context)
        } else {
            context.channel.setOption(ChannelOptions.autoRead, value: true).whenFailure { _ in }
        }
    }

    private func run(_ frame: LineFrameDecoder.Frame) {
        let line: ByteBuffer
        switch frame {
        case .line(let bytes):
            if RequestDecoder.isBlank(bytes) { return }
            line = bytes
        case .tooLong:
            replies.answer(id: nil, .failure(DefaultsError(
                .lineTooLong, "line longer than \(lines.maximumLineBytes) bytes; it was discarded")))
            return
        }
        if !inBatch {
            inBatch = true
            server.notifier.holdDelivery()
        }
        switch RequestDecoder.decode(line, reusing: &members) {
        case .invalid(let id, let error):
            replies.answer(id: id, .failure(error))
        case .request(let request):
            switch RequestDispatcher(server: server).perform(request, session: session, sink: self) {
            case .now(let result):
                replies.answer(id: request.id, result)
            case .later(let future):
                let waiting = replies.wait(id: request.id)
                future.assumeIsolated().whenComplete { [self] result in
                    waiting.result = result.mapError { $0 as? DefaultsError ?? DefaultsError(.internal, "\($0)") }
                    guard let context = self.context else { return }
                    replies.encodeCompleted()
                    writeAnswersAndEvents(context)
                    resume(context)
                    closeIfFinished(context)
                }
            }
        }
        // One long line must not keep its storage for the rest of the connection.
        if members.lineCapacity > BufferSizes.largestKept { members = JSONMembers() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The batch's events leave first, then its answers: what a subscriber waits for (an app
        // refreshing) does not wait for the writer's socket write (PERFORMANCE.md, `didChange`).
        // On this connection its own answers still come first (`deliver` keeps its events until
        // they are written).
        endBatch()
        writeAnswersAndEvents(context)
        armUnfinishedLineTimer(context)
        context.fireChannelReadComplete()
    }

    /// Starts timing a partial line left at the end of a read, or stops when none is left.
    private func armUnfinishedLineTimer(_ context: ChannelHandlerContext) {
        guard lines.holdsUnfinishedLine, !closed else {
            unfinishedLineTimer?.cancel()
            unfinishedLineTimer = nil
            return
        }
        guard unfinishedLineTimer == nil else { return }
        let linesRunAtStart = linesRun
        unfinishedLineTimer = context.eventLoop.assumeIsolated().scheduleTask(in: unfinishedLineTimeout) { [self] in
            unfinishedLineTimer = nil
            guard let context = self.context, !closed, lines.holdsUnfinishedLine else { return }
            // Lines completed meanwhile, or a client that must read its answers first, is progress
            // or our own wait, not a stall: time the line afresh.
            if paused || linesRun != linesRunAtStart { return armUnfinishedLineTimer(context) }
            writePending(context, flush: true)
            refuse(context, DefaultsError(.lineTimedOut, "line left unfinished for \(unfinishedLineTimeout.nanoseconds / 1_000_000) ms; the connection is closed"))
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let admitted = event as? AdmissionHandler.Admitted {
            session.origin.pid = admitted.peer.pid
            session.origin.uid = admitted.peer.uid
            let process = PeerProcess(pid: admitted.peer.pid)
            session.origin.command = process.command
            session.origin.executable = process.executable
            accepted = true
            server.channels[session.id] = context.channel
        } else if case ChannelEvent.inputClosed = event {
            if refused {
                context.close(promise: nil)
            } else {
                // The peer finished sending (socat after its input ends); answer what is pending, then close.
                inputClosed = true
                if !paused { finishInput(context) }
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        // Stop reading requests from a peer that does not read its answers.
        if !writable || !paused {
            context.channel.setOption(ChannelOptions.autoRead, value: writable).whenFailure { _ in }
        }
        if writable {
            server.notifier.sendWaiting(to: self)
            resume(context)
        }
        context.fireChannelWritabilityChanged()
    }

    /// At the end of the input: runs the lines left and a last one without a newline, answers
    /// everything, and closes once no answer waits.
    private func finishInput(_ context: ChannelHandlerContext) {
        runLines(context)
        guard !paused else { return }
        if accepted, !closed, let last = lines.finish() { run(last) }
        endBatch()
        writeAnswersAndEvents(context)
        closeIfFinished(context)
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        server.logger.debug("connection error", metadata: ["connection": "\(session.id)", "error": "\(error)"])
        context.close(promise: nil)
    }

    /// Ends the read batch: the notifier delivers the events it published.
    private func endBatch() {
        guard inBatch else { return }
        inBatch = false
        server.notifier.releaseDelivery()
    }

}
