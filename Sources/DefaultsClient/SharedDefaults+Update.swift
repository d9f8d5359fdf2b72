import DefaultsCore
import Foundation

/// Compare-and-set: read, change, and write only if nobody wrote in between.
extension SharedDefaults {
    /// Changes a key's value by `transform` applied to the value this instance's domain stores
    /// (the key's default while it stores none), as one compare-and-set: the write carries the
    /// value it was computed from (`apply` with `expect`). When another process changed the key
    /// meanwhile the daemon refuses it (`conflict`) with the value it found, and `transform` runs
    /// again on that, up to `maximumAttempts` times. Returns the value stored.
    ///
    /// ```swift
    /// extension Keys { static let launches = Key<Int>("launches", default: 0) }
    /// try await defaults.update(.launches) { $0 + 1 }   // two processes at once: both counted
    /// ```
    ///
    /// Other layers of the search list (a by-host variant, `NSGlobalDomain`, registered
    /// defaults) are not what it changes, and not what `transform` sees. A write whose answer is
    /// lost with the connection is sent again on the next one, like every write; if the first
    /// had landed, the second meets its own value as a conflict, and `transform` runs once more.
    @discardableResult
    public func update<Value>(
        _ key: Key<Value>, maximumAttempts: Int = 1000, _ transform: @Sendable (Value) throws -> Value
    ) async throws -> Value {
        registerDefault(of: key)
        await load()
        guard var stored = engine.cache.state.withLock({ $0.domains[domain]?.loaded == true ? .some($0.domains[domain]?.visible[key.name]) : nil })
        else { throw DefaultsClientError.unavailable("\(domainName) is not loaded from defaultsd") }
        var lastConflict: DefaultsError?
        for _ in 0..<max(maximumAttempts, 1) {
            let current = stored.map { key.value(from: $0, reportingTo: self) } ?? key.defaultValue
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
            guard case .writeRefused(_, let refusal) = failure, refusal.code == .conflict, let conflict = refusal.conflict else { throw failure }
            // The next attempt starts from what the daemon found.
            stored = conflict.found
            lastConflict = refusal
        }
        throw DefaultsClientError.writeRefused(domain: domainName, lastConflict ?? DefaultsError(.conflict, "\(key.name) kept changing"))
    }
}
