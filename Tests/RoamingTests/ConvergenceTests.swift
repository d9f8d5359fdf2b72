import DaemonTestSupport
import LocalServices
import DefaultsCore
import Foundation
import LineSocket
import TestThreads
import Testing

/// Roaming held to its guarantees under random faults, in the manner of Jepsen: three daemons
/// make random sets and removals of a few keys while faults from a fixed list strike one at a
/// time, then everything heals and the outcome is checked against etcd's whole history
/// (docs/ROAMING.md, "What converging means").
///
/// 60 s in CI with a fixed seed. `DEFAULTSD_CONVERGENCE_SECONDS` runs longer and
/// `DEFAULTSD_CONVERGENCE_SEED` replays a run; the seed is printed at the start. On a machine
/// without network namespaces the partition faults are left out, and the run says so.
@Suite("Roaming converges under random faults", .serialized, .ownThreads)
struct ConvergenceTests {
    static let keys = (0..<6).map { "k\($0)" }
    static let hosts = ["A", "B", "C"]

    /// A fault, struck at random and healed before the next.
    enum Fault: CustomStringConvertible {
        case freezeMember(Int)
        case killMember(Int)
        case isolateMember(Int)
        /// A daemon cut off from every member.
        case isolateDaemon(String)
        /// A member and a daemon cut off from the rest.
        case split(member: Int, daemon: String)
        case killDaemon(String)
        case compact

        var description: String {
            switch self {
            case .freezeMember(let member): "freeze m\(member)"
            case .killMember(let member): "kill m\(member)"
            case .isolateMember(let member): "cut m\(member) off"
            case .isolateDaemon(let host): "cut \(host) off every member"
            case .split(let member, let host): "cut m\(member) and \(host) off the rest"
            case .killDaemon(let host): "SIGKILL \(host)"
            case .compact: "compact"
            }
        }
    }

    /// What each daemon was asked to do: the values it set, and the keys it removed.
    struct Made {
        var sets: Set<[String]> = []
        var removals: Set<String> = []
    }

    @Test("random sets and removals on three daemons under random faults: all end equal to etcd's last write of each key, and nothing is invented")
    func randomFaults() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["DEFAULTSD_CONVERGENCE_SEED"].flatMap(UInt64.init) ?? 20_261_125
        let seconds = environment["DEFAULTSD_CONVERGENCE_SECONDS"].flatMap(Double.init) ?? 60
        let network = TestNetwork.unavailableReason == nil ? try TestNetwork(hosts: ["m0", "m1", "m2"] + Self.hosts) : nil
        print("convergence: seed \(seed) (DEFAULTSD_CONVERGENCE_SEED), \(Int(seconds)) s"
            + (network == nil ? "; partitions left out: \(TestNetwork.unavailableReason ?? "")" : ""))
        var random = SeededRandom(seed: seed)
        let m = try RoamingMachines(hosts: Self.hosts, network: network)
        try m.waitAllOnline()
        var history = EtcdHistory(cluster: m.cluster, prefix: m.prefix + RoamingMachines.domain + "/")
        var made = Dictionary(uniqueKeysWithValues: Self.hosts.map { ($0, Made()) })
        var struck: [String] = []

        var faults: [Fault] = (0..<3).flatMap { [Fault.freezeMember($0), .killMember($0)] } + Self.hosts.map { .killDaemon($0) } + [.compact]
        if network != nil {
            faults += (0..<3).map { .isolateMember($0) } + Self.hosts.map { .isolateDaemon($0) }
                + (0..<3).flatMap { member in Self.hosts.map { Fault.split(member: member, daemon: $0) } }
        }

