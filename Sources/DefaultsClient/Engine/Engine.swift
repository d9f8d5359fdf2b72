import DefaultsCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// Everything one process shares about one daemon: the cache, the connection and the
/// registration domain. Every ``SharedDefaults`` for the same socket uses the same engine.
///
/// Owner: shared by its instances; released with the last of them, which closes the connection.
/// The cache is guarded by its mutex (``Cache``); the connection belongs to the event loop
/// (``ConnectionDriver``). The methods here run on the caller's thread.
final class Engine: Sendable {
    let configuration: DefaultsConfiguration
    let cache = Cache()
    let driver: ConnectionDriver.Handle
    var eventLoop: EventLoop { driver.eventLoop }
    var logger: Logger { driver.logger }

    private struct WeakEngine: @unchecked Sendable { weak var engine: Engine? }
    private static let registry = Mutex<[DefaultsConfiguration: WeakEngine]>([:])

    /// The engine for `configuration`'s daemon (its app domain does not matter).
    static func shared(for configuration: DefaultsConfiguration) -> Engine {
        var key = configuration
        key.appDomain = ""
        return registry.withLock { engines in
            if let engine = engines[key]?.engine { return engine }
            let engine = Engine(configuration: configuration)
            engines[key] = WeakEngine(engine: engine)
            return engine
        }
    }

    private init(configuration: DefaultsConfiguration) {
        self.configuration = configuration
        var logger = Logger(label: "defaultsd.client")
        logger[metadataKey: "socket"] = "\(configuration.socketPath)"
        driver = ConnectionDriver.Handle(
            eventLoop: MultiThreadedEventLoopGroup.singleton.next(), cache: cache, configuration: configuration,
            logger: logger)
    }

    deinit { driver.shutdown() }

    /// Runs `body` under the cache lock, delivers what it produced and wakes the connection if the
    /// outbox needs it.
    @discardableResult
    func perform<R>(_ body: (inout CacheState) -> (R, [Delivery])) -> R {
        let (result, kick) = cache.update { state in
            let (result, deliveries) = body(&state)
            return ((result, state.needsDrain()), deliveries)
        }
        if kick { driver.kick() }
        return result
    }

    // MARK: Views

    func addView(_ view: DefaultsView, searchList: SearchList, volatile: [String: [String: PlistValue]]) {
        perform { state in ((), state.addView(ViewRecord(view: view, searchList: searchList, volatile: volatile))) }
    }

    func removeView(_ view: DefaultsView) {
        cache.state.withLock { $0.removeView(view) }
    }

    func record(of view: DefaultsView) -> ViewRecord? {
        cache.state.withLock { $0.views[ObjectIdentifier(view)] }
    }

    /// Changes a view's search list (suites) and loads what it adds.
    func updateSearchList(of view: DefaultsView, _ change: @escaping (inout SearchList) -> Void) {
        perform { state in
            let id = ObjectIdentifier(view)
            guard var searchList = state.views[id]?.searchList else { return ((), []) }
            change(&searchList)
            state.views[id]?.searchList = searchList
            for domain in searchList.storedDomains { state.requestLoad(domain) }
            return ((), state.rebuild(id).map { [$0] } ?? [])
        }
    }

    // MARK: First use

    /// Blocks until every persistent domain of the view is loaded, the daemon turns out to be
    /// unreachable, or `loadTimeout` passes; then the view answers from what it has.
    func waitUntilReady(_ view: DefaultsView) {
        guard let ticket = loadTicket(for: view) else { return }
        if eventLoop.inEventLoop {
            logger.warning("a read on the client's event loop cannot wait for the daemon; answering from the cache")
        } else if case .success = wait(for: ticket, timeout: configuration.loadTimeout) {
            return
        }
        cache.state.withLock { $0.giveUpWaiting(for: view) }
    }

    /// `waitUntilReady` for async callers: suspends instead of blocking a thread.
    func ready(_ view: DefaultsView) async {
        guard let ticket = loadTicket(for: view) else { return }
        do { try await self.await(ticket, timeout: configuration.loadTimeout) } catch {
            cache.state.withLock { $0.giveUpWaiting(for: view) }
        }
    }

    /// Asks for the view's missing domains and answers a ticket for their arrival, or nil (and
    /// marks the view ready) when nothing is missing.
    private func loadTicket(for view: DefaultsView) -> Ticket? {
        let eventLoop = self.eventLoop
        return perform { state in
            guard let record = state.views[ObjectIdentifier(view)] else { return (nil, []) }
            let missing = record.searchList.storedDomains.filter { !state.isAvailable($0) }
            guard !missing.isEmpty else {
                view.snapshot.withLock { $0.ready = true }
                return (nil, [])
            }
            for domain in missing { state.requestLoad(domain) }
            let ticket = Ticket(eventLoop: eventLoop)
            state.loadWaiters.append(LoadWaiter(domains: Set(missing), ticket: ticket))
            state.outbox.append(.checkWaiters)
            return (ticket, [])
        }
    }

