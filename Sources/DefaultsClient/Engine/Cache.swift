import DefaultsCore
import Dispatch
import Foundation
import NIOCore
import Synchronization

/// A one-shot answer for a caller: a synchronize, an `async` write, or a first-load wait.
///
/// Completed at most once, from any thread (the answer, or the timeout scheduled on the loop).
final class Ticket: Sendable {
    let promise: EventLoopPromise<Void>
    private let completed = Mutex(false)

    init(eventLoop: EventLoop) { promise = eventLoop.makePromise() }

    /// A ticket nobody answered (its work was dropped with the engine) still completes its promise.
    deinit { fail(.unavailable("the request was abandoned")) }

    func succeed() { if claim() { promise.succeed(()) } }
    func fail(_ error: DefaultsClientError) { if claim() { promise.fail(error) } }

    private func claim() -> Bool {
        completed.withLock { done in
            defer { done = true }
            return !done
        }
    }

    /// Blocks the calling thread (never the event loop) until the ticket is answered.
    func wait() -> Result<Void, DefaultsClientError> {
        do {
            try promise.futureResult.wait()
            return .success(())
        } catch let error as DefaultsClientError {
            return .failure(error)
        } catch {
            return .failure(.unavailable("\(error)"))
        }
    }

    func value() async throws(DefaultsClientError) {
        do {
            try await promise.futureResult.get()
        } catch let error as DefaultsClientError {
            throw error
        } catch {
            throw .unavailable("\(error)")
        }
    }
}

/// The client's cache: every domain it has loaded, the registration domain and every view.
///
/// Owner: none; the mutex makes it shared. Any thread applies local writes (read-your-writes
/// needs them in the cache before `set` returns); the event loop applies the daemon's answers and
/// events. Views are updated under this lock and read under their own. Observers are called
/// later on `deliveryQueue`, never under a lock, in exactly the order the changes were made:
/// deliveries are numbered and queued before the lock is released.
final class Cache: Sendable {
    let state = Mutex(CacheState())
    let deliveryQueue = DispatchQueue(label: "defaultsd.client.delivery")

    /// Runs `body` under the lock and queues its deliveries, in order, before unlocking.
    func update<R>(_ body: (inout CacheState) -> (R, [Delivery])) -> R {
        state.withLock { state in
            let (result, deliveries) = body(&state)
            state.enqueue(deliveries, on: deliveryQueue)
            return result
        }
    }
}

extension CacheState {
    // MARK: Deliveries

    /// Numbers the deliveries and queues them (call with the lock held, so the order is the
    /// order of the changes).
    mutating func enqueue(_ deliveries: [Delivery], on queue: DispatchQueue) {
        guard !deliveries.isEmpty else { return }
        var numbered = deliveries
        for index in numbered.indices {
            deliverySequence += 1
            numbered[index].sequence = deliverySequence
        }
        queue.async { [numbered] in
            for delivery in numbered { delivery.view.deliver(delivery) }
        }
    }

    // MARK: Outbox

    /// Asks the connection to load (get and subscribe to) a domain, once.
    mutating func requestLoad(_ domain: DomainName) {
        if domains[domain] == nil { domains[domain] = DomainCache() }
        guard !domains[domain]!.requested else { return }
        domains[domain]!.requested = true
        outbox.append(.load(domain))
    }

    /// True when the caller must wake the event loop to drain the outbox.
    mutating func needsDrain() -> Bool {
        guard !outbox.isEmpty, !drainScheduled else { return false }
        drainScheduled = true
        return true
    }

    mutating func takeOutbox() -> [OutboxItem] {
        drainScheduled = false
        defer { outbox.removeAll(keepingCapacity: true) }
        return outbox
    }

    // MARK: Views

    mutating func addView(_ record: ViewRecord) -> [Delivery] {
        views[ObjectIdentifier(record.view)] = record
        for domain in record.searchList.storedDomains { requestLoad(domain) }
        return rebuild(ObjectIdentifier(record.view)).map { [$0] } ?? []
    }

    mutating func removeView(_ view: DefaultsView) {
        views[ObjectIdentifier(view)] = nil
    }

