import DefaultsCore
import Foundation

/// Observing changes. Every observer is called on one serial delivery queue, in the order the
/// changes happened, never on the caller's thread and never under a lock.
///
/// A change made through this process is reported at once with origin ``ChangeOrigin/local``;
/// a change made by another process as soon as the daemon's event arrives (``ChangeOrigin/remote(_:)``);
/// changes found after reconnecting with ``ChangeOrigin/resynchronized``.
extension SharedDefaults {
    /// Every change to a domain of this instance's search list (and to its volatile domains and
    /// the registration domain), for as long as the stream is iterated.
    public func changes() -> AsyncStream<DefaultsChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: DefaultsChange.self)
        let token = observe { continuation.yield($0) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// The value of `key` now, then each new value (nil: absent) whenever it changes along the
    /// search list. Keys may contain dots. The first element comes once the search list is loaded.
    public func values(forKey key: String) -> AsyncStream<PlistValue?> {
        stream(forKey: key) { $0 }
    }

    /// ``values(forKey:)`` converted to `T` (nil when absent or not convertible).
    public func values<T: DefaultsValue>(forKey key: String, as type: T.Type = T.self) -> AsyncStream<T?> {
        stream(forKey: key) { $0.flatMap(T.init(defaultsValue:)) }
    }

    func stream<T: Sendable>(forKey key: String, _ transform: @escaping @Sendable (PlistValue?) -> T) -> AsyncStream<T> {
        let (stream, continuation) = AsyncStream.makeStream(of: T.self)
        let token = observe(key: key) { continuation.yield(transform($0)) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    /// Calls `handler` with every change (see ``changes()``) made after this call, until the token
    /// is cancelled or released.
    public func observe(_ handler: @escaping @Sendable (DefaultsChange) -> Void) -> DefaultsObservation {
        let view = self.view
        let id = engine.cache.state.withLock { state in
            view.observers.withLock { registry in
                let id = registry.makeID()
                registry.changeObservers[id] = ObserverRegistry.ChangeObserver(since: state.deliverySequence, handler: handler)
                return id
            }
        }
        return DefaultsObservation { view.removeObserver { $0.changeObservers.removeValue(forKey: id) } }
    }

    /// Calls `handler` with the value of `key` now, then with each new value, until the token is
    /// cancelled or released. Blocks, the first time, until the search list is loaded.
    public func observe(key: String, _ handler: @escaping @Sendable (PlistValue?) -> Void) -> DefaultsObservation {
        if !view.snapshot.withLock({ $0.ready }) { engine.waitUntilReady(view) }
        let view = self.view
        let queue = engine.cache.deliveryQueue
        let id = engine.cache.state.withLock { state in
            let id = view.observers.withLock { registry in
                let id = registry.makeID()
                registry.keyObservers[id] = ObserverRegistry.KeyObserver(
                    since: state.deliverySequence, key: key, handler: handler, last: nil)
                return id
            }
            // Queued under the cache lock: after every earlier change, before every later one.
            let current = view.snapshot.withLock { $0.resolved[key] }
            queue.async { view.deliverInitial(current, to: id) }
            return id
        }
        return DefaultsObservation { view.removeObserver { $0.keyObservers.removeValue(forKey: id) } }
    }
}
