import DefaultsCore
import FoundationEssentials

/// The journal's entries recorded on the loop and not yet handed to the journal thread, each
/// domain's in a ``PendingEntries`` list. It is one value so that recording a change is one
/// access to the journal's state (each access to a class's stored property is checked for
/// exclusivity at run time), and the list of the domain recorded last is held out of the
/// dictionary, so that a burst of changes to one domain is appended without hashing the
/// domain's name at each change.
///
/// Owned by the ``ChangeJournal`` on the loop.
struct RecordedChanges {
    /// Every domain's list, but that of ``currentDomain`` while it is out (``settle()``).
    private var lists: [DomainName: PendingEntries] = [:]
    /// The domain recorded last, as the store holds its name (``DomainTable/domain(at:)``), so
    /// that the next change's domain is compared with it by storage; its list is
    /// ``currentEntries``, empty while there is none.
    private var currentDomain: DomainName?
    private var currentEntries = PendingEntries()
    /// The keys the Settings bundles hold secret, and those of ``currentDomain``, looked up when
    /// it became the domain recorded last and again whenever the keys are replaced.
    private var secureKeys = SecureKeys()
    private var currentSecureKeys: Set<String> = []

    /// The keys held secret from now on: a change to one is recorded without its values.
    mutating func replaceSecureKeys(_ keys: SecureKeys) {
        secureKeys = keys
        currentSecureKeys = currentDomain.map { keys.keys(of: $0) } ?? []
    }

    /// Records one entry per key `effective` changed in `domain` (its domain, as the store holds
    /// its name), with what the key held `before`; a secure key (``replaceSecureKeys(_:)``) is
    /// recorded without its values. The domain's list is then held within `bounds`.
    mutating func record(
        _ effective: Changeset, before: consuming ChangeJournal.Before, in domain: DomainName, generation: Int64, time: Date,
        origin: Origin, bounds: JournalBounds
    ) {
        if currentDomain != domain {
            settle()
            currentEntries = lists.removeValue(forKey: domain) ?? PendingEntries()
            currentDomain = domain
            currentSecureKeys = secureKeys.keys(of: domain)
        }
        switch consume before {
        case .one(let old):
            // A changeset with one change, handed over without copying its key and value out.
            effective.forEachChange { key, new in
                currentEntries.append(
                    id: generation, time: time, key: key, old: old, new: new, isSecure: isSecret(key), origin: origin)
            }
        case .many(let before):
            // One change's keys in a stable order, as its event lists them.
            for (key, new) in effective.sorted(by: { $0.key < $1.key }) {
                currentEntries.append(
                    id: generation, time: time, key: key, old: before[key], new: new, isSecure: isSecret(key), origin: origin)
            }
        }
        currentEntries.keep(within: bounds)
    }

    /// Whether `key` of the domain recorded last is held secret.
    private func isSecret(_ key: String) -> Bool {
        !currentSecureKeys.isEmpty && currentSecureKeys.contains(key)
    }

    /// Whether any entry of `domain` waits.
    func has(_ domain: DomainName) -> Bool {
        currentDomain == domain || lists[domain] != nil
    }

    /// Takes the entries of `domain` up to `generation` (those whose changes are durable), and
    /// leaves the rest; nil when there are none.
    mutating func take(_ domain: DomainName, upTo generation: Int64) -> PendingEntries? {
        settle()
        guard let recorded = lists[domain] else { return nil }
        let count = recorded.count(upTo: generation)
        guard count > 0 else { return nil }
        guard count < recorded.count else {
            // The list itself, not a copy of its entries.
            lists[domain] = nil
            return recorded
        }
        let (taken, rest) = recorded.split(at: count)
        lists[domain] = rest
        return taken
    }

    /// The entries waiting, of one domain or of every domain.
    mutating func waiting(in domain: DomainName?) -> [DomainName: PendingEntries] {
        settle()
        guard let domain else { return lists }
        return lists[domain].map { [domain: $0] } ?? [:]
    }

    /// Puts the list of ``currentDomain`` back into ``lists``.
    private mutating func settle() {
        guard let domain = currentDomain else { return }
        lists[domain] = currentEntries
        currentDomain = nil
        currentEntries = PendingEntries()
        currentSecureKeys = []
    }
}
