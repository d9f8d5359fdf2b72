import DefaultsCore

/// One domain held in memory: its values, generation and size.
struct DomainState {
    var values: [String: PlistValue]
    /// Grows by one with every effective change; survives restarts through the generation ledger.
    var generation: Int64
    /// The domain's size in bytes of its wire encoding, kept up to date incrementally.
    var size: Int

    init(values: [String: PlistValue], generation: Int64) {
        self.values = values
        self.generation = generation
        self.size = DomainState.size(of: values)
    }

    static func entrySize(_ key: String, _ value: PlistValue) -> Int {
        // "key":value, — the key's quotes, colon and separating comma.
        key.utf8.count + 4 + WireValue.encodedSize(of: value)
    }

    static func size(of values: [String: PlistValue]) -> Int {
        values.reduce(2) { $0 + entrySize($1.key, $1.value) }
    }

    /// A changeset checked against the state, not applied yet: the size it would leave, and
    /// for a single change whether it changes anything and where its key is, so that applying
    /// it needs no second lookup.
    struct PreparedChange {
        let newSize: Int
        fileprivate let isSingle: Bool
        fileprivate let changesNothing: Bool
        fileprivate let index: Dictionary<String, PlistValue>.Index?
    }

    /// What applying `changeset` would do, without doing it (the store checks the size limit
    /// and the Settings bundles' specifiers in between).
    func prepare(_ changeset: Changeset) -> PreparedChange {
        var newSize = size
        if let (key, value) = changeset.onlyChange {
            let index = values.index(forKey: key)
            let old = index.map { values.values[$0] }
            if let old { newSize -= DomainState.entrySize(key, old) }
            if let value { newSize += DomainState.entrySize(key, value) }
            return PreparedChange(newSize: newSize, isSingle: true, changesNothing: old == value, index: index)
        }
        changeset.forEachChange { key, newValue in
            if let old = values[key] { newSize -= DomainState.entrySize(key, old) }
            if let newValue { newSize += DomainState.entrySize(key, newValue) }
        }
        return PreparedChange(newSize: newSize, isSingle: false, changesNothing: false, index: nil)
    }

    /// Applies a changeset prepared by ``prepare(_:)``, with nothing changed in between, and
    /// returns the changes that really changed something (setting a key to its current value
    /// is not a change).
    ///
    /// A single change equal to the current value (`0.0` for `-0.0`, another spelling of the
    /// same text) leaves the stored value, and its size, as they are.
    mutating func commit(_ changeset: Changeset, _ change: PreparedChange) -> Changeset {
        guard change.isSingle, let (key, value) = changeset.onlyChange else {
            size = change.newSize
            return changeset.apply(to: &values)
        }
        if change.changesNothing { return Changeset(domain: changeset.domain) }
        size = change.newSize
        switch (change.index, value) {
        case (let index?, let value?): values.values[index] = value
        case (let index?, nil): values.remove(at: index)
        case (nil, let value?): values[key] = value
        case (nil, nil): break  // removing an absent key changes nothing, handled above
        }
        return changeset
    }
}
