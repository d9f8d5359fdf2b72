/// A set of changes to one domain: the type that flows from a client's request, through the
/// store, to every subscriber's `didChange` event. (The writer does not take changesets: it
/// writes snapshots of whole dirty domains.)
///
/// A key mapped to `nil` is removed. Merging keeps the latest value of each key,
/// which is how bursts and slow subscribers are coalesced. Iterating gives each
/// changed key once, in no particular order.
///
/// ```swift
/// var changes = Changeset(domain: try DomainName("com.example.bridge"))
/// changes.set("warpFactor", to: 7)
/// changes.remove("rank")
/// for (key, value) in changes { print(key, value ?? "removed") }
/// ```
public struct Changeset: Sendable, Hashable, Sequence {
    public typealias Element = (key: String, value: PlistValue?)

    public var domain: DomainName
    @usableFromInline var storage: Storage

    /// Most changesets hold one change (every `set` and `remove`); that one is kept without a
    /// dictionary, which would cost an allocation and a hash on the path of every write.
    @usableFromInline enum Storage: Sendable {
        case one(key: String, value: PlistValue?)
        case many([String: PlistValue?])
    }

    public init(domain: DomainName, changes: [String: PlistValue?] = [:]) {
        self.domain = domain
        self.storage = .many(changes)
    }

    /// Key → new value, or `nil` when the key is removed.
    public var changes: [String: PlistValue?] {
        switch storage {
        case .one(let key, let value): [key: value]
        case .many(let changes): changes
        }
    }

    public var isEmpty: Bool { count == 0 }

    /// The change, when this changeset holds exactly one (every `set` and `remove`).
    public var onlyChange: (key: String, value: PlistValue?)? {
        switch storage {
        case .one(let key, let value): (key, value)
        case .many(let changes): changes.count == 1 ? changes.first.map { ($0.key, $0.value) } : nil
        }
    }

    public var count: Int {
        switch storage {
        case .one: 1
        case .many(let changes): changes.count
        }
    }

    /// The change to `key`: `.some(nil)` when it is removed, `nil` when the changeset leaves it alone.
    public subscript(key: String) -> PlistValue?? {
        switch storage {
        case .one(let changed, let value): changed == key ? .some(value) : nil
        case .many(let changes): changes[key]
        }
    }

    public mutating func set(_ key: String, to value: PlistValue) { record(key, .some(value)) }
    public mutating func remove(_ key: String) { record(key, nil) }

    private mutating func record(_ key: String, _ value: PlistValue?) {
        switch storage {
        case .many(let changes) where changes.isEmpty:
            storage = .one(key: key, value: value)
        case .one(let changed, _) where changed == key:
            storage = .one(key: key, value: value)
        case .one(let changed, let old):
            storage = .many([changed: old, key: value])
        case .many(var changes):
            storage = .many([:])  // changes is now the only reference: updated in place
            changes[key] = .some(value)
            storage = .many(changes)
        }
    }

    /// Folds a later changeset of the same domain into this one; later values win.
    public mutating func merge(_ later: Changeset) {
        precondition(later.domain == domain, "merging changesets of different domains")
        later.forEachChange { key, value in record(key, value) }
    }

    /// Calls `body` with each change, as `for (key, value) in changeset` does, but without
    /// building an iterator: the one change of a `set` or `remove` is handed over directly.
    /// The write path walks every changeset two or three times, and the iterator (an optional
    /// element beside an optional dictionary iterator) would outweigh the work it walks. It is
    /// inlinable, so that each caller's closure is compiled into the caller, not called through
    /// a context made at each change.
    @inlinable public func forEachChange(_ body: (_ key: String, _ value: PlistValue?) throws -> Void) rethrows {
        switch storage {
        case .one(let key, let value): try body(key, value)
        case .many(let changes): for (key, value) in changes { try body(key, value) }
        }
    }

    /// Applies the changes to a domain's values and returns only the changes that
    /// really changed something. Setting a key to a value equal to its current one is not a
    /// change, and leaves the stored value as it is (`0.0` stays when `-0.0` is set), so what
    /// is stored is always what the last event told.
    public func apply(to values: inout [String: PlistValue]) -> Changeset {
        // Usually every change is effective; then the changeset itself is the answer and no
        // second one is built.
        var ineffective: [String] = []
        forEachChange { key, value in
            if let value {
                if let old = values.updateValue(value, forKey: key), old == value {
                    values[key] = old
                    ineffective.append(key)
                }
            } else if values.removeValue(forKey: key) == nil {
                ineffective.append(key)
            }
        }
        if ineffective.isEmpty { return self }
        var effective = changes
        for key in ineffective { effective[key] = nil }
        return Changeset(domain: domain, changes: effective)
    }

    /// The changeset that turns `old` into `new`.
    public static func difference(from old: [String: PlistValue], to new: [String: PlistValue], domain: DomainName) -> Changeset {
        var changes: [String: PlistValue?] = [:]
        for (key, value) in new where old[key] != value { changes[key] = .some(value) }
        for key in old.keys where new[key] == nil { changes[key] = .some(nil) }
        return Changeset(domain: domain, changes: changes)
    }

    // MARK: - Sequence

    public struct Iterator: IteratorProtocol {
        private var one: Element?
        private var many: Dictionary<String, PlistValue?>.Iterator?

        fileprivate init(_ storage: Storage) {
            switch storage {
            case .one(let key, let value): one = (key, value)
            case .many(let changes): many = changes.makeIterator()
            }
        }

        public mutating func next() -> Element? {
            if let element = one {
                one = nil
                return element
            }
            return many?.next()
        }
    }

    public func makeIterator() -> Iterator { Iterator(storage) }

    public var underestimatedCount: Int { count }

    // MARK: - Hashable: the same domain and the same changes, however they are held

    public static func == (lhs: Changeset, rhs: Changeset) -> Bool {
        guard lhs.domain == rhs.domain, lhs.count == rhs.count else { return false }
        return lhs.allSatisfy { key, value in rhs[key] == .some(value) }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(domain)
        hasher.combine(changes)
    }
}
