import DaemonTestSupport
import LocalServices
import DefaultsClient
import DefaultsCore
import Foundation
import LineSocket
import TestThreads
import Testing

/// Two machines (two real daemons) of one user on a real 3-member etcd cluster on loopback.
/// Each test has its own cluster: several stop members.
@Suite("Roaming through a 3-member etcd cluster", .serialized, .ownThreads)
struct RoamingTests {
    static let domain = RoamingMachines.domain

    @Test("a set on A is a didChange on B within 2 s, with A as its host, types kept, and no echo on A")
    func setOnAReachesB() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        let onB = try m.subscriber("B")
        let onA = try m.subscriber("A")
        let sent = Date()
        #expect(try m.set("A", "warp/factor", "5.0")["ok"] == true)
        let event = try JSONParser.parse(try onB.readEvent(timeout: 2))
        #expect(Date().timeIntervalSince(sent) < 2)
        #expect(event["changes"] == ["warp/factor": .real(5.0)])
        #expect(event["origin"] == ["source": "roaming", "host": "A"])
        #expect(try JSONParser.parse(try m["B"].connect().request(#"{"op":"get","domain":"\#(Self.domain)","key":"warp/factor"}"#))["value"] == .real(5.0))

        // A hears its own set once; its next event is B's change, not the echo of its own.
        #expect(try JSONParser.parse(try onA.readEvent())["origin"]?["source"] == nil)
        #expect(try m.set("B", "rank", #""Captain""#)["ok"] == true)
        let next = try JSONParser.parse(try onA.readEvent(timeout: 2))
        #expect(next["changes"] == ["rank": "Captain"])
        #expect(next["origin"] == ["source": "roaming", "host": "B"])

