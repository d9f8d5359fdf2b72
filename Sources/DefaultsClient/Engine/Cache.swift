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
        let requestedBefore = modify(domain) { cache in
            defer { cache.requested = true }
            return cache.requested
        }
        guard !requestedBefore else { return }
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
    mutating func propagateRevealed(_ changed: Set<String>, of domain: DomainName, otherwise: ChangeOrigin) -> [Delivery] {
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
        // By each origin's first key; every set holds a key, as each was made by inserting one.
        for (origin, keys) in byOrigin.sorted(by: { ($0.value.min() ?? "") < ($1.value.min() ?? "") }) {
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

    // MARK: -

    mutating func modify<R>(_ domain: DomainName, _ body: (inout DomainCache) -> R) -> R {
        body(&domains[domain, default: DomainCache()])
    }
}
