import DefaultsCore
import EtcdGateway
import EtcdWire

/// The check of the cluster every two seconds: each member's status, the latest write, and a
/// watch found stale cancelled.
extension RoamingLink {
    /// Asks the cluster, every ``checkInterval``, whether the watch is current; a stale one is
    /// cancelled, and the watch loop resumes through another member.
    func checkForever() async {
        let clock = ContinuousClock()
        var next = clock.now
        while !Task.isCancelled {
            // A fixed rate: a check that waits on a silent member does not delay the next one.
            next = max(next + RoamingLink.checkInterval, clock.now)
            do { try await Task.sleep(until: next, clock: clock) } catch { return }
            let check = await checkCluster(watched: watch?.member)
            lastCheck = check
            let applied = try? await report(.checked(unreachable: WatchHealth.unreachableReason(check))).revision
            guard let watch, let applied, self.watch?.number == watch.number else {
                _ = try? await report(.judged(check, current: false, stale: nil))
                continue
            }
            let endpoint = etcd.endpoints[watch.member]
            let reason = health.staleReason(watched: watch.member, check: check, applied: applied, endpoint: endpoint)
            let current = reason == nil && check.latestWrite.map { applied >= $0 } == true
            _ = try? await report(.judged(check, current: current, stale: reason))
            if reason != nil {
                abandonedWatch = watch.number
                nextMember = WatchHealth.nextMember(after: watch.member, of: etcd.endpoints.count, check: check)
                watch.task.cancel()
            }
        }
    }

    /// Every member's status, asked at once, then the latest write under the prefix, asked of
    /// the member with a leader that has applied the most (another than the watched one where
    /// there is a choice): two request timeouts at most, whatever the members do.
    private func checkCluster(watched: Int?) async -> WatchHealth.Check {
        let etcd = self.etcd
        let statuses = await withTaskGroup(of: (Int, Result<EtcdMemberStatus, EtcdError>).self) { group in
            for member in etcd.endpoints.indices {
                group.addTask { (member, await RoamingLink.status(of: member, from: etcd)) }
            }
            var found: [Result<EtcdMemberStatus, EtcdError>?] = Array(repeating: nil, count: etcd.endpoints.count)
            for await (member, result) in group { found[member] = result }
            return found.map { $0 ?? .failure(.unreachable("not asked")) }
        }
        let witness = statuses.indices
            .compactMap { index in (try? statuses[index].get()).flatMap { $0.leader == nil ? nil : (index, $0.revision) } }
            .max { ($0.1, $0.0 != watched ? 1 : 0) < ($1.1, $1.0 != watched ? 1 : 0) }
        var latestWrite: Int64?
        if let (member, _) = witness { latestWrite = try? await etcd.latestWrite(prefix: keys.prefix, member: member) }
        return WatchHealth.Check(statuses: statuses, latestWrite: latestWrite)
    }

    /// One member's status as a value. A function of its own: the same typed `do`/`catch`
    /// written inside the task group's closure traps with an index out of range in release
    /// builds of Swift 6.3.1, though not in debug builds.
    static func status(of member: Int, from etcd: EtcdClient) async -> Result<EtcdMemberStatus, EtcdError> {
        do { return .success(try await etcd.status(ofMember: member)) } catch { return .failure(error) }
    }

    /// Reads the given domains' parts of the prefix and makes the local domains equal.
    func read(_ domains: [DomainName]) async throws {
        for domain in domains {
            _ = try await report(.read(try await etcd.range(prefix: keys.domainPrefix(domain)), domains: [domain]))
        }
    }
}
