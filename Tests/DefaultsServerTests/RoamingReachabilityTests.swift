@testable import DefaultsServer
import Logging
import NIOCore
import NIOEmbedded
import TestThreads
import Testing

/// Whether the cluster counts as reached: an election's brief silence is not a loss.
@Suite(.ownThreads) struct RoamingReachabilityTests {
    static func reachability() -> RoamingReachability {
        RoamingReachability(endpoints: ["http://127.0.0.1:1"], eventLoop: EmbeddedEventLoop(), logger: Logger(label: "test"))
    }

    static func report(_ reachability: RoamingReachability, _ answered: Bool, at time: NIODeadline) {
        reachability.reached(answered, problem: answered ? nil : "no leader", queued: 0, domains: [], revision: 1, at: time)
    }

    @Test("a cluster that answered stays online while it fails for less than the grace, and is offline once it has failed for all of it")
    func failuresWithinTheGraceAreNotALoss() {
        let reachability = Self.reachability()
        let start = NIODeadline.now()
        Self.report(reachability, true, at: start)
        #expect(reachability.connection == .online)
        Self.report(reachability, false, at: start + .milliseconds(100))
        Self.report(reachability, false, at: start + .milliseconds(100) + RoamingReachability.lossGrace - .milliseconds(1))
        #expect(reachability.connection == .online)
        #expect(reachability.failures == 2)
        // Answered again within the grace: the next failure starts a grace of its own.
        Self.report(reachability, true, at: start + .seconds(4))
        #expect(reachability.failures == 0)
        Self.report(reachability, false, at: start + .seconds(5))
        #expect(reachability.connection == .online)
        Self.report(reachability, false, at: start + .seconds(5) + RoamingReachability.lossGrace)
        #expect(reachability.connection == .offline)
        #expect(reachability.failures == 2)
        Self.report(reachability, true, at: start + .seconds(9))
        #expect(reachability.connection == .online)
    }

    @Test("a daemon that has not reached the cluster yet is offline at the first failure")
    func noGraceBeforeTheFirstAnswer() {
        let reachability = Self.reachability()
        #expect(reachability.connection == .connecting)
        Self.report(reachability, false, at: .now())
        #expect(reachability.connection == .offline)
    }
}
