import DefaultsCore
import DequeModule
import Logging
import NIOCore

/// The connection to the daemon: connects, reconnects with backoff, sends the outbox in order and
/// matches each response to its request by position.
///
/// Owner: `eventLoop`. The driver is not `Sendable`: it lives in a `NIOLoopBoundBox` that only
/// the loop opens (``ConnectionDriver/Handle``, which other threads hold, schedules `kick` and
/// `shutdown` there), and the closures of its own futures are the loop's isolated ones. Every
/// way in (the outbox, connecting, the channel's answers, events and close) checks the loop, in
/// release builds too.
///
/// Its parts live in three files, one job each: this one (the state, and the outbox sent in
/// order), `ConnectionDriver+Connecting.swift` (connecting, backoff, a lost connection) and
/// `ConnectionDriver+Incoming.swift` (answers matched to their requests, and events); no other
/// type reaches its state.
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

    enum Phase {
        case idle
        case connecting
        case connected(Channel)
        /// Waiting for the next attempt after a failure.
        case waiting
        case shutDown
    }

    /// What the next response answers.
    enum Expectation {
        case hello
        case register
        case subscribe
        /// Changes found in the answer are announced with `origin`.
        case get(DomainName, origin: ChangeOrigin)
        /// Changes found in the answer are announced with `origin`.
        case bundleDefaults(DomainName, origin: ChangeOrigin)
        case write(sequence: UInt64, domain: DomainName, ticket: Ticket?)
        case synchronize(Ticket)
    }

    /// Ordered work the daemon has not answered yet.
    enum Queued {
        case write(sequence: UInt64, domain: DomainName, line: [UInt8], ticket: Ticket?)
        case synchronize(Ticket)
    }

    let eventLoop: EventLoop
    let logger: Logger
    let cache: Cache
    let configuration: DefaultsConfiguration

    var phase = Phase.idle
    var connectionNumber: Int64?
    var inFlight: Deque<Expectation> = []
    var queue: Deque<Queued> = []
    /// `queue[..<sent]` went out on the current connection.
    var sent = 0
    /// Writes a stopping daemon refused (`shutting_down`): sent again, first, after reconnecting.
    var deferred: Deque<Queued> = []
    /// Every domain loaded so far, in the order first asked for.
    var domains: [DomainName] = []
    var known: Set<DomainName> = []
    /// The defaults this process registered per domain with the daemon, sent on each connection.
    var published: [DomainName: [String: PlistValue]] = [:]
    /// Domains whose `get` is on its way: their events are older than the answer and are dropped.
    var awaitingGet: Set<DomainName> = []
    var retryDelay: Duration
    var retryTask: Scheduled<Void>?
    var lastFailure = "not connected yet"
    var failuresInARow = 0

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

    func drain() {
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
            case .publishDefaults(let domain, let values):
                published[domain, default: [:]].merge(values) { _, new in new }
                if case .connected(let channel) = phase {
                    send(Requests.register(values, for: domain), expecting: .register, on: channel)
                }
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

    func send(_ line: [UInt8], expecting expectation: Expectation, on channel: Channel) {
        inFlight.append(expectation)
        channel.write(line, promise: nil)
    }

    func sendLoads(_ list: [DomainName], on channel: Channel) {
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

    func sendQueued(on channel: Channel) {
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
}