        // The schedule counts operations, not seconds, so that a seed replays the same run:
        // about 14 operations a second here.
        let operations = Int(seconds * 14)
        var active: (fault: Fault, until: Int)?
        var nextFault = 10
        for operation in 1...operations {
            // One operation on a random daemon; a daemon that is down refuses, as it would a person.
            let host = Self.hosts[Int(random.next() % 3)]
            let key = Self.keys[Int(random.next() % UInt64(Self.keys.count))]
            if random.next() % 10 < 7 {
                let value = "\(host)-\(operation)"
                made[host]!.sets.insert([key, value])
                _ = try? m.set(host, key, "\"\(value)\"")
            } else {
                made[host]!.removals.insert(key)
                _ = try? m[host].connect().request(#"{"op":"remove","domain":"\#(RoamingMachines.domain)","key":"\#(key)"}"#, timeout: 2)
            }
            Thread.sleep(forTimeInterval: Double(random.next() % 100) / 1000)

            if let (fault, until) = active, operation >= until {
                try heal(fault, m)
                active = nil
                nextFault = operation + 5 + Int(random.next() % 15)
            } else if active == nil, operation >= nextFault {
                let fault = faults[Int(random.next() % UInt64(faults.count))]
                struck.append(fault.description)
                try strike(fault, m, &history)
                active = (fault, operation + 10 + Int(random.next() % 30))
            }
        }
        if let (fault, _) = active { try heal(fault, m) }
        print("convergence: \(operations) operations; faults: \(struck.joined(separator: ", "))")

        // Everything healed: the three daemons end equal, within the stated time.
        let converged = Date().addingTimeInterval(30)
        var values = try Self.hosts.map { try m.values($0) }
        while Set(values).count > 1, Date() < converged {
            Thread.sleep(forTimeInterval: 0.2)
            values = try Self.hosts.map { try m.values($0) }
        }
        let context = "seed \(seed); faults: \(struck.joined(separator: ", "))"
        #expect(Set(values).count == 1, "the daemons differ (\(context)): \(zip(Self.hosts, values).map { "\($0): \($1)" })")

        // Every write etcd committed is the final value of its key or was overwritten by a
        // write with a higher revision; a removed key does not come back.
        try history.readToTheEnd()
        var last: [String: EtcdHistory.Write] = [:]
        for write in history.writes { last[write.key] = write }
        let expected = JSON.object(last.compactMapValues { $0.value.map { JSON.string($0) } })
        for (host, held) in zip(Self.hosts, values) {
            #expect(held == expected, "\(host) holds \(held), etcd's last writes are \(expected) (\(context))")
        }
        // No machine sent a write it never made.
        for write in history.writes {
            guard let host = write.host, let record = made[host] else {
                Issue.record("a write by no daemon of the test: \(write) (\(context))")
                continue
            }
            if let value = write.value {
                #expect(record.sets.contains([write.key, value]), "\(host) never set \(write.key) to \(value) (\(context))")
            } else {
                #expect(record.removals.contains(write.key), "\(host) never removed \(write.key) (\(context))")
            }
        }
        #expect(history.writes.count > 50, "too few writes reached etcd to say anything (\(context))")
    }

    private func strike(_ fault: Fault, _ m: RoamingMachines, _ history: inout EtcdHistory) throws {
        switch fault {
        case .freezeMember(let member): m.cluster.freeze(member)
        case .killMember(let member): m.cluster.kill(member)
        case .isolateMember(let member):
            try m.network!.partition(["m\(member)"], from: (0..<3).filter { $0 != member }.map { "m\($0)" })
        case .isolateDaemon(let host): try m.network!.partition([host], from: ["m0", "m1", "m2"])
        case .split(let member, let host):
            let rest = (0..<3).filter { $0 != member }.map { "m\($0)" } + Self.hosts.filter { $0 != host }
            try m.network!.partition(["m\(member)", host], from: rest)
        case .killDaemon(let host): m[host].kill()
        case .compact:
            // The history is read first: compaction removes what the final check reads.
            try history.readToTheEnd()
            if history.revision > 1 { try m.cluster.compact(to: history.revision) }
        }
    }

    private func heal(_ fault: Fault, _ m: RoamingMachines) throws {
        switch fault {
        case .freezeMember(let member): m.cluster.thaw(member)
        case .killMember(let member):
            try m.cluster.start(member)
            try m.cluster.waitUntilHealthy()
        case .isolateMember, .isolateDaemon, .split: try m.network!.heal()
        case .killDaemon(let host): try m[host].restart()
        case .compact: break
        }
    }
}

