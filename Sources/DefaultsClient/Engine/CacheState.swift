import DefaultsCore
import DequeModule
import Foundation

/// A local change to one domain, as sent to the daemon.
enum Edit: Sendable {
    /// Keys to set (a value) or remove (`nil`): the same `Changeset` the daemon applies and announces.
    case changes(Changeset)
    /// Every value of the domain (`replaceDomain`; empty for `deleteDomain`).
    case replace([String: PlistValue])
}

/// A local write the daemon has not yet confirmed into ``DomainCache/confirmed``.
struct PendingWrite {
    let sequence: UInt64
    let edit: Edit
    /// The domain's generation in the daemon's answer; the write retires once the events have
    /// brought ``DomainCache/generation`` to it.
    var acknowledged: Int64?
}

/// What the client knows about one domain.
///
/// `visible` is `confirmed` with the pending local writes applied in order: reads see their own
/// writes at once, and a refused write simply drops out of `pending`, which puts the daemon's
/// value back. Indexes over `pending` (`pendingCounts`, `newest`) keep every step proportional
/// to the keys it touches, however many writes are in flight.
struct DomainCache {
    /// The daemon's values as of `generation`, kept exact by `didChange` events.
    var confirmed: [String: PlistValue] = [:]
    var generation: Int64 = 0
    var loaded = false
    /// A load (subscribe + get) has been asked of the connection.
    var requested = false
    /// A reader was answered before the first load (the daemon was unreachable), so the first
    /// load must notify what it changes.
    var servedBeforeLoad = false
    /// Local writes not yet confirmed, oldest first (sequence numbers ascending).
    private(set) var pending: Deque<PendingWrite> = []
    /// Key → how many pending `.changes` writes touch it.
    private var pendingCounts: [String: Int] = [:]
    /// Key → its value in the newest pending `.changes` write touching it (nil: removed).
    private var newest: [String: PlistValue?] = [:]
    /// How many pending writes replace the whole domain.
    private var pendingReplaces = 0
    /// What reads see.
    var visible: [String: PlistValue] = [:]
    /// Who made the confirmed value of a key that a pending write still hides; when the write
    /// retires and the value shows, the change is theirs.
    var hiddenOrigins: [String: ChangeOrigin] = [:]
    /// The domain's Settings bundle layer (`bundleDefaults`): searched after every persistent
    /// domain of a view and before the registration domain. Never part of `visible`.
    var bundleDefaults: [String: PlistValue] = [:]
    /// The keys the administrator forces on the domain (`get`'s `forced`): searched before
    /// everything else. Never part of `visible`.
    var forced: [String: PlistValue] = [:]

    // MARK: Pending writes

    mutating func appendPending(_ write: PendingWrite) {
        pending.append(write)
        switch write.edit {
        case .changes(let changes):
            for (key, value) in changes {
                pendingCounts[key, default: 0] += 1
                newest[key] = .some(value)
            }
        case .replace:
            pendingReplaces += 1
        }
    }

    /// Removes one pending write; answers the keys whose overlay it was part of.
    @discardableResult
    mutating func removePending(at index: Int) -> Set<String> {
        let write = pending.remove(at: index)
        switch write.edit {
        case .changes(let changes):
            for (key, _) in changes {
                guard let counted = pendingCounts[key] else { continue }
                let count = counted - 1
                if count == 0 {
                    pendingCounts[key] = nil
                    newest[key] = nil
                } else {
                    pendingCounts[key] = count
                    // The oldest write is never the newest for a key another write still touches;
                    // one from the middle may be (a refusal): look again.
                    if index > 0 { newest[key] = .some(newestValue(of: key)) }
                }
            }
            return Set(changes.map(\.key))
        case .replace:
            pendingReplaces -= 1
            return allKeys()
        }
    }

    private func newestValue(of key: String) -> PlistValue? {
        for write in pending.reversed() {
            if case .changes(let changes) = write.edit, let value = changes[key] { return value }
        }
        return nil
    }

