import DefaultsCore
import FoundationEssentials
import Glibc
import NIOCore

/// What `stats` answers.
extension RequestDispatcher {
    /// The `stats` reply: the daemon's counters, one domain's when the request names one, and
    /// roaming's state.
    func statistics(_ request: Request, session: Session) throws(DefaultsError) -> Reply {
        let counts = store.statistics(of: request.has("domain") ? try session.domain(of: request) : nil)
        var fields: [(String, Reply.Field)] = [
            ("pid", .integer(Int64(getpid()))),
            ("uptimeSeconds", .integer(Int64(Date().timeIntervalSince(server.startedAt)))),
            ("connections", .integer(Int64(server.connectionCount))),
            ("subscribers", .integer(Int64(server.notifier.subscriberCount))),
            ("domainsLoaded", .integer(Int64(counts.domainsLoaded))),
            ("dirtyDomains", .integer(Int64(counts.dirtyDomains))),
            ("requests", .integer(Int64(server.requestCount))),
            ("flushes", .integer(Int64(counts.flushes))),
            ("fileWrites", .integer(Int64(counts.fileWrites))),
            ("events", .integer(Int64(server.notifier.eventsPublished))),
        ]
        if let writes = counts.domainFileWrites { fields.append(("domainFileWrites", .integer(Int64(writes)))) }
        fields.append(("roaming", .object(roamingStatistics)))
        return Reply(fields)
    }

    /// The roaming link's state for `stats`: `{"state":"off"}` when roaming is not configured.
    var roamingStatistics: Reply {
        guard let roaming = store.roaming else { return Reply([("state", .string("off"))]) }
        return Reply([
            ("state", .string(roaming.reachability.connection.rawValue)),
            ("host", .string(roaming.hostName)),
            ("prefix", .string(roaming.keys.prefix)),
            ("endpoints", .strings(roaming.endpoints)),
            ("domains", .strings(roaming.domains.map(\.rawValue))),
            ("stopped", .object(Reply(roaming.stopped.sorted { $0.key < $1.key }.map { ($0.key.rawValue, .string($0.value)) }))),
            ("revision", .integer(roaming.revision)),
            ("queue", .integer(Int64(roaming.queueLength))),
            ("transactions", .integer(Int64(roaming.transactions))),
            ("watching", .string(roaming.reachability.watchedMember.map { roaming.endpoints[$0] })),
            ("stale", .string(roaming.reachability.staleReason)),
            ("members", .raw(Self.json(roaming.reachability.members))),
            ("latestInCluster", .integer(roaming.reachability.latestInCluster)),
            ("behind", .integer(roaming.reachability.revisionsBehind(applied: roaming.revision))),
            ("failures", .integer(Int64(roaming.reachability.failures))),
            ("millisecondsSinceProgress", roaming.reachability.lastProgress.map {
                .integer((NIODeadline.now() - $0).nanoseconds / 1_000_000)
            } ?? .string(nil)),
        ])
    }

    /// Each member as the last check found it: `{"endpoint","answers","leader","revision"}`, or
    /// `"problem"` in place of the last three when it gave no status.
    static func json(_ members: [RoamingReachability.MemberReport]) -> [UInt8] {
        var writer = JSONWriter(capacity: 128 * members.count)
        writer.json(.array(members.map { member in
            var fields: [String: JSON] = ["endpoint": .string(member.endpoint)]
            switch member.status {
            case .success(let status)?:
                fields["answers"] = true
                fields["leader"] = status.leader.map { .string($0) } ?? .null
                fields["revision"] = .integer(status.revision)
                if !status.errors.isEmpty { fields["problem"] = .string(status.errors.joined(separator: "; ")) }
            case .failure(.unreachable(let reason))?:
                fields["answers"] = false
                fields["problem"] = .string(reason)
            case .failure(let error)?:
                fields["answers"] = false
                fields["problem"] = .string("\(error)")
            case nil:
                fields["answers"] = .null
            }
            return .object(fields)
        }))
        return writer.bytes
    }

}
