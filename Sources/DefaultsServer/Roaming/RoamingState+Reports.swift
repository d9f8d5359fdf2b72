import DefaultsCore
import EtcdWire

/// What the ``RoamingLink`` learns from the cluster, reported to the state: the one channel
/// between the link's thread and the state-owning loop. Each report is one hop to the loop and
/// answers what the link needs next.
extension RoamingState {
    enum Report: Sendable {
        /// The link starts: `wake` hands its sender a transaction whenever the sender waits.
        case started(wake: @Sendable (Batch) -> Void)
        /// A watch starts through this member.
        case watching(member: Int)
        /// The watch delivered a message through this member.
        case delivered(EtcdWatchMessage, member: Int)
        /// The revision to resume from was compacted away (etcd keeps nothing older than
        /// `oldestKept`): the next watch reads everything first.
        case compacted(oldestKept: Int64)
        /// What etcd holds under the prefix (`domains` nil), or under these domains' parts of it.
        case read(EtcdRange, domains: [DomainName]?)
        /// A transaction's answer.
        case sent(Batch, EtcdTransactionResult)
        /// A transaction the cluster did not answer.
        case sendFailed(problem: String)
        /// A transaction the cluster answered with a refusal (a value past its request limit, a
        /// key its role may not write): it will refuse it again.
        case sendRefused(Batch, reason: String)
        /// A request to the cluster failed: no member with a leader answered.
        case unreachable(problem: String)
        /// A check of the cluster; `unreachable` is why no member answered it, if none did.
        case checked(unreachable: String?)
        /// What the check found of the watch: current (caught up with the latest write), or
        /// stale, and why.
        case judged(WatchHealth.Check, current: Bool, stale: String?)
    }

    /// What the link needs next: the revision the watch resumes after, whether a full read must
    /// come first, and for the sender's reports, its next transaction (nil: it waits for a wake).
    struct Progress: Sendable {
        var revision: Int64
        var needsFullRead: Bool
        var batch: Batch?
    }

    /// Takes in one report, on the loop, and answers what the link needs next.
    func take(_ report: Report, in store: DefaultsStore) -> Progress {
        eventLoop.preconditionInEventLoop()
        var batch: Batch?
        switch report {
        case .started(let wake):
            wakeSender = wake
            takeInChangesMadeWhileStopped(in: store)
            // The queue kept from the last run.
            wakeSenderIfIdle(store)
        case .watching(let member):
            reachability.watching(through: member)
        case .delivered(let message, let member):
            reached(true)
            if !message.events.isEmpty { apply(message, to: store) }
            reachability.watchDelivered(through: member, revision: revision)
        case .compacted(let oldestKept):
            logger.notice("the revision to resume from was compacted; reading every roaming key again", metadata: [
                "oldestKept": "\(oldestKept)"])
            needsFullRead = true
        case .read(let range, let domains):
            resynchronize(range, domains: domains, in: store)
        case .sent(let sent, let result):
            sendsOneAtATime = false
            finish(sent, result, in: store)
            reached(true)
            batch = nextBatch(from: store)
        case .sendFailed(let problem):
            reached(false, problem: problem)
            batch = nextBatch(from: store)
        case .sendRefused(let refused, let reason):
            reached(true)
            if refused.items.count > 1 {
                sendsOneAtATime = true
            } else if let item = refused.items.first {
                stopRoaming(item.local.domain, because: "etcd refused its key \(item.local.key): \(reason)")
            }
            batch = nextBatch(from: store)
        case .unreachable(let problem):
            reached(false, problem: problem)
        case .checked(let unreachable):
            if let unreachable { reached(false, problem: unreachable) }
        case .judged(let check, let current, let stale):
            reachability.recordCheck(check, current: current)
            if let stale { reachability.watchWentStale(stale, revision: revision) }
        }
        return Progress(revision: revision, needsFullRead: needsFullRead, batch: batch)
    }
}