/// The writes etcd committed under one prefix, in revision order, read with `etcdctl watch` from
/// the revision after the last one read (a watch from an old revision replays the history).
struct EtcdHistory {
    struct Write: CustomStringConvertible {
        var revision: Int64
        var key: String
        /// The value set, or nil for a removal.
        var value: String?
        /// The daemon that wrote it (nil: deleted in etcd by something else).
        var host: String?

        var description: String { "r\(revision) \(key) = \(value ?? "(removed)") by \(host ?? "?")" }
    }

    let cluster: EtcdCluster
    let prefix: String
    private(set) var writes: [Write] = []
    /// The cluster's revision when the history was last read to its end.
    private(set) var revision: Int64 = 0

    init(cluster: EtcdCluster, prefix: String) {
        self.cluster = cluster
        self.prefix = prefix
    }

    /// Reads every write after the last one read, up to the cluster's current revision, once
    /// the cluster has a leader (a member just back from a partition may call an election).
    mutating func readToTheEnd() throws {
        var attempt = 0
        while true {
            attempt += 1
            do {
                try cluster.waitUntilHealthy()
                return try readOnce()
            } catch where attempt < 5 {
                Thread.sleep(forTimeInterval: 0.5)
            }
        }
    }

    private mutating func readOnce() throws {
        let status = try cluster.control(["endpoint", "status", "-w", "json"])
        guard case .array(let members) = try JSONParser.parse(status.output),
            let current = members.compactMap({ member -> Int64? in
                if case .integer(let revision)? = member["Status"]?["header"]?["revision"] { return revision }
                return nil
            }).max()
        else { throw EtcdClusterFailure("no revision from etcdctl endpoint status: \(status.output)") }
        guard current > revision else { return }
        // The watch replays from the revision asked for, then waits; it is stopped once the
        // replay has reached the current revision (or after 10 s).
        let watch = try cluster.control(["watch", "--prefix", prefix, "--rev", String(revision + 1), "-w", "json"], until: { output in
            EtcdHistory.highestRevision(in: output) >= current
        }, timeout: 10)
        for line in watch.output.split(separator: "\n") where line.hasPrefix("{\"Header\"") {
            let response = try JSONParser.parse(String(line))
            guard case .array(let events)? = response["Events"] else { continue }
            for event in events {
                guard case .string(let key64)? = event["kv"]?["key"], let keyData = Data(base64Encoded: key64),
                    case .integer(let modRevision)? = event["kv"]?["mod_revision"]
                else { continue }
                guard modRevision <= current else { continue }  // read again, in order, next time
                let key = String(decoding: keyData, as: UTF8.self).dropFirst(prefix.count)
                if event["type"] == .integer(1) {
                    writes.append(Write(revision: modRevision, key: String(key), value: nil, host: nil))
                    continue
                }
                guard case .string(let value64)? = event["kv"]?["value"], let valueData = Data(base64Encoded: value64) else { continue }
                let entry = try JSONParser.parse(String(decoding: valueData, as: UTF8.self))
                var value: String?
                if case .string(let text)? = entry["value"] { value = text }
                guard case .string(let host)? = entry["host"] else { continue }
                writes.append(Write(revision: modRevision, key: String(key), value: value, host: host))
            }
        }
        guard EtcdHistory.highestRevision(in: watch.output) >= current else {
            throw EtcdClusterFailure("the history replay stopped before revision \(current): \(watch.output.suffix(500))")
        }
        revision = current
    }

    /// The highest `mod_revision` in `etcdctl watch -w json` output.
    static func highestRevision(in output: String) -> Int64 {
        var highest: Int64 = 0
        var rest = Substring(output)
        while let range = rest.range(of: "\"mod_revision\":") {
            rest = rest[range.upperBound...]
            if let value = Int64(rest.prefix(while: \.isNumber)) { highest = max(highest, value) }
        }
        return highest
    }
}
