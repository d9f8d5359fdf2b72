import DefaultsCore
import DequeModule
import Logging
import NIOCore
import NIOExtras
import NIOPosix

/// The connection to the daemon: connects, reconnects with backoff, sends the outbox in order and
/// matches each response to its request by position.
///
/// Owner: `eventLoop`. The driver is not `Sendable`: it lives in a `NIOLoopBoundBox` that only
/// the loop opens (``ConnectionDriver/Handle``, which other threads hold, schedules `kick` and
/// `shutdown` there), and the closures of its own futures are the loop's isolated ones. Every
/// way in (the outbox, connecting, the channel's answers, events and close) checks the loop, in
/// release builds too.
///
/// On every (re)connection it says `hello`, subscribes to every domain it knows, asks for each
/// one's Settings bundle layer (`bundleDefaults`) and `get`s it (the cache diffs and notifies what
/// changed meanwhile), and then sends again, in order, every write the daemon has not answered.
/// A `bundleDefaultsChanged` event asks for that domain's bundle layer again. A `synchronize` whose connection is lost is sent
/// again only if an immediate new attempt connects; otherwise it fails (the daemon is gone).
final class ConnectionDriver {
    /// The driver as other threads hold it: its loop, its logger, and the driver itself in a box
    /// only that loop opens.
    struct Handle: Sendable {
        let eventLoop: EventLoop
        let logger: Logger
        private let box: NIOLoopBoundBox<ConnectionDriver>

        /// A new driver, made here and handed to its loop.
        init(eventLoop: EventLoop, cache: Cache, configuration: DefaultsConfiguration, logger: Logger) {
            self.eventLoop = eventLoop
            self.logger = logger
            box = .makeBoxSendingValue(
                ConnectionDriver(eventLoop: eventLoop, cache: cache, configuration: configuration, logger: logger), eventLoop: eventLoop)
        }

        /// Drains the outbox on the loop (any thread).
        func kick() {
            let box = self.box
            eventLoop.execute { box.value.drain() }
        }

        /// Closes the connection for good (any thread).
        func shutdown() {
            let box = self.box
            eventLoop.execute { box.value.shutdownOnLoop() }
        }
    }

    private enum Phase {
        case idle
        case connecting
        case connected(Channel)
        /// Waiting for the next attempt after a failure.
        case waiting
        case shutDown
    }

    /// What the next response answers.
    private enum Expectation {
        case hello
        case subscribe
        /// Changes found in the answer are announced with `origin`.
        case get(DomainName, origin: ChangeOrigin)
        /// Changes found in the answer are announced with `origin`.
        case bundleDefaults(DomainName, origin: ChangeOrigin)
        case write(sequence: UInt64, domain: DomainName, ticket: Ticket?)
        case synchronize(Ticket)
    }

    /// Ordered work the daemon has not answered yet.
    private enum Queued {
        case write(sequence: UInt64, domain: DomainName, line: [UInt8], ticket: Ticket?)
        case synchronize(Ticket)
    }

    let eventLoop: EventLoop
    let logger: Logger
    private let cache: Cache
    private let configuration: DefaultsConfiguration

    private var phase = Phase.idle
    private var connectionNumber: Int64?
    private var inFlight: Deque<Expectation> = []
    private var queue: Deque<Queued> = []
    /// `queue[..<sent]` went out on the current connection.
    private var sent = 0
    /// Writes a stopping daemon refused (`shutting_down`): sent again, first, after reconnecting.
    private var deferred: Deque<Queued> = []
    /// Every domain loaded so far, in the order first asked for.
    private var domains: [DomainName] = []
    private var known: Set<DomainName> = []
    /// Domains whose `get` is on its way: their events are older than the answer and are dropped.
    private var awaitingGet: Set<DomainName> = []
    private var retryDelay: Duration
    private var retryTask: Scheduled<Void>?
    private var lastFailure = "not connected yet"
    private var failuresInARow = 0

    private init(eventLoop: EventLoop, cache: Cache, configuration: DefaultsConfiguration, logger: Logger) {
        self.eventLoop = eventLoop
        self.cache = cache
        self.configuration = configuration
        self.logger = logger
        self.retryDelay = configuration.reconnectDelay.lowerBound
    }