    /// Recomputes a view from scratch (after its search list or argument domain changed).
    mutating func rebuild(_ id: ObjectIdentifier) -> Delivery? {
        guard let record = views[id] else { return nil }
        var keys = Set<String>()
        for layer in record.searchList.layers { keys.formUnion(layerValues(layer, for: record)?.keys ?? [:].keys) }
        var resolved: [String: PlistValue] = [:]
        resolved.reserveCapacity(keys.count)
        var forced: Set<String> = []
        for key in keys {
            guard let found = resolve(record, key) else { continue }
            resolved[key] = found.value
            if found.isForced { forced.insert(key) }
        }
        let ready = record.searchList.storedDomains.allSatisfy { domains[$0]?.loaded == true || domains[$0]?.servedBeforeLoad == true }
        var values: [String: PlistValue?] = [:]
        record.view.snapshot.withLock { snapshot in
            for (key, value) in resolved where snapshot.resolved[key] != value { values[key] = .some(value) }
            for key in snapshot.resolved.keys where resolved[key] == nil { values[key] = .some(nil) }
            snapshot.resolved = resolved
            snapshot.forced = forced
            snapshot.ready = ready
        }
        guard !values.isEmpty else { return nil }
        return Delivery(view: record.view, change: nil, values: values, notify: false)
    }

    /// The first value of `key` along the view's search list (the daemon's `lookup` follows the
    /// same ``SearchList``).
    func resolve(_ record: ViewRecord, _ key: String) -> (value: PlistValue, isForced: Bool)? {
        guard let found = record.searchList.resolve({ layer in layerValues(layer, for: record)?[key] }) else { return nil }
        if case .managed = found.layer { return (found.value, true) }
        return (found.value, false)
    }

    /// Whether an administrator forces `key` on `domain`, as far as the cache knows it.
    func isForced(_ key: String, in domain: DomainName) -> Bool { domains[domain]?.forced[key] != nil }

    /// What the cache holds of one layer of a view's search list.
    private func layerValues(_ layer: SearchList.Layer, for record: ViewRecord) -> [String: PlistValue]? {
        switch layer {
        case .managed(let domain): domains[domain]?.forced
        case .argument: record.volatile[ArgumentDomain.name]
        case .persistent(let domain): domains[domain]?.visible
        case .bundle(let domain): domains[domain]?.bundleDefaults
        case .registration: registration
        }
    }

    /// Resolves `keys` again for one view and stores the results in its snapshot; answers the keys
    /// whose resolved value changed, with their new values (`nil` = now absent).
    private func refreshResolved(_ keys: Set<String>, of record: ViewRecord) -> [String: PlistValue?] {
        var fresh: [(String, PlistValue?)] = []
        fresh.reserveCapacity(keys.count)
        var forced: Set<String> = []
        for key in keys {
            let found = resolve(record, key)
            fresh.append((key, found?.value))
            if found?.isForced == true { forced.insert(key) }
        }
        var values: [String: PlistValue?] = [:]
        record.view.snapshot.withLock { snapshot in
            snapshot.forced.subtract(keys)
            snapshot.forced.formUnion(forced)
            for (key, value) in fresh where snapshot.resolved[key] != value {
                snapshot.resolved[key] = value
                values[key] = .some(value)
            }
        }
        return values
    }

    /// Brings every view that `includes` the change up to date and answers their deliveries.
    mutating func propagate(
        _ keys: Set<String>, domain: String, origin: ChangeOrigin, notify: Bool, announce: Bool = true,
        to includes: (ViewRecord) -> Bool
    ) -> [Delivery] {
        guard !keys.isEmpty else { return [] }
        var deliveries: [Delivery] = []
        for record in views.values where includes(record) {
            let values = refreshResolved(keys, of: record)
            let change = announce ? DefaultsChange(domain: domain, keys: keys, origin: origin) : nil
            guard change != nil || !values.isEmpty else { continue }
            deliveries.append(Delivery(view: record.view, change: change, values: values, notify: notify && announce))
        }
        return deliveries
    }

