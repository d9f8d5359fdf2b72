import DefaultsCore
import Foundation

/// Compare-and-set: read, change, and write only if nobody wrote in between.
extension SharedDefaults {
    /// Changes a key's value by `transform` applied to the value the daemon holds, as one
    /// compare-and-set: the write carries the value it was computed from (`apply` with `expect`),
    /// and when another process changed the key meanwhile the daemon refuses it (`conflict`), the
    /// new value arrives, and `transform` runs again on it, up to `maximumAttempts` times.
    /// Returns the value stored.
    ///
    /// ```swift
    /// extension Keys { static let launches = Key<Int>("launches", default: 0) }
    /// try await defaults.update(.launches) { $0 + 1 }   // two processes at once: both counted
    /// ```
    ///
    /// The value compared is the one this instance's domain stores (absent while only a default
    /// stands for it); `transform` sees the key's value as reads do.
    @discardableResult
    public func update<Value>(
        _ key: Key<Value>, maximumAttempts: Int = 1000, _ transform: @Sendable (Value) throws -> Value
    ) async throws -> Value {
        registerDefault(of: key)
        await load()
        var lastConflict: DefaultsError?
        for _ in 0..<maximumAttempts {
            let stored = engine.cache.state.withLock { $0.domains[domain]?.visible[key.name] }
            let current = key.value(from: value(forKey: key.name), reportingTo: self)
            let new = try transform(current)
            let encoded: PlistValue?
            do {
                encoded = try key.encode(new)
            } catch {
                throw DefaultsClientError.notAPropertyList(path: key.name, reason: "\(error)")
            }
            var checked: PlistValue?
            if let encoded { checked = try PlistBridge.checked(encoded, path: key.name) }
            let changes = Changeset(domain: domain, changes: [key.name: checked])
            let ticket = Ticket(eventLoop: engine.eventLoop)
            engine.edit(.changes(changes), of: domain, ticket: ticket, expecting: [key.name: stored])
            let outcome = await engine.result(of: ticket, timeout: configuration.synchronizeTimeout)
            guard case .failure(let failure) = outcome else { return new }
            guard case .writeRefused(_, let refusal) = failure, refusal.code == .conflict else { throw failure }
            // The daemon sent the newer value before this answer: the cache holds it now.
            lastConflict = refusal
        }
        throw DefaultsClientError.writeRefused(domain: domainName, lastConflict ?? DefaultsError(.conflict, "\(key.name) kept changing"))
    }
}
