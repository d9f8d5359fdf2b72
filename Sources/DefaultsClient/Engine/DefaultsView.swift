import DefaultsCore
import Foundation
import Synchronization

/// The resolved values of one ``SharedDefaults`` instance, and its observers.
///
/// Owner: ``Cache`` writes `snapshot` while holding its own lock (lock order: cache, then view);
/// any thread reads it, taking only this view's lock, so a cached read is one uncontended lock and
/// one dictionary lookup. `observers` is touched by the registering thread and the delivery queue.
final class DefaultsView: Sendable {
    struct Snapshot {
        /// Key → the first value along the search list: `dictionaryRepresentation()`.
        var resolved: [String: PlistValue] = [:]
        /// The keys whose resolved value an administrator forces (`objectIsForced(forKey:)`).
        var forced: Set<String> = []
        /// Every persistent domain of the search list is loaded (or the wait for it gave up).
        var ready = false
    }

    let snapshot = Mutex(Snapshot())
    let observers = Mutex(ObserverRegistry())
    /// The object posted with `didChangeNotification` (the `SharedDefaults`, or the
    /// `UserDefaults` subclass wrapping it).
    let owner = Mutex(WeakObject())

    /// The cached value of `key`, or `.none` when the view is not ready yet.
    @inline(__always)
    func cached(_ key: String) -> PlistValue?? {
        snapshot.withLock { snapshot in snapshot.ready ? .some(snapshot.resolved[key]) : .none }
    }

    func deliver(_ delivery: Delivery) {
        var changeHandlers: [@Sendable (DefaultsChange) -> Void] = []
        var keyCalls: [(@Sendable (PlistValue?) -> Void, PlistValue?)] = []
        observers.withLock { registry in
            if delivery.change != nil {
                for (_, observer) in registry.changeObservers.sorted(by: { $0.key < $1.key }) {
                    if observer.since < delivery.sequence { changeHandlers.append(observer.handler) }
                }
            }
            guard !delivery.values.isEmpty else { return }
            for (id, observer) in registry.keyObservers.sorted(by: { $0.key < $1.key }) {
                guard observer.since < delivery.sequence, let value = delivery.values[observer.key] else { continue }
                if observer.last.map({ $0 != value }) ?? true {
                    registry.keyObservers[id]?.last = .some(value)
                    keyCalls.append((observer.handler, value))
                }
            }
        }
        if let change = delivery.change {
            for handler in changeHandlers { handler(change) }
        }
        for (handler, value) in keyCalls { handler(value) }
        if delivery.notify, let change = delivery.change, let object = owner.withLock({ $0.object }) {
            NotificationCenter.default.post(
                name: UserDefaults.didChangeNotification, object: object,
                userInfo: [
                    SharedDefaults.changedKeysKey: change.keys.sorted(),
                    SharedDefaults.changedDomainKey: change.domain,
                    SharedDefaults.changeOriginKey: change.origin,
                ])
        }
    }

    /// Sends a new key observer the value its key had when it registered (on the delivery queue,
    /// queued at registration, so before any later change).
    func deliverInitial(_ value: PlistValue?, to id: Int) {
        let handler: (@Sendable (PlistValue?) -> Void)? = observers.withLock { registry in
            guard let observer = registry.keyObservers[id], observer.last == nil else { return nil }
            registry.keyObservers[id]?.last = .some(value)
            return observer.handler
        }
        handler?(value)
    }

    /// Takes an observer out of the registry and lets it go once the lock is released: its
    /// handler may hold the last reference to objects whose deinit comes back here (a
    /// `SharedDefaults` cancels its own observer as it goes), and would find the lock held.
    func removeObserver<Observer>(_ remove: (inout ObserverRegistry) -> Observer?) {
        let removed = observers.withLock { remove(&$0) }
        withExtendedLifetime(removed) {}
    }
}

/// Observers of one view.
struct ObserverRegistry {
    struct ChangeObserver {
        /// The last delivery queued before it registered; it sees only later ones.
        let since: UInt64
        let handler: @Sendable (DefaultsChange) -> Void
    }

    struct KeyObserver {
        let since: UInt64
        let key: String
        let handler: @Sendable (PlistValue?) -> Void
        /// The value last sent, so no observer sees the same value twice in a row.
        var last: PlistValue??
    }

    var nextID = 0
    var changeObservers: [Int: ChangeObserver] = [:]
    var keyObservers: [Int: KeyObserver] = [:]

    mutating func makeID() -> Int {
        nextID += 1
        return nextID
    }
}

struct WeakObject: @unchecked Sendable {
    weak var object: AnyObject?
}

/// One batch of changes for one view, computed under the cache lock and delivered, in order,
/// on the delivery queue.
struct Delivery: Sendable {
    let view: DefaultsView
    /// The domain-level change (nil when only resolved values moved, e.g. after `addSuite`).
    let change: DefaultsChange?
    /// Keys whose resolved value changed, with the new value (`nil`: now absent).
    let values: [String: PlistValue?]
    /// Post `UserDefaults.didChangeNotification`.
    let notify: Bool
    /// Its place in the order of all deliveries, given when it is queued.
    var sequence: UInt64 = 0
}
