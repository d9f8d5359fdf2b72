import DaemonTestSupport
import LocalServices
import DefaultsCore
import Foundation
import LineSocket
import TestThreads
import Testing

/// Roaming when the network fails quietly: a member that freezes, a member cut off from the
/// others, machines on opposite sides of a partition. Frozen members run on loopback; the
/// partitions run on a ``TestNetwork`` (a network namespace per member and per daemon), where
/// a cut is a pair of blackhole routes and every connection across it goes silent.
@Suite("Roaming under network faults", .serialized, .ownThreads)
struct NetworkFaultTests {
    static let domain = RoamingMachines.domain
    static let defaults = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent().appendingPathComponent("defaults").path
    /// The bound docs/ROAMING.md promises for finding a stale watch and resuming it elsewhere.
    static let staleBound = 10.0

    /// The member (by configured index) `host` watches through, once it is online.
    static func waitWatching(_ m: RoamingMachines, _ host: String, member: Int) throws {
        let endpoint = m.cluster.endpoints[member]
        try m.waitFor(host) { $0["state"] == "online" && $0["watching"] == .string(endpoint) }
    }

    /// `host`'s state, read every 50 ms for `seconds`: each one it passed through.
    static func states(_ m: RoamingMachines, _ host: String, for seconds: Double) throws -> Set<String> {
        var seen: Set<String> = []
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if case .string(let state)? = try m.roaming(host)["state"] { seen.insert(state) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return seen
    }

    @Test("the member B watches through freezes: A's change reaches B within 10 s through another member, and defaults roaming names the silent member")
    func watchedMemberFrozen() throws {
        let m = try RoamingMachines(memberOrder: ["B": [2, 0, 1]])
        try m.waitAllOnline()
        try Self.waitWatching(m, "B", member: 2)
        let onB = try m.subscriber("B")
        m.cluster.freeze(2)
        defer { m.cluster.thaw(2) }
        let sent = Date()
        #expect(try m.set("A", "warp", "9")["ok"] == true)
        let event = try JSONParser.parse(try onB.readEvent(timeout: Self.staleBound + 1))
        #expect(Date().timeIntervalSince(sent) < Self.staleBound)
        #expect(event["changes"] == ["warp": 9])
        #expect(event["origin"] == ["source": "roaming", "host": "A"])

        // B resumed through the next member in its list, and says which member is silent.
        let state = try m.waitFor("B") { $0["state"] == "online" && $0["behind"] == .integer(0) }
        #expect(state["watching"] == .string(m.cluster.endpoints[0]))
        let run = try FinishedRun.run(Self.defaults, ["roaming"], environment: m["B"].clientEnvironment)
        #expect(run.output.hasPrefix("Roaming through etcd: online\nHost name: B\nWatching through: \(m.cluster.endpoints[0])\nMembers:\n"))
        #expect(run.output.contains("\n    \(m.cluster.endpoints[2])  does not answer: no answer within 1000 ms\n"))
        #expect(run.output.contains("\nBehind the cluster: 0 revisions (last event or progress "))
        // Logged once when it went stale, once when it was current again.
        #expect(m["B"].logOccurrences(of: "the roaming watch is stale") == 1)
        #expect(m["B"].logOccurrences(of: "the roaming watch is current again") == 1)
        #expect(m["B"].logText.contains("reason=\"\(m.cluster.endpoints[2]) did not answer its status: no answer within 1000 ms\""))
    }

    @Test("B's only member freezes: B says offline within 10 s and never online while it is frozen; thawed, B catches up")
    func onlyMemberFrozen() throws {
        let m = try RoamingMachines(memberOrder: ["B": [2]])
        try m.waitAllOnline()
        m.cluster.freeze(2)
        #expect(try m.set("A", "missed", #""while frozen""#)["ok"] == true)
        try m.waitFor("B", timeout: Self.staleBound) { $0["state"] == "offline" }
        #expect(!(try Self.states(m, "B", for: 2)).contains("online"))
        let run = try FinishedRun.run(Self.defaults, ["roaming"], environment: m["B"].clientEnvironment)
        #expect(run.output.hasPrefix("Roaming through etcd: offline"))
        #expect(run.output.contains("\n    \(m.cluster.endpoints[2])  does not answer: no answer within 1000 ms\n"))
        m.cluster.thaw(2)
        try m.waitForValues("B", ["missed": "while frozen"], timeout: Self.staleBound)
        try m.waitOnline("B")
    }
}

/// The partition cases, on a private network of five hosts: members m0, m1, m2, and the two
/// daemons A and B, each in a network namespace of its own. Needs root; says so when it cannot run.
@Suite("Roaming across real partitions", .serialized, .enabled(if: TestNetwork.unavailableReason == nil, "\(TestNetwork.unavailableReason ?? "")"), .ownThreads)
struct PartitionTests {
    static let hosts = ["m0", "m1", "m2", "A", "B"]

