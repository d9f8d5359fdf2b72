import DefaultsCore
import DequeModule
import NIOCore
import OrderedCollections

/// The logic of one connection: checks the peer, runs each line as a request in order, and
/// delivers events.
///
/// Runs on the store's event loop (every connection is registered on it), so it can call the
/// store directly. ``LineFrameDecoder`` cuts the bytes read into lines; ``RequestDecoder`` and
/// ``ResponseEncoding`` turn them into requests and answers. The answers of one read batch
/// are encoded into one writer and leave as one flushed buffer when the batch ends (or the
/// input ends, or an answer that waited completes); the batch's events are delivered after
/// them.
///
/// Responses leave in request order even when one waits (`synchronize`): later answers
/// queue behind it. Events go out between responses.
///
/// A subscriber that stops reading is not allowed to grow the daemon's memory: while its
/// socket is not writable, its events are merged per domain (latest value wins) and sent
/// when it drains, and reading its requests is paused.
final class ConnectionHandler: ChannelInboundHandler, EventSink {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private final class Slot {
        let id: JSON?
        var result: Result<Reply, DefaultsError>?
        init(id: JSON?, result: Result<Reply, DefaultsError>?) {
            self.id = id
            self.result = result
        }
    }

    private let server: ServerContext
    private let session: Session
    private var context: ChannelHandlerContext?
    private var slots: Deque<Slot> = []
    private var lines: LineFrameDecoder
    /// The members of the request being run, kept between requests for their storage.
    private var members = JSONMembers()
    /// Responses encoded but not yet handed to the channel.
    private var pending = JSONWriter(capacity: BufferSizes.initialWriter)
    /// The buffer responses leave in. By the next batch the channel has usually written and
    /// released it, so clearing it reuses its storage instead of allocating.
    private var outbound: ByteBuffer?
    private var backlog: OrderedDictionary<DomainName, ChangeEvent> = [:]
    private var noticeBacklog: OrderedDictionary<DomainName, ByteBuffer> = [:]
    private var inputClosed = false
    /// True between the first line of a read batch and its end, while the notifier holds
    /// the batch's events.
    private var inBatch = false
    /// Set when the channel went inactive: lines still in the framer are not run.
    private var closed = false
    private var accepted = false
    private var refused = false

    var sinkID: UInt64 { session.id }

    init(server: ServerContext) {
        self.server = server
        let id = server.makeConnectionID()
        self.session = Session(id: id, origin: Origin(pid: 0, uid: 0, connection: id))
        self.lines = LineFrameDecoder(maximumLineBytes: server.configuration.maximumLineBytes)
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) {
        endBatch()
        self.context = nil
    }

    func channelActive(context: ChannelHandlerContext) {
        server.connectionCount += 1
        PeerCredentials.of(context.channel).assumeIsolated().whenComplete { [self] result in
            guard case .success(let peer) = result else {
                refuse(context, DefaultsError(.notPermitted, "cannot read the peer's credentials"))
                return
            }
            session.origin.pid = peer.pid
            session.origin.uid = peer.uid
            if peer.uid != server.daemonUID && peer.uid != 0 {
                server.logger.warning("refused a connection from another user", metadata: ["uid": "\(peer.uid)"])
                refuse(context, DefaultsError(.notPermitted, "this defaultsd serves uid \(server.daemonUID) only"))
            } else if server.connectionCount > server.configuration.maximumConnections {
                refuse(context, DefaultsError(
                    .tooManyConnections, "defaultsd serves at most \(server.configuration.maximumConnections) connections"))
            } else if server.isStopping {
                refuse(context, DefaultsError(.shuttingDown, "defaultsd is shutting down"))
            } else {
                accepted = true
                server.channels[session.id] = context.channel
            }
        }
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        closed = true
        // Unsubscribed first, so the events of the batch that ends here skip this connection.
        server.store.notifier.unsubscribeFromEverything(self)
        endBatch()
        server.connectionCount -= 1
        server.channels[session.id] = nil
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard accepted, !closed else { return }
        lines.receive(unwrapInboundIn(data))
        while !closed, let frame = lines.next() { run(frame) }
    }