    /// Closes the connection for good.
    private func shutdownOnLoop() {
        eventLoop.preconditionInEventLoop()
        let channel: Channel? = if case .connected(let channel) = phase { channel } else { nil }
        phase = .shutDown
        retryTask?.cancel()
        for item in deferred + queue {
            switch item {
            case .write(_, _, _, let ticket): ticket?.fail(.unavailable("the client was shut down"))
            case .synchronize(let ticket): ticket.fail(.unavailable("the client was shut down"))
            }
        }
        queue.removeAll()
        deferred.removeAll()
        channel?.close(promise: nil)
    }

    // MARK: - Outbox

    private func drain() {
        eventLoop.preconditionInEventLoop()
        let items = cache.state.withLock { $0.takeOutbox() }
        var newDomains: [DomainName] = []
        var someoneWaits = false
        for item in items {
            switch item {
            case .load(let domain):
                // Asked for once per domain (`CacheState.requestLoad`), so each one is new here.
                known.insert(domain)
                domains.append(domain)
                newDomains.append(domain)
            case .write(let sequence, let domain, let line, let ticket):
                queue.append(.write(sequence: sequence, domain: domain, line: line, ticket: ticket))
            case .synchronize(let ticket):
                if case .shutDown = phase {
                    ticket.fail(.unavailable(lastFailure))
                } else {
                    queue.append(.synchronize(ticket))
                    someoneWaits = true
                }
            case .checkWaiters:
                someoneWaits = true
            }
        }
        switch phase {
        case .idle:
            connect()
        case .connected(let channel):
            if !newDomains.isEmpty { sendLoads(newDomains, on: channel) }
            sendQueued(on: channel)
            channel.flush()
        case .waiting where someoneWaits:
            // Someone blocks on the daemon: try now rather than at the next backoff step. If this
            // attempt fails too, the daemon is unreachable and they are answered so (`lost`).
            retryTask?.cancel()
            retryTask = nil
            connect()
        case .waiting, .connecting, .shutDown:
            break
        }
    }

    private func send(_ line: [UInt8], expecting expectation: Expectation, on channel: Channel) {
        inFlight.append(expectation)
        channel.write(line, promise: nil)
    }

    private func sendLoads(_ list: [DomainName], on channel: Channel) {
        for host in [DomainName.Host.any, .current] {
            let domains = list.filter { $0.host == host }
            if !domains.isEmpty { send(Requests.subscribe(domains, host: host), expecting: .subscribe, on: channel) }
        }
        for domain in list {
            // Before the `get`: answers come in order, so the bundle layer is in the cache by the
            // time the domain counts as loaded and first reads are answered. A domain's bundle
            // layer belongs to the variant every host sees.
            if domain != .global, !domain.isCurrentHost {
                send(Requests.bundleDefaults(domain), expecting: .bundleDefaults(domain, origin: .resynchronized), on: channel)
            }
            awaitingGet.insert(domain)
            send(Requests.get(domain), expecting: .get(domain, origin: .resynchronized), on: channel)
        }
    }

    private func sendQueued(on channel: Channel) {
        while sent < queue.count {
            switch queue[sent] {
            case .write(let sequence, let domain, let line, let ticket):
                send(line, expecting: .write(sequence: sequence, domain: domain, ticket: ticket), on: channel)
            case .synchronize(let ticket):
                send(Requests.synchronize, expecting: .synchronize(ticket), on: channel)
            }
            sent += 1
        }
    }

    // MARK: - Connecting

