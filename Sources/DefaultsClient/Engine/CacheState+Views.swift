import DefaultsCore
import Dispatch
import Foundation
import NIOCore
import Synchronization

/// The views the cache hands out: each domain's values as the search list layers them.
extension CacheState {
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
    func refreshResolved(_ keys: Set<String>, of record: ViewRecord) -> [String: PlistValue?] {
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
}
