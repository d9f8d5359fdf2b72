/// A set of changes to one domain: the type that flows from a client's request,
/// through the store and the writer, to every subscriber's `didChange` event.
///
/// A key mapped to `nil` is removed. Merging keeps the latest value of each key,
/// which is how bursts and slow subscribers are coalesced.
///
/// ```swift
/// var changes = Changeset(domain: try DomainName("com.example.bridge"))
/// changes.set("warpFactor", to: 7)
/// changes.remove("rank")
/// ```
public struct Changeset: Sendable, Hashable {
    public var domain: DomainName
    /// Key → new value, or `nil` when the key is removed.
    public var changes: [String: PlistValue?]

    public init(domain: DomainName, changes: [String: PlistValue?] = [:]) {
        self.domain = domain
        self.changes = changes
    }

    public var isEmpty: Bool { changes.isEmpty }

    public mutating func set(_ key: String, to value: PlistValue) { changes[key] = .some(value) }
    public mutating func remove(_ key: String) { changes[key] = .some(nil) }

    /// Folds a later changeset of the same domain into this one; later values win.
    public mutating func merge(_ later: Changeset) {
        precondition(later.domain == domain, "merging changesets of different domains")
        for (key, value) in later.changes { changes[key] = .some(value) }
    }

    /// Applies the changes to a domain's values and returns only the changes that
    /// really changed something (setting a key to its current value is not a change).
    public func apply(to values: inout [String: PlistValue]) -> Changeset {
        // Usually every change is effective; then the changeset itself is the answer and no
        // second dictionary is built.
        var ineffective: [String] = []
        for (key, value) in changes {
            if let value {
                if values.updateValue(value, forKey: key) == value { ineffective.append(key) }
            } else if values.removeValue(forKey: key) == nil {
                ineffective.append(key)
            }
        }
        if ineffective.isEmpty { return self }
        var effective = self
        for key in ineffective { effective.changes[key] = nil }
        return effective
    }

    /// The changeset that turns `old` into `new`.
    public static func difference(from old: [String: PlistValue], to new: [String: PlistValue], domain: DomainName) -> Changeset {
        var result = Changeset(domain: domain)
        for (key, value) in new where old[key] != value { result.changes[key] = .some(value) }
        for key in old.keys where new[key] == nil { result.changes[key] = .some(nil) }
        return result
    }
}
