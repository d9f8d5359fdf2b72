import DefaultsCore
import Dispatch
import Foundation
import NIOCore
import Synchronization

/// What the daemon sends, taken into the cache: loaded domains, answers to writes, and changes.
extension CacheState {
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
        let announce = domains[domain].map { $0.loaded || $0.servedBeforeLoad } ?? false
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
}