    private func run(_ frame: LineFrameDecoder.Frame) {
        let line: ByteBuffer
        switch frame {
        case .line(let bytes):
            if RequestDecoder.isBlank(bytes) { return }
            line = bytes
        case .tooLong:
            respond(id: nil, .failure(DefaultsError(
                .lineTooLong, "line longer than \(lines.maximumLineBytes) bytes; it was discarded")))
            return
        }
        if !inBatch {
            inBatch = true
            server.store.notifier.holdDelivery()
        }
        switch RequestDecoder.decode(line, reusing: &members) {
        case .invalid(let id, let error):
            respond(id: id, .failure(error))
        case .request(let request):
            switch Operations(server: server).perform(request, session: session, sink: self) {
            case .now(let result):
                respond(id: request.id, result)
            case .later(let future):
                let slot = Slot(id: request.id, result: nil)
                slots.append(slot)
                future.assumeIsolated().whenComplete { [self] result in
                    slot.result = result.mapError { $0 as? DefaultsError ?? DefaultsError(.internal, "\($0)") }
                    guard let context = self.context else { return }
                    drainSlots()
                    writePending(context, flush: true)
                    closeIfFinished(context)
                }
            }
        }
        // One long line must not keep its storage for the rest of the connection.
        if members.lineCapacity > BufferSizes.largestKept { members = JSONMembers() }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        // The writer's answers leave first, then the batch's events: the writer's round trip
        // does not wait for one socket write per subscriber, and a client that waits for both
        // (its answer and an event it subscribed to) finds its answer already there when the
        // event wakes it, instead of being woken twice.
        writePending(context, flush: true)
        endBatch()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            if refused {
                context.close(promise: nil)
            } else {
                // The peer finished sending (socat after its input ends); answer what is pending, then close.
                if accepted, !closed, let last = lines.finish() { run(last) }
                inputClosed = true
                writePending(context, flush: true)
                endBatch()
                closeIfFinished(context)
            }
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        let writable = context.channel.isWritable
        // Stop reading requests from a peer that does not read its answers.
        context.channel.setOption(ChannelOptions.autoRead, value: writable).whenFailure { _ in }
        if writable { drainBacklog(context) }
        context.fireChannelWritabilityChanged()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        server.logger.debug("connection error", metadata: ["connection": "\(session.id)", "error": "\(error)"])
        context.close(promise: nil)
    }

    /// Ends the read batch: the notifier delivers the events it published.
    private func endBatch() {
        guard inBatch else { return }
        inBatch = false
        server.store.notifier.releaseDelivery()
    }

    // MARK: - Responses

    private func respond(id: JSON?, _ result: Result<Reply, DefaultsError>) {
        if slots.isEmpty {
            ResponseEncoding.encode(id: id, result, into: &pending)
        } else {
            slots.append(Slot(id: id, result: result))
        }
    }

    private func drainSlots() {
        while let head = slots.first, let result = head.result {
            slots.removeFirst()
            ResponseEncoding.encode(id: head.id, result, into: &pending)
        }
    }

    /// Hands the encoded responses to the channel as one buffer; flushes it when asked to
    /// (one pass down the pipeline instead of a write and a flush).
    private func writePending(_ context: ChannelHandlerContext, flush: Bool = false) {
        guard !pending.isEmpty else {
            if flush { context.flush() }
            return
        }
        var buffer = outbound ?? context.channel.allocator.buffer(capacity: BufferSizes.initialOutbound)
        outbound = nil  // the only reference again, so clearing and writing reuse the storage
        buffer.clear()
        pending.withBytes { buffer.writeBytes($0) }
        outbound = buffer.capacity > BufferSizes.largestKept ? nil : buffer
        // Keep the writer's storage for the next batch, unless one huge answer grew it.
        if pending.capacity > BufferSizes.largestKept {
            pending = JSONWriter(capacity: BufferSizes.initialWriter)
        } else {
            pending.removeAll()
        }
        if flush {
            context.writeAndFlush(wrapOutboundOut(buffer), promise: nil)
        } else {
            context.write(wrapOutboundOut(buffer), promise: nil)
        }
    }

    private func closeIfFinished(_ context: ChannelHandlerContext) {
        guard inputClosed, slots.isEmpty else { return }
        writePending(context)
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(channel.allocator.buffer(capacity: 0))).assumeIsolated().whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Answers one error line and ends the connection. The output side is closed at once; the input
    /// side is drained (and ignored) until the peer closes or a second passes, so a peer that is still
    /// sending its first request reads the error instead of failing on a broken pipe.
    private func refuse(_ context: ChannelHandlerContext, _ error: DefaultsError) {
        let channel = context.channel
        let line = ByteBuffer(bytes: ResponseEncoding.encode(id: nil, .failure(error)))
        context.writeAndFlush(wrapOutboundOut(line)).assumeIsolated().whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
        refused = true
    }

    // MARK: - Events

    func deliver(_ event: ChangeEvent, line: ByteBuffer) {
        guard let context else { return }
        if backlog.isEmpty && context.channel.isWritable {
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        } else if backlog[event.changeset.domain] != nil {
            backlog[event.changeset.domain]!.merge(event)
        } else {
            backlog[event.changeset.domain] = event
        }
    }

    func deliverNotice(_ line: ByteBuffer, domain: DomainName) {
        guard let context else { return }
        if noticeBacklog.isEmpty && context.channel.isWritable {
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        } else {
            noticeBacklog[domain] = line
        }
    }

    private func drainBacklog(_ context: ChannelHandlerContext) {
        while context.channel.isWritable, let line = noticeBacklog.values.first {
            noticeBacklog.removeFirst()
            context.writeAndFlush(wrapOutboundOut(line), promise: nil)
        }
        while context.channel.isWritable, let event = backlog.values.first {
            backlog.removeFirst()
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: event.encoded())), promise: nil)
        }
    }
}