    private func connect() {
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

    private func connected(_ channel: Channel) {
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
    private func lost(_ reason: String, keepWaiters: Bool = false) {
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

    // MARK: - Incoming

    func received(_ message: DaemonMessage, on channel: Channel) {
        eventLoop.preconditionInEventLoop()
        eventLoop.preconditionInEventLoop()
        guard case .connected(let current) = phase, current === channel else { return }
        switch message {
        case .response(let json): handleResponse(json)
        case .event(let json) where EventName(of: json) == .bundleDefaultsChanged: bundleDefaultsChanged(json, on: channel)
        case .event(let json): handleEvent(json, on: channel)
        }
    }

    private func handleResponse(_ json: JSON) {
        guard let expectation = inFlight.popFirst() else {
            logger.warning("defaultsd sent an answer nobody asked for", metadata: ["line": "\(json)"])
            return
        }
        let error = DefaultsError(answer: json)
        switch expectation {
        case .hello:
            if case .integer(let number)? = json["connection"] { connectionNumber = number }
            if let error { logger.warning("hello refused", metadata: ["error": "\(error)"]) }

        case .subscribe:
            if let error { logger.warning("subscribe refused", metadata: ["error": "\(error)"]) }

        case .get(let domain, let origin):
            awaitingGet.remove(domain)
            guard error == nil, case .object(let members)? = json["value"], case .integer(let generation)? = json["generation"] else {
                logger.warning("get refused", metadata: ["domain": "\(domain)", "error": "\(error.map { "\($0)" } ?? "\(json)")"])
                return
            }
            let values = DaemonMessages.values(members)
            log(values.skipped, of: domain, "skipped a value the daemon sent")
            var forced: [String: PlistValue] = [:]
            if case .object(let members)? = json["forced"] {
                let decoded = DaemonMessages.values(members)
                log(decoded.skipped, of: domain, "skipped a forced value the daemon sent")
                forced = decoded.values
            }
            let tickets = cache.update { $0.load(domain, values: values.values, generation: generation, forced: forced, origin: origin) }
            for ticket in tickets { ticket.succeed() }

        case .bundleDefaults(let domain, let origin):
            guard error == nil, case .object(let members)? = json["values"] else {
                // A daemon without Settings bundle support answers `unknown_op`: no bundle layer.
                let level: Logger.Level = error?.code == .unknownOp ? .debug : .warning
                logger.log(level: level, "bundleDefaults refused", metadata: ["domain": "\(domain)", "error": "\(error.map { "\($0)" } ?? "\(json)")"])
                return
            }
            let values = DaemonMessages.values(members)
            log(values.skipped, of: domain, "skipped a bundle default the daemon sent")
            cache.update { ((), $0.setBundleDefaults(values.values, of: domain, origin: origin)) }

        case .write(let sequence, let domain, let ticket):
            let item = queue.removeFirst()
            sent -= 1
            if error?.code == .shuttingDown {
                // Not carried out: the daemon is stopping. The write stays in the cache and goes
                // to the next daemon, in order, as if the connection had been lost before it.
                deferred.append(item)
            } else if let error {
                logger.warning("defaultsd refused a write", metadata: ["domain": "\(domain)", "error": "\(error)"])
                cache.update { ((), $0.refuse(sequence, in: domain, error: error)) }
                ticket?.fail(.writeRefused(domain: domain.rawValue, error))
            } else {
                if case .integer(let generation)? = json["generation"] {
                    cache.update { ((), $0.acknowledge(sequence, in: domain, generation: generation)) }
                }
                ticket?.succeed()
            }

        case .synchronize(let ticket):
            queue.removeFirst()
            sent -= 1
            let failures = cache.state.withLock { $0.takeFailures() }
            if let error {
                ticket.fail(.notDurable(error))
            } else if !deferred.isEmpty {
                ticket.fail(.unavailable("defaultsd is stopping; earlier writes wait for it to restart"))
            } else if let failure = failures.first {
                ticket.fail(failure)
            } else {
                ticket.succeed()
            }
        }
    }

    private func handleEvent(_ json: JSON, on channel: Channel) {
        guard let event = DaemonMessages.didChange(json), !awaitingGet.contains(event.domain) else { return }
        log(event.skipped, of: event.domain, "skipped a value the daemon sent")
        let origin = DaemonMessages.changeOrigin(event.origin, ownConnection: connectionNumber)
        if origin == .managed {
            // The event holds the keys' effective values; which keys are forced, and the user's
            // own values beneath them, come with the domain.
            awaitingGet.insert(event.domain)
            send(Requests.get(event.domain), expecting: .get(event.domain, origin: .managed), on: channel)
            channel.flush()
            return
        }
        cache.update { ((), $0.applyEvent(to: event.domain, generation: event.generation, changes: event.changes, origin: origin)) }
    }

    private func log(_ skipped: [DaemonMessages.Skipped], of domain: DomainName, _ message: Logger.Message) {
        for member in skipped {
            logger.warning(message, metadata: ["domain": "\(domain)", "key": "\(member.key)", "error": "\(member.error)"])
        }
    }

    /// A domain's bundle layer changed: ask for it again. The answer comes after the event, so it
    /// holds the new layer (or a later one, itself followed by another event).
    private func bundleDefaultsChanged(_ json: JSON, on channel: Channel) {
        guard case .string(let name)? = json["domain"], let domain = try? DomainName(name),
            domain != .global, known.contains(domain)
        else { return }
        send(Requests.bundleDefaults(domain), expecting: .bundleDefaults(domain, origin: .settingsBundle), on: channel)
        channel.flush()
    }
}
