import DefaultsCore

/// One domain held in memory: its values, generation and size.
struct DomainState {
    var values: [String: PlistValue]
    /// Grows by one with every effective change; survives restarts through the generation ledger.
    var generation: Int64
    /// The domain's size in bytes of its wire encoding, kept up to date incrementally.
    var size: Int
    /// The size of the domain's file as XML, never smaller than the binary form of the same
    /// values, kept up to date incrementally: XML grows with nesting (a tab per level on every
    /// line) where the wire encoding does not, and a change that would take the file past what
    /// a property-list file may be is refused, so the daemon never holds what it cannot write.
    var fileBytes: Int

    init(values: [String: PlistValue], generation: Int64) {
        self.values = values
        self.generation = generation
        self.size = DomainState.size(of: values)
        self.fileBytes = values.reduce(XMLPropertyList.dictionaryFileOverheadBytes) {
            $0 + XMLPropertyList.encodedEntryBytes(key: $1.key, value: $1.value)
        }
    }

    static func entrySize(_ key: String, _ value: PlistValue) -> Int {
        // "key":value, — the key's quotes, colon and separating comma.
        key.utf8.count + 4 + WireValue.encodedSize(of: value)
    }

    static func size(of values: [String: PlistValue]) -> Int {
        values.reduce(2) { $0 + entrySize($1.key, $1.value) }
    }

    /// A changeset checked against the state, not applied yet: the size it would leave,
    /// whether it changes anything, and for a single change where its key is, so that applying
    /// it needs no second lookup.
    struct PreparedChange {
        let newSize: Int
        let newFileBytes: Int
        fileprivate let changesNothing: Bool
        fileprivate let index: Dictionary<String, PlistValue>.Index?
    }

    /// What applying `changeset` would do, without doing it (the store checks the size limit
    /// and the Settings bundles' specifiers in between). A value equal to the one stored
    /// (`-0.0` for `0.0`, another spelling of the same text) is no change, as in
    /// ``Changeset/apply(to:)``, and does not count towards the size.
    func prepare(_ changeset: Changeset) -> PreparedChange {
        var newSize = size
        var newFileBytes = fileBytes
        var changesNothing = true
        var index: Dictionary<String, PlistValue>.Index?
        changeset.forEachChange { key, value in
            let found = values.index(forKey: key)
            let old = found.map { values.values[$0] }
            guard old != value else { return }
            changesNothing = false
            index = found
            if let old {
                newSize -= DomainState.entrySize(key, old)
                newFileBytes -= XMLPropertyList.encodedEntryBytes(key: key, value: old)
            }
            if let value {
                newSize += DomainState.entrySize(key, value)
                newFileBytes += XMLPropertyList.encodedEntryBytes(key: key, value: value)
            }
        }
        return PreparedChange(newSize: newSize, newFileBytes: newFileBytes, changesNothing: changesNothing, index: index)
    }

    /// What the keys of `changeset` hold now, for the change journal. A single change's value
    /// is read at the place ``prepare(_:)`` found, without hashing its key again.
    func valuesBefore(_ changeset: Changeset, _ change: PreparedChange) -> ChangeJournal.Before {
        // `count`, not `onlyChange`: that would copy the change's key and value only to drop them.
        if changeset.count == 1 { return .one(change.index.map { values.values[$0] }) }
        var found: [String: PlistValue] = [:]
        changeset.forEachChange { key, _ in found[key] = values[key] }
        return .many(found)
    }

    /// Applies a changeset prepared by ``prepare(_:)``, with nothing changed in between, and
    /// returns the changes that really changed something.
    mutating func commit(_ changeset: Changeset, _ change: PreparedChange) -> Changeset {
        if change.changesNothing { return Changeset(domain: changeset.domain) }
        size = change.newSize
        fileBytes = change.newFileBytes
        guard let (key, value) = changeset.onlyChange else { return changeset.apply(to: &values) }
        switch (change.index, value) {
        case (let index?, let value?): values.values[index] = value
        case (let index?, nil): values.remove(at: index)
        case (nil, let value?): values[key] = value
        case (nil, nil): break  // removing an absent key changes nothing, handled above
        }
        return changeset
    }
}
