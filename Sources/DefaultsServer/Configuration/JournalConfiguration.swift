import DefaultsCore
import FoundationEssentials

/// What the change journal keeps (docs/ADMINISTRATION.md, "The change journal"): on unless
/// turned off; per domain, the newest changes within all three bounds.
///
/// ```json5
/// // defaultsd.json
/// { journal: { maximumEntriesPerDomain: 2000, excludedDomains: ["com.example.noisy"] } }
/// ```
public struct JournalConfiguration: Sendable, Hashable {
    public var isEnabled = true
    public var maximumEntriesPerDomain = 10_000
    public var maximumDays = 30
    /// The most bytes of one domain's journal file after a compaction: values can be large, and
    /// this bounds what a `history` or a compaction reads, and the entries held in memory until
    /// their changes are durable. As large as a domain may be (`maximumDomainBytes`).
    public var maximumBytesPerDomain = 4 << 20
    /// Domains whose changes are not recorded (their by-host variants neither).
    public var excludedDomains: Set<DomainName> = []

    public init() {}

    /// Whether changes of `domain` are recorded.
    func records(_ domain: DomainName) -> Bool {
        isEnabled && (excludedDomains.isEmpty || !excludedDomains.contains(domain.anyHost))
    }

    var bounds: JournalBounds {
        JournalBounds(
            maximumEntries: maximumEntriesPerDomain, maximumAge: TimeInterval(maximumDays) * 86_400,
            maximumBytes: maximumBytesPerDomain)
    }
}
