import EtcdWire

/// The rule that decides whether the watch is still current, from one periodic check of the
/// cluster (docs/ROAMING.md, "When a member goes quiet").
///
/// A watch stream says nothing when its member freezes, or is cut off from the others while
/// still answering, so silence cannot tell "nothing changed" from "nothing arrives". Every
/// ``RoamingLink/checkInterval`` the link asks each member for its status and the cluster for
/// the latest write under the prefix, and this rule compares them with what the watch has
/// delivered. The watched member is stale when:
/// - it does not answer its status within the request timeout (frozen, or unreachable);
/// - it has no leader (the minority side of a partition);
/// - its revision is below what the members with a leader had reached at the previous check:
///   it stopped applying the cluster's history;
/// - a write under the prefix that the previous check saw in the cluster has still not been
///   delivered: the stream itself went quiet (a dropped connection that no side noticed).
///
/// Each comparison is against the previous check, one interval earlier, so a member or a
/// stream that lags by less than that is never called stale. The bound follows: a fault is
/// found at the second check after it at the latest, within two intervals and a request
/// timeout (5 s with the defaults), well inside the 10 s the documentation promises.
///
/// Owned by the ``RoamingLink`` actor; a value type, tested by itself.
struct WatchHealth {
    /// What one check learned: each member's status (or why it gave none), and the latest
    /// write under the prefix as the cluster's quorum knows it (nil: no member could say).
    struct Check {
        var statuses: [Result<EtcdMemberStatus, EtcdError>]
        var latestWrite: Int64?
    }

    /// The figures of the previous check of the same watch: the highest revision of a member
    /// with a leader, and the latest write under the prefix.
    private var previousClusterRevision: Int64?
    private var previousLatestWrite: Int64?

    /// A new watch started: it is judged only from its own checks on, so that its catching up
    /// from the last revision applied is not taken for lag.
    mutating func watchRestarted() {
        previousClusterRevision = nil
        previousLatestWrite = nil
    }

    /// Why the watch through `watched` is stale, or nil when this check finds nothing wrong.
    /// `applied` is the highest revision the watch has delivered.
    mutating func staleReason(watched: Int, check: Check, applied: Int64, endpoint: String) -> String? {
        defer {
            previousClusterRevision = check.statuses.compactMap { try? $0.get() }.filter { $0.leader != nil }.map(\.revision).max()
            previousLatestWrite = check.latestWrite
        }
        guard check.statuses.indices.contains(watched) else { return nil }
        let status: EtcdMemberStatus
        switch check.statuses[watched] {
        case .failure(.unreachable(let reason)): return "\(endpoint) did not answer its status: \(reason)"
        case .failure(let error): return "\(endpoint) did not answer its status: \(error)"
        case .success(let found): status = found
        }
        guard status.leader != nil else { return "\(endpoint) has no leader" }
        if let previous = previousClusterRevision, status.revision < previous {
            return "\(endpoint) stopped at revision \(status.revision) while the cluster was at \(previous) a check earlier"
        }
        if let previous = previousLatestWrite, applied < previous {
            return "revision \(previous) was written a check earlier and the watch through \(endpoint) has not delivered it"
        }
        return nil
    }

    /// Why no member can serve the watch, when the check found none that answers with a
    /// leader: the cluster is out of reach from this machine.
    static func unreachableReason(_ check: Check) -> String? {
        let statuses = check.statuses.compactMap { try? $0.get() }
        if statuses.contains(where: { $0.leader != nil }) { return nil }
        return statuses.isEmpty ? "no member answers" : "the members that answer have no leader"
    }

    /// The member of `count` to watch through next after `failed`: the next one in the
    /// configured order that the last check found with a leader, or simply the next one. Never
    /// the member that just failed, while there is another: what the check said of it is older
    /// than its failure (a check made during an election may have found a leader there alone).
    static func nextMember(after failed: Int, of count: Int, check: Check?) -> Int {
        let others = (1..<max(count, 1)).map { (failed + $0) % count }
        guard let next = others.first else { return failed }
        guard let check, check.statuses.count == count else { return next }
        return others.first { index in (try? check.statuses[index].get())?.leader != nil } ?? next
    }
}