    static func machines() throws -> RoamingMachines {
        let network = try TestNetwork(hosts: hosts)
        let m = try RoamingMachines(network: network, memberOrder: ["A": [0, 1, 2], "B": [2, 0, 1]])
        try m.waitAllOnline()
        try NetworkFaultTests.waitWatching(m, "B", member: 2)
        return m
    }

    @Test("B's member is cut off from the other two (the minority), B still reaches all three: B moves its watch, and A's change arrives within 10 s")
    func minorityMember() throws {
        let m = try Self.machines()
        let onB = try m.subscriber("B")
        try m.network!.partition(["m2"], from: ["m0", "m1"])
        let sent = Date()
        #expect(try m.set("A", "rank", #""Captain""#)["ok"] == true)
        let event = try JSONParser.parse(try onB.readEvent(timeout: NetworkFaultTests.staleBound + 1))
        #expect(Date().timeIntervalSince(sent) < NetworkFaultTests.staleBound)
        #expect(event["changes"] == ["rank": "Captain"])
        let state = try m.roaming("B")
        #expect(state["watching"] != .string(m.cluster.endpoints[2]))
        // Healed, every machine and member agrees again.
        try m.network!.heal()
        #expect(try m.set("B", "after", "1")["ok"] == true)
        try m.waitForValues("A", ["rank": "Captain", "after": 1])
        try m.waitForValues("B", ["rank": "Captain", "after": 1])
    }

    @Test("A and B on opposite sides: A writes through the majority; B says offline, never online, and queues its own; healed, both end equal")
    func oppositeSides() throws {
        let m = try Self.machines()
        try m.network!.partition(["m2", "B"], from: ["m0", "m1", "A"])
        #expect(try m.set("A", "fromA", "1")["ok"] == true)
        #expect(try m.set("B", "fromB", "2")["ok"] == true)
        try m.waitFor("B", timeout: NetworkFaultTests.staleBound) { $0["state"] == "offline" }
        #expect(!(try NetworkFaultTests.states(m, "B", for: 3)).contains("online"))
        let cutOff = try m.roaming("B")
        #expect(cutOff["queue"] == .integer(1))
        #expect(try m.values("B") == ["fromB": 2])
        try m.network!.heal()
        try m.waitForValues("A", ["fromA": 1, "fromB": 2], timeout: 20)
        try m.waitForValues("B", ["fromA": 1, "fromB": 2], timeout: 20)
        try m.waitOnline("B")
    }

    @Test("the partition heals while both sides keep writing: every machine ends with etcd's last write of each key")
    func healWhileWriting() throws {
        let m = try Self.machines()
        try m.network!.partition(["m2", "B"], from: ["m0", "m1", "A"])
        var round = 0
        let healAt = 15
        while round < 30 {
            if round == healAt { try m.network!.heal() }
            #expect(try m.set("A", "a\(round % 5)", "\(round)")["ok"] == true)
            #expect(try m.set("B", "b\(round % 5)", "\(round)")["ok"] == true)
            #expect(try m.set(round % 2 == 0 ? "A" : "B", "shared", "\(round)")["ok"] == true)
            round += 1
            Thread.sleep(forTimeInterval: 0.1)
        }
        // Both end equal, and equal to what etcd holds.
        let deadline = Date().addingTimeInterval(20)
        var a = try m.values("A"), b = try m.values("B")
        while a != b, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            (a, b) = (try m.values("A"), try m.values("B"))
        }
        #expect(a == b, "A: \(a)\nB: \(b)\n\(m["B"].logText)")
        #expect(a["a0"] == .integer(25) && a["b4"] == .integer(29))
        for key in ["shared", "a0", "b0"] {
            let stored = try m.cluster.control(["get", m.prefix + NetworkFaultTests.domain + "/" + key, "--print-value-only"])
            let entry = try JSONParser.parse(stored.output.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(entry["value"] == a[key], "\(key): etcd holds \(entry), the machines \(a[key] ?? .null)")
        }
    }
}
