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

    /// The size after applying `changeset`, without applying it.
    func size(after changeset: Changeset) -> Int {
        var result = size
        changeset.forEachChange { key, newValue in
            if let old = values[key] { result -= DomainState.entrySize(key, old) }
            if let newValue { result += DomainState.entrySize(key, newValue) }
        }
        return result
    }
}