    /// The index of write `sequence` (binary search: sequences ascend).
    func pendingIndex(of sequence: UInt64) -> Int? {
        var low = 0
        var high = pending.count
        while low < high {
            let middle = (low + high) / 2
            if pending[middle].sequence < sequence { low = middle + 1 } else { high = middle }
        }
        return low < pending.count && pending[low].sequence == sequence ? low : nil
    }

    mutating func acknowledgePending(at index: Int, generation: Int64) {
        pending[index].acknowledged = generation
    }

    /// Drops the writes the daemon answered (after a reload, whose values include them).
    mutating func dropAcknowledged() {
        while let index = pending.firstIndex(where: { $0.acknowledged != nil }) { removePending(at: index) }
    }

    /// True when a pending write hides `key`'s confirmed value.
    func isHidden(_ key: String) -> Bool { pendingReplaces > 0 || pendingCounts[key] != nil }

    /// Removes the writes at the front whose generation the confirmed values have reached;
    /// answers the keys they touched.
    mutating func retire() -> Set<String> {
        var touched = Set<String>()
        while let first = pending.first, let generation = first.acknowledged, generation <= self.generation {
            touched.formUnion(removePending(at: 0))
        }
        return touched
    }

    // MARK: Visible values

    /// The value `key` has once the pending writes are applied to `confirmed`.
    func overlaid(_ key: String) -> PlistValue? {
        if pendingReplaces == 0 {
            if let value = newest[key] { return value }
            return confirmed[key]
        }
        for write in pending.reversed() {
            switch write.edit {
            case .changes(let changes):
                if let change = changes[key] { return change }
            case .replace(let values):
                return values[key]
            }
        }
        return confirmed[key]
    }

    /// Recomputes `visible` for `keys`; answers the keys whose visible value changed.
    mutating func refresh<Keys: Sequence>(_ keys: Keys) -> Set<String> where Keys.Element == String {
        var changed = Set<String>()
        for key in keys {
            let value = overlaid(key)
            if visible[key] != value {
                visible[key] = value
                changed.insert(key)
            }
        }
        return changed
    }

    /// Every key some value of this domain has, anywhere (for edits that touch the whole domain).
    func allKeys() -> Set<String> {
        var keys = Set(confirmed.keys).union(visible.keys)
        for write in pending {
            switch write.edit {
            case .changes(let changes): keys.formUnion(changes.map(\.key))
            case .replace(let values): keys.formUnion(values.keys)
            }
        }
        return keys
    }
}

/// One `SharedDefaults` instance as the cache sees it: its search list and volatile domains.
struct ViewRecord {
    let view: DefaultsView
    var searchList: SearchList
    /// Volatile domains by name; `NSArgumentDomain` is searched first.
    var volatile: [String: [String: PlistValue]]

    func includes(_ domain: DomainName) -> Bool { searchList.includes(domain) }
}

/// Work for the connection, queued by any thread and drained by the event loop in order.
enum OutboxItem: Sendable {
    case load(DomainName)
    case write(sequence: UInt64, domain: DomainName, line: [UInt8], ticket: Ticket?)
    case synchronize(Ticket)
    /// A caller started waiting for loads: release it at once if the daemon is unreachable.
    case checkWaiters
    /// Typed keys' defaults, registered with the daemon for the domain, so that other clients
    /// (`defaults read-effective`, the Settings app) show them; sent again on every connection.
    case publishDefaults(DomainName, [String: PlistValue])
}

/// A caller waiting for the first load of its search list.
struct LoadWaiter {
    var domains: Set<DomainName>
    var ticket: Ticket
}

/// Everything the cache holds, guarded by ``Cache``'s mutex.
struct CacheState {
    var domains: [DomainName: DomainCache] = [:]
    /// `NSRegistrationDomain`: process-wide (per daemon), never sent to the daemon.
    var registration: [String: PlistValue] = [:]
    var views: [ObjectIdentifier: ViewRecord] = [:]
    var outbox: [OutboxItem] = []
    var drainScheduled = false
    var nextSequence: UInt64 = 0
    /// Writes the daemon refused since the last `synchronize` answer.
    var failures: [DefaultsClientError] = []
    var loadWaiters: [LoadWaiter] = []
    /// The number of the last delivery queued; an observer ignores deliveries queued before it.
    var deliverySequence: UInt64 = 0
}
