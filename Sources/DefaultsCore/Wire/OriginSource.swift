/// Where a change came from: the `source` of a `didChange` event's `origin` (docs/PROTOCOL.md),
/// written by the daemon and read by every client from this one list. A new source is added
/// here, and the compiler then finds every switch that must handle it.
///
/// ```swift
/// OriginSource(rawValue: "roaming")   // .roaming
/// ```
public enum OriginSource: String, Sendable, Hashable, CaseIterable {
    /// A client, through its connection: the origin then has no `source` member, but `pid`,
    /// `uid`, `connection` and `client`.
    case connection
    /// A domain file edited by hand or by another program while the daemon runs.
    case file
    /// An administrator's managed preferences.
    case managed
    /// Another machine of the user, through the roaming link: `host` says which.
    case roaming
}
