import DefaultsCore
import DequeModule
import Logging
import NIOCore
import NIOExtras
import NIOPosix

/// Connecting to the daemon, reconnecting with backoff, and what a lost connection does to the
/// requests on their way.
extension ConnectionDriver {
    func connect() {
        eventLoop.preconditionInEventLoop()
        phase = .connecting
        do throws(DefaultsError) {
            try SocketTrust.checkDirectory(ofSocket: configuration.socketPath)
        } catch {
            failedToConnect(error)
            return
        }
        // Nothing is read, and no handler added, until the server is known to be the user's or root's.
        // The channel is on this driver's loop (the bootstrap's group is that loop), so the
        // futures' callbacks run here, isolated to it.
        ClientBootstrap(group: eventLoop)
            .channelOption(ChannelOptions.autoRead, value: false)
            .connect(unixDomainSocketPath: configuration.socketPath)
            .assumeIsolated()
            .flatMap { channel in
                DaemonPeer.check(channel).assumeIsolated().flatMapThrowing { [self] in
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(
                            LineBasedFrameDecoder(), maximumBufferSize: ConnectionLimits.maximumLineBytes),
                        MessageCodec(),
                        DaemonLink(driver: self),
                    ])
                    return channel
                }.nonisolated()
            }
            .flatMap { (channel: any Channel) -> EventLoopFuture<any Channel> in
                channel.setOption(ChannelOptions.autoRead, value: true).map { @Sendable () -> any Channel in channel }
            }
            .whenComplete { [self] result in
                switch result {
                case .success(let channel): connected(channel)
                case .failure(let error): failedToConnect(error)
                }
            }
    }

    func connected(_ channel: Channel) {
        eventLoop.preconditionInEventLoop()
        guard case .connecting = phase else {
            channel.close(promise: nil)
            return
        }
        if failuresInARow > 0 {
            logger.info("connected to defaultsd", metadata: ["socket": "\(configuration.socketPath)"])
        }
        phase = .connected(channel)
        failuresInARow = 0
        retryDelay = configuration.reconnectDelay.lowerBound
        send(Requests.hello(client: configuration.clientName, appDomain: configuration.appDomain), expecting: .hello, on: channel)
        for (domain, values) in published.sorted(by: { $0.key < $1.key }) {
            send(Requests.register(values, for: domain), expecting: .register, on: channel)
        }
        if !domains.isEmpty { sendLoads(domains, on: channel) }
        sent = 0
        sendQueued(on: channel)
        channel.flush()
        drain()
    }

    private func failedToConnect(_ error: Error) {
        eventLoop.preconditionInEventLoop()
        guard case .connecting = phase else { return }
        failuresInARow += 1
        let reason = "cannot connect to \(configuration.socketPath): \(error)"
        if failuresInARow == 1 {
            logger.notice("defaultsd is unreachable; retrying", metadata: ["reason": "\(reason)"])
        }
        lost(reason)
    }

    /// The channel closed (any reason).
    func closed(_ channel: Channel) {
        eventLoop.preconditionInEventLoop()
        eventLoop.preconditionInEventLoop()
        guard case .connected(let current) = phase, current === channel else { return }
        logger.notice("the connection to defaultsd closed; reconnecting")
        // A connection that worked (its hello was answered) gets one immediate new attempt when
        // someone is waiting: a daemon restarted meanwhile (or socket-activated) then answers them.
        let retryNow = connectionNumber != nil
            && (queue.contains { if case .synchronize = $0 { true } else { false } }
                || cache.state.withLock { !$0.loadWaiters.isEmpty })
        lost("the connection to defaultsd closed", keepWaiters: retryNow)
    }

    /// Forgets the connection. Waiters (synchronize, first loads) are answered as failed, unless
    /// `keepWaiters`, in which case a new attempt starts at once and they ride on it.
    func lost(_ reason: String, keepWaiters: Bool = false) {
        lastFailure = reason
        phase = .waiting
        inFlight.removeAll()
        awaitingGet.removeAll()
        connectionNumber = nil
        sent = 0
        queue = deferred + queue
        deferred.removeAll()
        if keepWaiters {
            connect()
            return
        }
        queue.removeAll { item in
            guard case .synchronize(let ticket) = item else { return false }
            ticket.fail(.unavailable(reason))
            return true
        }
        releaseLoadWaiters()
        let delay = retryDelay
        retryDelay = min(retryDelay * 2, configuration.reconnectDelay.upperBound)
        retryTask = eventLoop.assumeIsolated().scheduleTask(in: TimeAmount(delay)) { [self] in
            retryTask = nil
            if case .waiting = phase { connect() }
        }
    }

    private func releaseLoadWaiters() {
        let tickets = cache.state.withLock { $0.takeLoadWaiters() }
        for ticket in tickets { ticket.fail(.unavailable(lastFailure)) }
    }

}
