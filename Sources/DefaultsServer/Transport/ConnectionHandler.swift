import DefaultsCore
import DequeModule
import NIOCore
import OrderedCollections

/// The logic of one connection: checks the peer, runs requests in order, and delivers events.
///
/// Runs on the store's event loop (every connection is registered on it), so it can call the
/// store directly. Responses leave in request order even when one waits (`synchronize`):
/// later answers queue behind it. Events go out between responses.
///
/// A subscriber that stops reading is not allowed to grow the daemon's memory: while its
/// socket is not writable, its events are merged per domain (latest value wins) and sent
/// when it drains, and reading its requests is paused.
final class ConnectionHandler: ChannelInboundHandler, EventSink {
    typealias InboundIn = Incoming
    typealias OutboundOut = Outgoing

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
    private var backlog: OrderedDictionary<DomainName, ChangeEvent> = [:]
    private var noticeBacklog: OrderedDictionary<DomainName, ByteBuffer> = [:]
    private var inputClosed = false
    private var accepted = false
    private var refused = false

    var sinkID: UInt64 { session.id }

    init(server: ServerContext) {
        self.server = server
        let id = server.makeConnectionID()
        self.session = Session(id: id, origin: Origin(pid: 0, uid: 0, connection: id))
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

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
        server.connectionCount -= 1
        server.channels[session.id] = nil
        server.store.notifier.unsubscribeFromEverything(self)
        context.fireChannelInactive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard accepted else { return }
        switch unwrapInboundIn(data) {
        case .invalid(let id, let error):
            respond(context, Slot(id: id, result: .failure(error)))
        case .request(let request):
            switch Operations(server: server).perform(request, session: session, sink: self) {
            case .now(let result):
                respond(context, Slot(id: request.id, result: result))
            case .later(let future):
                let slot = Slot(id: request.id, result: nil)
                slots.append(slot)
                future.assumeIsolated().whenComplete { [self] result in
                    slot.result = result.mapError { $0 as? DefaultsError ?? DefaultsError(.internal, "\($0)") }
                    guard let context = self.context else { return }
                    drainSlots(context)
                    context.flush()
                    closeIfFinished(context)
                }
            }
        }
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        server.store.notifier.deliverPending()
        context.flush()
        context.fireChannelReadComplete()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            if refused {
                context.close(promise: nil)
            } else {
                // The peer finished sending (socat after its input ends); answer what is pending, then close.
                inputClosed = true
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

    // MARK: - Responses

    private func respond(_ context: ChannelHandlerContext, _ slot: Slot) {
        if slots.isEmpty {
            context.write(wrapOutboundOut(.response(id: slot.id, slot.result!)), promise: nil)
        } else {
            slots.append(slot)
        }
    }

    private func drainSlots(_ context: ChannelHandlerContext) {
        while let head = slots.first, let result = head.result {
            slots.removeFirst()
            context.write(wrapOutboundOut(.response(id: head.id, result)), promise: nil)
        }
    }

    private func closeIfFinished(_ context: ChannelHandlerContext) {
        guard inputClosed, slots.isEmpty else { return }
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.event(channel.allocator.buffer(capacity: 0)))).assumeIsolated().whenComplete { _ in
            channel.close(promise: nil)
        }
    }

    /// Answers one error line and ends the connection. The output side is closed at once; the input
    /// side is drained (and ignored) until the peer closes or a second passes, so a peer that is still
    /// sending its first request reads the error instead of failing on a broken pipe.
    private func refuse(_ context: ChannelHandlerContext, _ error: DefaultsError) {
        let channel = context.channel
        context.writeAndFlush(wrapOutboundOut(.response(id: nil, .failure(error)))).assumeIsolated().whenComplete { _ in
            channel.close(mode: .output, promise: nil)
            channel.eventLoop.assumeIsolated().scheduleTask(in: .seconds(1)) { channel.close(promise: nil) }
        }
        refused = true
    }

    // MARK: - Events

    func deliver(_ event: ChangeEvent, line: ByteBuffer) {
        guard let context else { return }
        if backlog.isEmpty && context.channel.isWritable {
            context.writeAndFlush(wrapOutboundOut(.event(line)), promise: nil)
        } else if backlog[event.changeset.domain] != nil {
            backlog[event.changeset.domain]!.merge(event)
        } else {
            backlog[event.changeset.domain] = event
        }
    }

    func deliverNotice(_ line: ByteBuffer, domain: DomainName) {
        guard let context else { return }
        if noticeBacklog.isEmpty && context.channel.isWritable {
            context.writeAndFlush(wrapOutboundOut(.event(line)), promise: nil)
        } else {
            noticeBacklog[domain] = line
        }
    }

    private func drainBacklog(_ context: ChannelHandlerContext) {
        while context.channel.isWritable, let line = noticeBacklog.values.first {
            noticeBacklog.removeFirst()
            context.writeAndFlush(wrapOutboundOut(.event(line)), promise: nil)
        }
        while context.channel.isWritable, let event = backlog.values.first {
            backlog.removeFirst()
            context.write(wrapOutboundOut(.event(ByteBuffer(bytes: event.encoded()))), promise: nil)
            context.flush()
        }
    }
}