    mutating func propagate(_ keys: Set<String>, of domain: DomainName, origin: ChangeOrigin, announce: Bool = true) -> [Delivery] {
        propagate(keys, domain: domain.rawValue, origin: origin, notify: true, announce: announce) { $0.includes(domain) }
    }

    // MARK: Local writes

    /// Applies a local write to the cache at once and queues it for the daemon.
    mutating func localEdit(_ edit: Edit, to domain: DomainName, line: [UInt8], ticket: Ticket?) -> [Delivery] {
        requestLoad(domain)
        nextSequence += 1
        let sequence = nextSequence
        let changed: Set<String> = modify(domain) { cache in
            cache.appendPending(PendingWrite(sequence: sequence, edit: edit, acknowledged: nil))
            switch edit {
            case .changes(let changes): return cache.refresh(changes.map(\.key))
            case .replace: return cache.refresh(cache.allKeys())
            }
        }
        outbox.append(.write(sequence: sequence, domain: domain, line: line, ticket: ticket))
        return propagate(changed, of: domain, origin: .local)
    }

    /// The daemon accepted write `sequence`; the domain was at `generation` after it.
    mutating func acknowledge(_ sequence: UInt64, in domain: DomainName, generation: Int64) -> [Delivery] {
        let changed: Set<String> = modify(domain) { cache in
            guard let index = cache.pendingIndex(of: sequence) else { return [] }
            cache.acknowledgePending(at: index, generation: generation)
            return cache.refresh(cache.retire())
        }
        // A retiring write only changes what reads see when someone else wrote the key after it.
        return propagateRevealed(changed, of: domain, otherwise: .local)
    }

    /// Propagates changed keys, each with the origin of its confirmed value when a pending write
    /// had hidden it (and the write has now retired), else with `otherwise`.
    private mutating func propagateRevealed(_ changed: Set<String>, of domain: DomainName, otherwise: ChangeOrigin) -> [Delivery] {
        var byOrigin: [ChangeOrigin: Set<String>] = [:]
        modify(domain) { cache in
            for key in changed {
                byOrigin[cache.hiddenOrigins.removeValue(forKey: key) ?? otherwise, default: []].insert(key)
            }
            if !cache.hiddenOrigins.isEmpty {
                cache.hiddenOrigins = cache.hiddenOrigins.filter { key, _ in cache.isHidden(key) }
            }
        }
        guard !byOrigin.isEmpty else { return [] }
        var deliveries: [Delivery] = []
        for (origin, keys) in byOrigin.sorted(by: { $0.value.sorted().first! < $1.value.sorted().first! }) {
            deliveries += propagate(keys, of: domain, origin: origin)
        }
        return deliveries
    }

    /// The daemon refused write `sequence`: drop it, which puts the daemon's values back.
    mutating func refuse(_ sequence: UInt64, in domain: DomainName, error: DefaultsError) -> [Delivery] {
        failures.append(.writeRefused(domain: domain.rawValue, error))
        let changed: Set<String> = modify(domain) { cache in
            guard let index = cache.pendingIndex(of: sequence) else { return [] }
            let keys = cache.removePending(at: index)
            return cache.refresh(keys.union(cache.retire()))
        }
        return propagate(changed, of: domain, origin: .reverted(error))
    }

    mutating func takeFailures() -> [DefaultsClientError] {
        defer { failures.removeAll() }
        return failures
    }

    // MARK: The daemon's state

    /// A `didChange` event. Events at or below the cached generation are already included.
    mutating func applyEvent(
        to domain: DomainName, generation: Int64, changes: [String: PlistValue?], origin: ChangeOrigin
    ) -> [Delivery] {
        guard let cache = domains[domain], cache.loaded, generation > cache.generation else { return [] }
        let changed: Set<String> = modify(domain) { cache in
            for (key, value) in changes {
                cache.confirmed[key] = value
                if cache.isHidden(key) { cache.hiddenOrigins[key] = origin }
            }
            cache.generation = generation
            return cache.refresh(Set(changes.keys).union(cache.retire()))
        }
        return propagateRevealed(changed, of: domain, otherwise: origin)
    }

