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
    /// Every domain's list, but that of ``current`` while it is out (``settle()``).
    private var lists: [DomainName: PendingEntries] = [:]
    private var current: (domain: DomainName, entries: PendingEntries)?

    /// Records one entry per key `effective` changed in its domain, with what the key held
    /// `before`; a key `isSecure` says is secret is recorded without its values. The domain's
    /// list is then held within `bounds`.
    mutating func record(
        _ effective: Changeset, before: ChangeJournal.Before, generation: Int64, time: Date, origin: Origin,
        isSecure: (DomainName, String) -> Bool, bounds: JournalBounds
    ) {
        if current?.domain != effective.domain {
            settle()
            current = (effective.domain, lists.removeValue(forKey: effective.domain) ?? PendingEntries())
        }
        let domain = effective.domain
        if let (key, new) = effective.onlyChange {
            current!.entries.append(
                id: generation, time: time, key: key, old: before[key], new: new, isSecure: isSecure(domain, key), origin: origin)
        } else {
            // One change's keys in a stable order, as its event lists them.
            for (key, new) in effective.sorted(by: { $0.key < $1.key }) {
                current!.entries.append(
                    id: generation, time: time, key: key, old: before[key], new: new, isSecure: isSecure(domain, key), origin: origin)
            }
        }
        current!.entries.keep(within: bounds)
    }

    /// Whether any entry of `domain` waits.
    func has(_ domain: DomainName) -> Bool {
        current?.domain == domain || lists[domain] != nil
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

    /// Puts the list of ``current`` back into ``lists``.
    private mutating func settle() {
        guard let current else { return }
        lists[current.domain] = current.entries
        self.current = nil
    }
}