    /// Loads one domain (for `persistentDomain(forName:)`) and waits as `waitUntilReady` does.
    func waitUntilLoaded(_ domain: DomainName) {
        let eventLoop = self.eventLoop
        let ticket: Ticket? = perform { state in
            guard !state.isAvailable(domain) else { return (nil, []) }
            state.requestLoad(domain)
            let ticket = Ticket(eventLoop: eventLoop)
            state.loadWaiters.append(LoadWaiter(domains: [domain], ticket: ticket))
            state.outbox.append(.checkWaiters)
            return (ticket, [])
        }
        guard let ticket, !eventLoop.inEventLoop else { return }
        if case .failure = wait(for: ticket, timeout: configuration.loadTimeout) {
            cache.state.withLock { $0.domains[domain]?.servedBeforeLoad = true }
        }
    }

    /// Blocks on `ticket`, failing it with `timedOut` after `timeout`.
    func wait(for ticket: Ticket, timeout: Duration) -> Result<Void, DefaultsClientError> {
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) { ticket.fail(.timedOut) }
        defer { timer.cancel() }
        return ticket.wait()
    }

    func await(_ ticket: Ticket, timeout: Duration) async throws(DefaultsClientError) {
        let timer = eventLoop.scheduleTask(in: TimeAmount(timeout)) { ticket.fail(.timedOut) }
        defer { timer.cancel() }
        try await ticket.value()
    }

    /// ``await(_:timeout:)``'s outcome as a value, for a caller that decides what to do with a refusal.
    func result(of ticket: Ticket, timeout: Duration) async -> Result<Void, DefaultsClientError> {
        do throws(DefaultsClientError) {
            try await self.await(ticket, timeout: timeout)
            return .success(())
        } catch {
            return .failure(error)
        }
    }

    // MARK: Writes

    /// Sends a local edit; with `expected`, only if each key still holds that value in the
    /// daemon (compare-and-set: a `conflict` fails the ticket and undoes the edit here).
    func edit(_ edit: Edit, of domain: DomainName, ticket: Ticket? = nil, expecting expected: [String: PlistValue?] = [:]) {
        let line = Requests.edit(edit, domain: domain, expecting: expected)
        perform { state in ((), state.localEdit(edit, to: domain, line: line, ticket: ticket)) }
    }

    func synchronizeTicket() -> Ticket {
        let ticket = Ticket(eventLoop: eventLoop)
        perform { state in
            state.outbox.append(.synchronize(ticket))
            return ((), [])
        }
        return ticket
    }
}

extension CacheState {
    /// Loaded, or given up on (reads were answered without it).
    func isAvailable(_ domain: DomainName) -> Bool {
        domains[domain]?.loaded == true || domains[domain]?.servedBeforeLoad == true
    }

    // MARK: Registration and volatile domains

    mutating func register(_ values: [String: PlistValue]) -> [Delivery] {
        var changed = Set<String>()
        for (key, value) in values where registration[key] != value {
            registration[key] = value
            changed.insert(key)
        }
        // As on Apple platforms, registering is no change to announce; key streams still see the
        // values they now resolve to.
        return propagate(changed, domain: SharedDefaults.registrationDomain, origin: .local, notify: false, announce: false) { _ in true }
    }

    mutating func setVolatileDomain(_ values: [String: PlistValue]?, named name: String, of view: DefaultsView) -> [Delivery] {
        let id = ObjectIdentifier(view)
        guard views[id] != nil else { return [] }
        if name == SharedDefaults.registrationDomain {
            let changed = Set(registration.keys).union(values?.keys ?? [:].keys)
            registration = values ?? [:]
            return propagate(changed, domain: name, origin: .local, notify: true) { _ in true }
        }
        let old = views[id]?.volatile[name] ?? [:]
        views[id]?.volatile[name] = values
        let changed = Set(old.keys).union(values?.keys ?? [:].keys)
        if name == SharedDefaults.argumentDomain {
            return propagate(changed, domain: name, origin: .local, notify: true) { $0.view === view }
        }
        guard !changed.isEmpty else { return [] }
        // Other volatile domains are never searched (as on Apple platforms); only announced.
        return [Delivery(view: view, change: DefaultsChange(domain: name, keys: changed, origin: .local), values: [:], notify: true)]
    }
}