        // Each machine's change journal names the other machine as the writer of its change.
        let history = try JSONParser.parse(try m["B"].connect().request(#"{"op":"history","domain":"\#(Self.domain)","key":"warp/factor"}"#))
        let entries: [JSON] = if case .array(let list)? = history["entries"] { list } else { [] }
        #expect(entries.count == 1)
        #expect(entries.first?["writer"] == "A" && entries.first?["origin"] == ["source": "roaming", "host": "A"])
        #expect(entries.first?["new"] == .real(5.0))

        // The key layout: one etcd key per defaults key, its slash escaped.
        #expect(try m.cluster.keys(prefix: m.prefix).sorted() == [
            m.prefix + Self.domain + "/rank", m.prefix + Self.domain + "/warp%2Ffactor",
        ])
    }

    @Test("all eight property-list types arrive on B as they were set on A, and a removal propagates")
    func typesAndRemovals() throws {
        let m = try RoamingMachines()
        try m.waitOnline("A")
        let values = [
            "string": #""Earl Grey""#, "integer": "7", "real": "7.0", "bool": "true",
            "date": #"{"$date":"2026-11-21T10:00:00.250Z"}"#, "data": #"{"$data":"AAEC/w=="}"#,
            "array": #"[1,"two",3.5]"#, "dictionary": #"{"a":{"b":false}}"#, "gone": "1",
        ]
        for (key, value) in values { #expect(try m.set("A", key, value)["ok"] == true) }
        _ = try m["A"].connect().request(#"{"op":"remove","domain":"\#(Self.domain)","key":"gone"}"#)
        let expected = try m.values("A")
        #expect(expected["gone"] == nil)
        #expect(expected["real"] == .real(7.0) && expected["integer"] == .integer(7))
        try m.waitForValues("B", expected)
        // And on disk: B's file holds what A's does.
        for host in ["A", "B"] { _ = try m[host].connect().request(#"{"op":"synchronize"}"#) }
        let onDisk = try m["B"].storedValues(Self.domain)
        #expect(onDisk == (try m["A"].storedValues(Self.domain)))
        #expect(onDisk?["data"] == .data(Data([0, 1, 2, 255])))
    }

    @Test("a hand edit of a roaming domain's file on A is a didChange on B, with A as its host")
    func handEditRoams() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        #expect(try m.set("A", "edited", "1")["ok"] == true)
        try m.waitForValues("B", ["edited": 1])
        _ = try m["A"].connect().request(#"{"op":"synchronize"}"#)
        let onB = try m.subscriber("B")
        // An editor's save: a new file renamed over the domain's.
        let file = m["A"].storagePath + "/" + Self.domain + ".plist"
        let edited = try PropertyListFile.encode(["edited": .integer(2), "added": .string("by hand")], format: .xml)
        try edited.write(to: URL(fileURLWithPath: file + ".new"))
        #expect(rename(file + ".new", file) == 0)
        let event = try JSONParser.parse(try onB.readEvent(timeout: 2))
        #expect(event["changes"] == ["edited": 2, "added": "by hand"])
        #expect(event["origin"] == ["source": "roaming", "host": "A"])
    }

    @Test("a domain that does not roam, and the by-host variant of one that does, never reach etcd")
    func nonRoamingDomainsStayLocal() throws {
        let m = try RoamingMachines()
        try m.waitOnline("A")
        let client = try m["A"].connect()
        _ = try client.request(#"{"op":"set","domain":"com.example.local","key":"secret","value":1}"#)
        _ = try client.request(#"{"op":"set","domain":"\#(Self.domain)","host":"current","key":"screen","value":2}"#)
        // A roaming change after them, as the barrier: once B has it, A has sent everything.
        #expect(try m.set("A", "barrier", "3")["ok"] == true)
        try m.waitForValues("B", ["barrier": 3])
        #expect(try m.cluster.keys(prefix: "") == [m.prefix + Self.domain + "/barrier"])
        #expect(try JSONParser.parse(try m["B"].connect().request(#"{"op":"get","domain":"com.example.local"}"#))["value"] == [:])
    }

    @Test("one member of three killed: roaming goes on, nothing visible changes")
    func oneMemberKilled() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        #expect(try m.set("A", "before", "1")["ok"] == true)
        try m.waitForValues("B", ["before": 1])
        for member in 0..<3 {
            m.cluster.kill(member)
            let onB = try m.subscriber("B")
            let sent = Date()
            #expect(try m.set("A", "member\(member)", "true")["ok"] == true)
            // A killed leader leaves the others to elect one first (an election timeout of
            // 500 ms, and a random wait of up to as much again, longer on a loaded machine):
            // until then a write waits in the cluster, however fast the daemon fails over.
            guard let line = try? onB.readEvent(timeout: 5) else {
                Issue.record("member \(member) killed: no event on B; A: \(try m.roaming("A")), B: \(try m.roaming("B"))\n\(m["A"].logText)\n\(m["B"].logText)")
                return
            }
            #expect(Date().timeIntervalSince(sent) < 5)
            let event = try JSONParser.parse(line)
            #expect(event["changes"] == ["member\(member)": true])
            try m.cluster.start(member)
            try m.cluster.waitUntilHealthy()
        }
        #expect(try m.roaming("A")["state"] == "online")
        #expect(try m.roaming("B")["state"] == "online")
        #expect(m["A"].logOccurrences(of: "lost the etcd cluster") == 0)
    }

    @Test("all members stopped: both machines keep working, A queues, the cluster returns, both converge")
    func wholeClusterStopped() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        #expect(try m.set("A", "doomed", "1")["ok"] == true)
        try m.waitForValues("B", ["doomed": 1])

        m.cluster.killAll()
        try m.waitFor("A") { $0["state"] == "offline" }
        #expect(try m.set("A", "written", #""offline""#)["ok"] == true)
        _ = try m["A"].connect().request(#"{"op":"remove","domain":"\#(Self.domain)","key":"doomed"}"#)
        #expect(try m.set("B", "fromB", "2")["ok"] == true)
        #expect(try m.values("A") == ["written": "offline"])
        try m.waitFor("A") { $0["queue"] == .integer(2) }
        // The loss is logged once, not at every retry: checked once A has counted several
        // unanswered requests (the sender's and the watch's retries, 0.1 s doubling, and the checks).
        try m.waitFor("A") { roaming in
            guard case .integer(let failures)? = roaming["failures"] else { return false }
            return failures >= 6
        }
        #expect(m["A"].logOccurrences(of: "lost the etcd cluster") == 1)

        try m.cluster.startAll()
        let expected: JSON = ["written": "offline", "fromB": 2]
        try m.waitForValues("B", expected)
        try m.waitForValues("A", expected)
        try m.waitFor("A") { $0["queue"] == .integer(0) && $0["state"] == "online" }
        #expect(m["A"].logOccurrences(of: "reached the etcd cluster again") == 1)
    }

    @Test("A restarted while the cluster is down keeps its queue, and sends it when the cluster returns")
    func queueSurvivesRestart() throws {
        let m = try RoamingMachines()
        try m.waitOnline("A")
        m.cluster.killAll()
        try m.waitFor("A") { $0["state"] == "offline" }
        #expect(try m.set("A", "kept", #""across a restart""#)["ok"] == true)
        try m.waitFor("A") { $0["queue"] == .integer(1) }
        try m["A"].restart()
        #expect(try m.roaming("A")["queue"] == .integer(1))
        try m.cluster.startAll()
        try m.waitForValues("B", ["kept": "across a restart"])
        try m.waitFor("A") { $0["queue"] == .integer(0) }
    }

    @Test("A killed (SIGKILL) once a change is in its file and before its journal is written: the change still roams after a restart")
    func killedBetweenFileAndJournal() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        m.cluster.killAll()
        try m.waitFor("A") { $0["state"] == "offline" }
        #expect(try m.set("A", "durable", #""in the file""#)["ok"] == true)
        // The file is durable at once; the journal follows 100 ms after the change.
        _ = try m["A"].connect().request(#"{"op":"synchronize"}"#)
        m["A"].kill()
        #expect(try m["A"].storedValues(Self.domain)?["durable"] == .string("in the file"))
        try m["A"].restart()
        try m.cluster.startAll()
        try m.waitForValues("B", ["durable": "in the file"], timeout: 15)
        try m.waitFor("A") { $0["queue"] == .integer(0) }
    }

    @Test("a hand edit of a roaming domain's file while A is stopped roams when A starts again")
    func editWhileStoppedRoams() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        #expect(try m.set("A", "before", "1")["ok"] == true)
        try m.waitForValues("B", ["before": 1])
        #expect(m["A"].terminate() == 0)
        let file = m["A"].storagePath + "/" + Self.domain + ".plist"
        try PropertyListFile.encode(["before": .integer(2), "added": .string("by hand")], format: .xml).write(to: URL(fileURLWithPath: file))
        try m["A"].restart()
        try m.waitForValues("B", ["before": 2, "added": "by hand"])
        #expect(m["A"].logOccurrences(of: "sending changes that reached the domain files while no journal recorded them") == 1)
    }

    @Test("A and B write the same key while cut off: both end with the same value")
    func partitionedWritesConverge() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        #expect(try m.set("A", "shared", #""before""#)["ok"] == true)
        try m.waitForValues("B", ["shared": "before"])
        m.cluster.killAll()
        try m.waitFor("A") { $0["state"] == "offline" }
        try m.waitFor("B") { $0["state"] == "offline" }
        #expect(try m.set("A", "shared", #""from A""#)["ok"] == true)
        #expect(try m.set("B", "shared", #""from B""#)["ok"] == true)
        try m.cluster.startAll()
        try m.waitFor("A") { $0["queue"] == .integer(0) && $0["state"] == "online" }
        try m.waitFor("B") { $0["queue"] == .integer(0) && $0["state"] == "online" }
        let winner = try m.values("A")
        #expect(winner == ["shared": "from A"] || winner == ["shared": "from B"])
        try m.waitForValues("B", winner)
        try m.waitForValues("A", winner)
    }

    @Test("a roaming change reaches a Swift observer on B as .roaming(host: \"A\")")
    func aSwiftObserverSeesTheRoamingHost() async throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        let defaults = SharedDefaults(configuration: DefaultsConfiguration(
            socketPath: m["B"].socketPath, appDomain: Self.domain, loadTimeout: .seconds(10), synchronizeTimeout: .seconds(10)))
        #expect(defaults.object(forKey: "warp") == nil)
        let (changes, continuation) = AsyncStream.makeStream(of: DefaultsChange.self)
        let token = defaults.observe { continuation.yield($0) }
        defer { token.cancel() }
        #expect(try m.set("A", "warp", "true")["ok"] == true)
        let change = await withTaskGroup(of: DefaultsChange?.self) { group in
            group.addTask { for await change in changes where change.keys.contains("warp") { return change }; return nil }
            group.addTask { try? await Task.sleep(for: .seconds(10)); return nil }
            let first = await group.next() ?? nil
            group.cancelAll()
            continuation.finish()
            return first
        }
        #expect(change?.origin == .roaming(host: "A"))
        #expect(defaults.bool(forKey: "warp"))
    }

    @Test("compaction while B is stopped: B reads everything again, misses nothing, applies it once")
    func compactionWhileStopped() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        #expect(try m.set("A", "early", "1")["ok"] == true)
        #expect(try m.set("A", "removed", "1")["ok"] == true)
        try m.waitForValues("B", ["early": 1, "removed": 1])
        let generation = try JSONParser.parse(try m["B"].connect().request(#"{"op":"get","domain":"\#(Self.domain)"}"#))["generation"]
        try #require(m["B"].terminate() == 0)

        #expect(try m.set("A", "late", #""while B slept""#)["ok"] == true)
        _ = try m["A"].connect().request(#"{"op":"remove","domain":"\#(Self.domain)","key":"removed"}"#)
        #expect(try m.set("A", "early", "2")["ok"] == true)
        try m.waitFor("A") { $0["queue"] == .integer(0) }
        // A may send its three changes as one transaction, one revision past B's. One more
        // revision, outside the roaming prefix, makes sure the compaction removes B's resume point.
        let marker = try JSONParser.parse(try m.cluster.control(["put", "compaction-marker", "1", "-w", "json"]).output)
        guard case .integer(let revision)? = marker["header"]?["revision"] else { Issue.record("no revision: \(marker)"); return }
        try m.cluster.compact(to: revision)

        try m["B"].restart()
        try m.waitForValues("B", ["early": 2, "late": "while B slept"])
        #expect(m["B"].waitForLog("compacted"))
        // The whole difference is one changeset: one generation more.
        guard case .integer(let before)? = generation else { Issue.record("no generation"); return }
        let after = try JSONParser.parse(try m["B"].connect().request(#"{"op":"get","domain":"\#(Self.domain)"}"#))["generation"]
        #expect(after == .integer(before + 1))
    }

    @Test("a burst of 10,000 sets on A is a few transactions, and B ends equal")
    func burstIsCoalesced() throws {
        let m = try RoamingMachines()
        try m.waitAllOnline()
        let before = try m.roaming("A")["transactions"]
        let client = try m["A"].connect()
        var lines: [UInt8] = []
        for index in 0..<10_000 {
            lines += Array(#"{"op":"set","domain":"\#(Self.domain)","key":"slider\#(index % 50)","value":\#(index)}"#.utf8) + [10]
        }
        try client.send(bytes: lines)
        for _ in 0..<10_000 { _ = try client.readResponse() }
        try m.waitFor("A") { $0["queue"] == .integer(0) }
        var expected: [String: JSON] = [:]
        for key in 0..<50 { expected["slider\(key)"] = .integer(Int64(9_950 + key)) }
        try m.waitForValues("B", .object(expected))
        guard case .integer(let first)? = before, case .integer(let last)? = try m.roaming("A")["transactions"] else {
            Issue.record("no transaction count"); return
        }
        #expect(last - first <= 20)
        #expect(last - first >= 1)
    }

    @Test("a cluster with authentication on: the user and password from the configuration work; a wrong password is refused and logged once, never printed")
    func authentication() throws {
        let m = try RoamingMachines(hosts: [])
        let control = { (arguments: [String]) throws in
            let result = try m.cluster.control(arguments)
            if result.status != 0 { throw EtcdClusterFailure("etcdctl \(arguments): \(result.output)") }
        }
        try control(["user", "add", "root:root-pw"])
        try control(["user", "add", "ada:ada-pw"])
        try control(["role", "add", "ada-defaults"])
        try control(["role", "grant-permission", "ada-defaults", "--prefix=true", "readwrite", m.prefix])
        try control(["user", "grant-role", "ada", "ada-defaults"])
        try control(["auth", "enable"])

        m.credentials = ("ada", "ada-pw")
        try m.start("A")
        try m.start("B")
        try m.waitAllOnline()
        let onB = try m.subscriber("B")
        #expect(try m.set("A", "signedIn", "true")["ok"] == true)
        let event = try JSONParser.parse(try onB.readEvent(timeout: 2))
        #expect(event["changes"] == ["signedIn": true] && event["origin"]?["host"] == "A")

        m.credentials = ("ada", "wrong-pw")
        try m.start("C")
        try m.waitFor("C") { $0["state"] == "offline" }
        #expect(m["C"].waitForLog("authentication failed"))
        #expect(m["C"].logOccurrences(of: "lost the etcd cluster") == 1)
        for host in ["A", "B", "C"] {
            #expect(!m[host].logText.contains("ada-pw") && !m[host].logText.contains("wrong-pw"))
        }
    }

    @Test("under the user unit's sandbox, read from the unit and applied with seccomp, roaming works both ways; narrowed to AF_UNIX, it cannot reach etcd")
    func underTheUnitsSandbox() throws {
        let m = try RoamingMachines(hosts: ["B"])
        try m.start("A", sandbox: try UnitSandbox(unit: "user"))
        try m.waitAllOnline()
        // The sandbox program became the daemon, its filters loaded (one per property group).
        let status = try String(contentsOfFile: "/proc/\(m["A"].process.processIdentifier)/status", encoding: .utf8)
        #expect(status.contains("NoNewPrivs:\t1") && status.contains("Seccomp:\t2") && status.contains("Seccomp_filters:\t7"), "\(status)")
        #expect(try String(contentsOfFile: "/proc/\(m["A"].process.processIdentifier)/comm", encoding: .utf8) == "defaultsd\n")
        let onB = try m.subscriber("B")
        #expect(try m.set("A", "shields", "true")["ok"] == true)
        let event = try JSONParser.parse(try onB.readEvent(timeout: 2))
        #expect(event["changes"] == ["shields": true] && event["origin"]?["host"] == "A")
        #expect(try m.set("B", "rank", #""Captain""#)["ok"] == true)
        try m.waitForValues("A", ["shields": true, "rank": "Captain"])

        // The sandbox is real: the unit as it was before roaming, AF_UNIX only, keeps the daemon
        // from etcd, while its socket still serves.
        try m.start("C", sandbox: try UnitSandbox(unit: "user", overrides: ["RestrictAddressFamilies": "AF_UNIX"]))
        try m.waitFor("C") { $0["state"] == "offline" }
        #expect(m["C"].waitForLog("Address family not supported"), "\(m["C"].logText)")
        #expect(try m["C"].connect().request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
    }

    @Test("SIGHUP with a new roaming.domains: the domain starts roaming, taking etcd's keys and sending its own")
    func reloadAddsADomain() throws {
        let later = "com.example.later"
        let m = try RoamingMachines(hosts: ["A"])
        // A second machine that already roams `later`.
        try m.start("B", domains: [Self.domain, later])
        try m.waitAllOnline()
        _ = try m.set("B", "fromB", "1", domain: later)
        _ = try m.set("A", "localOnly", "2", domain: later)
        #expect(try m.values("A", domain: later) == ["localOnly": 2])

        try m.writeConfiguration(host: "A", domains: [Self.domain, later])
        m["A"].send(SIGHUP)
        try m.waitForValues("A", ["fromB": 1, "localOnly": 2], domain: later)
        #expect(try m.roaming("A")["domains"] == [.string(later), .string(Self.domain)])
        try m.waitForValues("B", ["fromB": 1, "localOnly": 2], domain: later)
    }
}
