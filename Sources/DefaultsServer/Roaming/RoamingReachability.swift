import DefaultsCore
import EtcdWire
import Logging
import NIOCore

/// Whether the etcd cluster answers this machine and whether the watch is current, with what
/// the last check of the members found: the truth `defaults roaming` and `stats` tell
/// (docs/ROAMING.md, "What a machine shows while it is cut off"). Each change of state is
/// logged once, never each retry.
///
/// Owned by the ``RoamingState`` it belongs to, on the state-owning event loop; the
/// ``RoamingLink`` reaches it only by submitting to that loop. Every method checks the loop.
final class RoamingReachability {
    enum Connection: String, Sendable {
        /// Started, no answer from the cluster yet.
        case connecting
        /// The cluster answers and the watch is current.
        case online
        /// The cluster answers, but the watch fell behind it (its member froze, or lost its
        /// leader); the link is resuming it through another member.
        case stale
        /// No member with a leader answers: local changes are queued.
        case offline
    }

    /// One member as the last check of the cluster found it.
    struct MemberReport: Sendable {
        var endpoint: String
        /// Its status, or why it gave none; nil before the first check.
        var status: Result<EtcdMemberStatus, EtcdError>?
    }

    private let eventLoop: EventLoop
    private let logger: Logger
    let endpoints: [String]

    /// Whether the cluster answered the last request; nil until the first answer or failure.
    private var reachable: Bool?
    /// Why the watch is not current, from the moment a check finds it stale until a watch
    /// through another member delivers again.
    private(set) var staleReason: String?
    /// Each member as the last check found it, in the configured order.
    private(set) var members: [MemberReport]
    /// The member the watch runs through, while one runs.
    private(set) var watchedMember: Int?
    /// The latest write under the prefix, as the last check read it from the cluster.
    private(set) var latestInCluster: Int64 = 0
    /// When the watch last delivered a message, or a check found it current.
    private(set) var lastProgress: NIODeadline?
    /// Requests the cluster has not answered since it last answered one: the retries of a link
    /// cut off, each of which is not logged.
    private(set) var failures = 0
    /// When the cluster first failed to answer since it last answered.
    private var failingSince: NIODeadline?

    /// How long a cluster that answered may fail to answer before it counts as lost. An election
    /// (its leader killed or restarted) leaves the members without a leader for about two
    /// election timeouts, a second each by etcd's default: that is routine, and neither a
    /// warning nor `offline` while the sender retries through it.
    static let lossGrace: TimeAmount = .seconds(3)

    init(endpoints: [String], eventLoop: EventLoop, logger: Logger) {
        self.endpoints = endpoints
        self.eventLoop = eventLoop
        self.logger = logger
        members = endpoints.map { MemberReport(endpoint: $0) }
    }

    var connection: Connection {
        switch reachable {
        case nil: .connecting
        case false?: .offline
        case true?: staleReason == nil ? .online : .stale
        }
    }

    /// How many revisions under the prefix the cluster holds beyond `applied`.
    func revisionsBehind(applied: Int64) -> Int64 { max(0, latestInCluster - applied) }

    /// Records whether the cluster answered; logs only the changes of state. A cluster that
    /// answered is lost only once it has failed for ``lossGrace``. `queued`, `domains` and
    /// `revision` are what the log says of this machine.
    func reached(
        _ answered: Bool, problem: String?, queued: Int, domains: [DomainName], revision: Int64, at now: NIODeadline = .now()
    ) {
        eventLoop.preconditionInEventLoop()
        failures = answered ? 0 : failures + 1
        failingSince = answered ? nil : (failingSince ?? now)
        guard answered != reachable else { return }
        if !answered, reachable == true, let failingSince, now - failingSince < Self.lossGrace { return }
        let previous = reachable
        reachable = answered
        if answered {
            if previous == false {
                logger.notice("reached the etcd cluster again; sending the queued changes", metadata: ["queued": "\(queued)"])
            } else {
                logger.info("roaming through etcd", metadata: [
                    "domains": "\(domains.map(\.rawValue).joined(separator: ", "))", "revision": "\(revision)"])
            }
        } else {
            logger.warning("lost the etcd cluster; changes to roaming domains are queued until it answers", metadata: [
                "problem": "\(problem ?? "no answer")"])
        }
    }

    /// A watch starts through `member`.
    func watching(through member: Int) {
        eventLoop.preconditionInEventLoop()
        watchedMember = member
    }

    /// The watch through `member` delivered a message: it is current again if it was stale.
    func watchDelivered(through member: Int, revision: Int64) {
        eventLoop.preconditionInEventLoop()
        lastProgress = .now()
        guard staleReason != nil, watchedMember == member else { return }
        staleReason = nil
        logger.notice("the roaming watch is current again", metadata: [
            "endpoint": "\(endpoints[member])", "revision": "\(revision)"])
    }

    /// A check of the cluster: what each member said, and the latest write under the prefix.
    /// `current` is true when the check found the watch caught up with that write.
    func recordCheck(_ check: WatchHealth.Check, current: Bool) {
        eventLoop.preconditionInEventLoop()
        for (index, status) in check.statuses.enumerated() where members.indices.contains(index) {
            members[index].status = status
        }
        if let latest = check.latestWrite { latestInCluster = max(latestInCluster, latest) }
        if current { lastProgress = .now() }
    }

    /// A check found the watch stale; logged once, until a watch delivers again, though the
    /// reason shown is always the latest.
    func watchWentStale(_ reason: String, revision: Int64) {
        eventLoop.preconditionInEventLoop()
        let wasStale = staleReason != nil
        staleReason = reason
        guard !wasStale else { return }
        logger.warning("the roaming watch is stale; resuming it through another member", metadata: [
            "reason": "\(reason)", "revision": "\(revision)"])
    }
}
