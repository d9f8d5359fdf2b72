import EtcdWire
import TestThreads
import Testing

@testable import DefaultsServer

/// The rule that calls a roaming watch stale, check by check, with the members' answers made up.
@Suite(.ownThreads) struct WatchHealthTests {
    static let leader = "8e9e05c52164694d"

    static func member(_ revision: Int64, leader: String? = WatchHealthTests.leader) -> Result<EtcdMemberStatus, EtcdError> {
        .success(EtcdMemberStatus(memberID: "1", leader: leader, revision: revision))
    }

    static let silent: Result<EtcdMemberStatus, EtcdError> = .failure(.unreachable("no answer within 1000 ms"))

    static func check(_ statuses: Result<EtcdMemberStatus, EtcdError>..., latestWrite: Int64? = nil) -> WatchHealth.Check {
        WatchHealth.Check(statuses: statuses, latestWrite: latestWrite)
    }

    @Test("a current watch on a healthy member is never stale, check after check")
    func healthy() {
        var health = WatchHealth()
        for revision in Int64(10)...14 {
            let check = Self.check(Self.member(revision), Self.member(revision), Self.member(revision), latestWrite: revision)
            #expect(health.staleReason(watched: 0, check: check, applied: revision, endpoint: "m0") == nil)
        }
    }

    @Test("a watched member that does not answer its status is stale at once, with its reason")
    func silentMember() {
        var health = WatchHealth()
        let check = Self.check(Self.silent, Self.member(10), Self.member(10), latestWrite: 10)
        #expect(health.staleReason(watched: 0, check: check, applied: 10, endpoint: "m0") == "m0 did not answer its status: no answer within 1000 ms")
        // Another member's silence is no reason.
        #expect(health.staleReason(watched: 1, check: check, applied: 10, endpoint: "m1") == nil)
    }

    @Test("a watched member without a leader (the minority side) is stale")
    func noLeader() {
        var health = WatchHealth()
        let check = Self.check(Self.member(10), Self.member(10), Self.member(10, leader: nil), latestWrite: 10)
        #expect(health.staleReason(watched: 2, check: check, applied: 10, endpoint: "m2") == "m2 has no leader")
    }

    @Test("a member behind what the cluster had reached a check earlier is stale; behind by less than a check is not")
    func memberBehind() {
        var health = WatchHealth()
        // The watched member lags the others within one check: not stale.
        #expect(health.staleReason(watched: 0, check: Self.check(Self.member(9), Self.member(12), Self.member(12)), applied: 9, endpoint: "m0") == nil)
        // A check later it has not reached 12: it stopped.
        #expect(health.staleReason(watched: 0, check: Self.check(Self.member(11), Self.member(15), Self.member(15)), applied: 9, endpoint: "m0")
            == "m0 stopped at revision 11 while the cluster was at 12 a check earlier")
    }

    @Test("a write the previous check saw in the cluster and the watch has not delivered makes it stale")
    func streamQuiet() {
        var health = WatchHealth()
        let first = Self.check(Self.member(20), Self.member(20), Self.member(20), latestWrite: 20)
        // Written just now and not yet delivered: no verdict yet.
        #expect(health.staleReason(watched: 0, check: first, applied: 18, endpoint: "m0") == nil)
        // A check later, still not delivered, though the member itself is current.
        #expect(health.staleReason(watched: 0, check: first, applied: 18, endpoint: "m0")
            == "revision 20 was written a check earlier and the watch through m0 has not delivered it")
        // Delivered by then: current.
        var delivered = WatchHealth()
        _ = delivered.staleReason(watched: 0, check: first, applied: 18, endpoint: "m0")
        #expect(delivered.staleReason(watched: 0, check: first, applied: 20, endpoint: "m0") == nil)
    }

    @Test("a restarted watch is judged from its own checks on: its catching up is not lag")
    func restartForgetsThePast() {
        var health = WatchHealth()
        _ = health.staleReason(watched: 0, check: Self.check(Self.member(30), Self.member(30), latestWrite: 30), applied: 25, endpoint: "m0")
        health.watchRestarted()
        #expect(health.staleReason(watched: 1, check: Self.check(Self.member(30), Self.member(30), latestWrite: 30), applied: 25, endpoint: "m1") == nil)
    }

    @Test("the next member is the next one in order that has a leader, else simply the next one, never the one that failed")
    func nextMember() {
        let check = Self.check(Self.member(5), Self.silent, Self.member(5, leader: nil), Self.member(5))
        #expect(WatchHealth.nextMember(after: 0, of: 4, check: check) == 3)
        #expect(WatchHealth.nextMember(after: 3, of: 4, check: check) == 0)
        #expect(WatchHealth.nextMember(after: 0, of: 4, check: Self.check(Self.silent, Self.silent, Self.silent, Self.silent)) == 1)
        #expect(WatchHealth.nextMember(after: 1, of: 4, check: nil) == 2)
        #expect(WatchHealth.nextMember(after: 0, of: 1, check: nil) == 0)
        // The check found a leader only at the member that has just failed: the next one, not it.
        #expect(WatchHealth.nextMember(after: 3, of: 4, check: Self.check(Self.silent, Self.silent, Self.silent, Self.member(5))) == 0)
        #expect(WatchHealth.nextMember(after: 2, of: 3, check: Self.check(Self.member(5, leader: nil), Self.silent, Self.member(5))) == 0)
    }

    @Test("the cluster is out of reach when no member that answers has a leader")
    func unreachable() {
        #expect(WatchHealth.unreachableReason(Self.check(Self.silent, Self.silent)) == "no member answers")
        #expect(WatchHealth.unreachableReason(Self.check(Self.silent, Self.member(3, leader: nil))) == "the members that answer have no leader")
        #expect(WatchHealth.unreachableReason(Self.check(Self.silent, Self.member(3))) == nil)
    }
}
