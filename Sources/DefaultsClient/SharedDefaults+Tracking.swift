import DefaultsCore
import Foundation
import Observation
import Synchronization

/// Where Swift's Observation framework learns which defaults a piece of code read: every typed
/// read (`defaults[key]`, `@Default`) is an access to the key's path here, and every change of a
/// key along the search list, whoever made it (this process, another one, a hand edit, managed
/// preferences, roaming), is a mutation of it. So `withObservationTracking`, and SwiftUI-style
/// observers built on it, are told when a default they read changes; no macro is needed.
///
/// Owned by one ``SharedDefaults``; its registrar is safe from any thread.
@usableFromInline
final class ObservationAnchor: Observable, Sendable {
    private let registrar = ObservationRegistrar()

    /// One observable path per key: `\ObservationAnchor.[key: "warpFactor"]`.
    subscript(key key: String) -> Int { 0 }

    static func path(of key: String) -> KeyPath<ObservationAnchor, Int> { \ObservationAnchor.[key: key] }

    @usableFromInline
    func access(_ path: KeyPath<ObservationAnchor, Int>) { registrar.access(self, keyPath: path) }

    func changed(_ keys: Set<String>) {
        for key in keys { registrar.withMutation(of: self, keyPath: Self.path(of: key)) {} }
    }
}

/// What ``SharedDefaults/changes(of:)`` remembers between deliveries.
struct KeyChangeTracker {
    /// The value last delivered; none until the key observer's first, the value now.
    var value: PlistValue?? = .none
    var origin: ChangeOrigin = .local
}

/// One change of a typed key, as Swift code receives it: the key, the value before and after
/// (each the key's default while absent or undecodable), and who made it.
public struct KeyChange<Value: Sendable>: Sendable {
    public var key: String
    public var oldValue: Value
    public var newValue: Value
    public var origin: ChangeOrigin
}

extension SharedDefaults {
    /// Each change of the key's value along the search list, with the old and new value and its
    /// origin, for as long as the stream is iterated; each change with the value it brought, even
    /// when another follows at once. Keys may contain dots. Blocks, the first time, until the
    /// search list is loaded, as ``observe(key:_:)`` does.
    ///
    /// ```swift
    /// for await change in defaults.changes(of: .warp) {
    ///     print("\(change.key): \(change.oldValue) → \(change.newValue) by \(change.origin)")
    /// }
    /// ```
    public func changes<Value>(of key: Key<Value>) -> AsyncStream<KeyChange<Value>> {
        registerDefault(of: key)
        let (stream, continuation) = AsyncStream.makeStream(of: KeyChange<Value>.self)
        // Both observers run on the delivery queue, and within one delivery the change observers
        // before the key observers: the origin of the change that brings a value is recorded,
        // then that value (the key's own, not whatever the key holds by then) is yielded.
        let seen = Mutex(KeyChangeTracker())
        let origins = observe { change in
            guard change.keys.contains(key.name) else { return }
            seen.withLock { $0.origin = change.origin }
        }
        let values = observe(key: key.name) { [self] new in
            let (old, origin) = seen.withLock { state -> (PlistValue??, ChangeOrigin) in
                defer {
                    state.value = .some(new)
                    state.origin = .local  // a value no change announced (a registration) is this process's
                }
                return (state.value, state.origin)
            }
            guard case .some(let old) = old else { return }
            continuation.yield(KeyChange(
                key: key.name, oldValue: key.value(from: old, reportingTo: self),
                newValue: key.value(from: new, reportingTo: self), origin: origin))
        }
        continuation.onTermination = { _ in
            origins.cancel()
            values.cancel()
        }
        return stream
    }
}