    /// A whole domain as `get` answered it, on first use or after (re)connecting. Notifies what
    /// changed when this process may have seen other values (a reload, or reads served while the
    /// daemon was unreachable). Answers the load waiters it satisfies.
    mutating func load(
        _ domain: DomainName, values: [String: PlistValue], generation: Int64, forced: [String: PlistValue] = [:],
        origin: ChangeOrigin = .resynchronized
    ) -> (tickets: [Ticket], deliveries: [Delivery]) {
        let (changed, announce): (Set<String>, Bool) = modify(domain) { cache in
            let announce = cache.loaded || cache.servedBeforeLoad
            if cache.loaded {
                // Answered writes are in these values, unless a crashed daemon lost them; either
                // way the daemon's word is final. Unanswered ones are being sent again.
                cache.dropAcknowledged()
            }
            let keys = cache.allKeys().union(values.keys)
            // Forced values are no part of `visible`: their keys are changes of their own.
            let forcedChanged = Set(forced.keys).union(cache.forced.keys).filter { forced[$0] != cache.forced[$0] }
            cache.forced = forced
            cache.confirmed = values
            cache.generation = generation
            cache.hiddenOrigins.removeAll()
            cache.loaded = true
            cache.servedBeforeLoad = false
            _ = cache.retire()
            return (cache.refresh(keys).union(forcedChanged), announce)
        }
        let deliveries = propagate(changed, of: domain, origin: origin, announce: announce)
        for record in views.values where record.includes(domain) {
            let ready = record.searchList.storedDomains.allSatisfy { domains[$0]?.loaded == true }
            if ready { record.view.snapshot.withLock { $0.ready = true } }
        }
        var tickets: [Ticket] = []
        loadWaiters.removeAll { waiter in
            guard waiter.domains.allSatisfy({ domains[$0]?.loaded == true }) else { return false }
            tickets.append(waiter.ticket)
            return true
        }
        return (tickets, deliveries)
    }

    /// A domain's Settings bundle layer as `bundleDefaults` answered it (before its first `get`, on
    /// reconnecting, or after a `bundleDefaultsChanged` event). Every view searching the domain
    /// announces the keys whose resolved value changed, with `origin`; nothing is announced before
    /// the domain's first load, as for `load`.
    mutating func setBundleDefaults(_ values: [String: PlistValue], of domain: DomainName, origin: ChangeOrigin) -> [Delivery] {
        let old: [String: PlistValue] = modify(domain) { cache in
            defer { cache.bundleDefaults = values }
            return cache.bundleDefaults
        }
        let keys = Set(old.keys).union(values.keys).filter { old[$0] != values[$0] }
        guard !keys.isEmpty, domain != .global else { return [] }
        let announce = domains[domain]!.loaded || domains[domain]!.servedBeforeLoad
        var deliveries: [Delivery] = []
        for record in views.values where record.includes(domain) {
            let values = refreshResolved(keys, of: record)
            guard !values.isEmpty else { continue }
            let change = announce ? DefaultsChange(domain: domain.rawValue, keys: Set(values.keys), origin: origin) : nil
            deliveries.append(Delivery(view: record.view, change: change, values: values, notify: announce))
        }
        return deliveries
    }

    /// The connection failed or closed: nobody waiting for a first load should wait longer.
    mutating func takeLoadWaiters() -> [Ticket] {
        defer { loadWaiters.removeAll() }
        return loadWaiters.map(\.ticket)
    }

    /// A reader gave up waiting for the first load of `record`'s domains: answer from what is here,
    /// and notify once the domains arrive.
    mutating func giveUpWaiting(for view: DefaultsView) {
        guard let record = views[ObjectIdentifier(view)] else { return }
        for domain in record.searchList.storedDomains where domains[domain]?.loaded != true {
            domains[domain]?.servedBeforeLoad = true
        }
        view.snapshot.withLock { $0.ready = true }
    }

    // MARK: -

    private mutating func modify<R>(_ domain: DomainName, _ body: (inout DomainCache) -> R) -> R {
        if domains[domain] == nil { domains[domain] = DomainCache() }
        return body(&domains[domain]!)
    }
}
