import Foundation

/// Hosts on a private network for the tests that cross one: a network namespace per host, each
/// with one veth link to a bridge in a namespace of its own (the switch), addresses 10.N.0.x/24.
/// Partitions are routes: ``cut(_:from:)`` blackholes the two hosts' addresses from each other,
/// so a cut host still reaches every other host, as on a real network where one path fails.
///
/// Needs root and iproute2 (`ip netns`); ``unavailableReason`` says why not when either lacks.
/// Everything it makes goes away with the namespaces when it is released.
///
/// ```swift
/// let network = try TestNetwork(hosts: ["m0", "m1", "m2", "A", "B"])
/// network.address(of: "m0")       // "10.77.0.2"
/// try network.cut("m2", from: "m0")
/// try network.heal()
/// ```
public final class TestNetwork: @unchecked Sendable {
    public static let ip = ["/usr/sbin/ip", "/sbin/ip", "/usr/bin/ip", "/bin/ip"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Why no test network can be made here, or nil when one can.
    public static let unavailableReason: String? = {
        guard getuid() == 0 else { return "network namespaces need root" }
        guard let ip else { return "iproute2 is not installed (apt-get install iproute2)" }
        let probe = "ddprobe\(getpid())"
        guard (try? run(ip, ["netns", "add", probe]))?.status == 0 else { return "this machine does not allow network namespaces" }
        _ = try? run(ip, ["netns", "del", probe])
        return nil
    }()

    public let hosts: [String]
    private let tag: String
    private let subnet: Int
    private var cuts: Set<[String]> = []

    public init(hosts: [String]) throws {
        if let reason = TestNetwork.unavailableReason { throw EtcdClusterFailure(reason) }
        self.hosts = hosts
        tag = "dd\(UUID().uuidString.prefix(5).lowercased())"
        subnet = 77
        try ip(["netns", "add", switchNamespace])
        try ip(["-n", switchNamespace, "link", "add", "br0", "type", "bridge"])
        try ip(["-n", switchNamespace, "link", "set", "br0", "up"])
        try ip(["-n", switchNamespace, "address", "add", "10.\(subnet).0.1/24", "dev", "br0"])
        for (index, host) in hosts.enumerated() {
            let namespace = self.namespace(of: host)
            try ip(["netns", "add", namespace])
            try ip(["-n", namespace, "link", "set", "lo", "up"])
            try ip(["-n", namespace, "link", "add", "eth0", "type", "veth", "peer", "name", "p\(index)", "netns", switchNamespace])
            try ip(["-n", namespace, "address", "add", "\(address(of: host))/24", "dev", "eth0"])
            try ip(["-n", namespace, "link", "set", "eth0", "up"])
            try ip(["-n", switchNamespace, "link", "set", "p\(index)", "master", "br0"])
            try ip(["-n", switchNamespace, "link", "set", "p\(index)", "up"])
        }
    }

    /// The namespace of the switch, which reaches every host (the tests' own `etcdctl` runs there).
    public var switchNamespace: String { "\(tag)-sw" }

    public func namespace(of host: String) -> String { "\(tag)-\(host)" }

    public func address(of host: String) -> String {
        guard let index = hosts.firstIndex(of: host) else { preconditionFailure("no host \(host)") }
        return "10.\(subnet).0.\(index + 2)"
    }

    /// The command that runs `arguments` inside `namespace` (for `Process`): `ip netns exec`,
    /// which replaces itself with the program, so the process's PID is the program's.
    public static func inside(_ namespace: String, _ arguments: [String]) -> [String] {
        // A network is made only where `ip` exists (``unavailableReason``); "ip" then fails clearly.
        [ip ?? "ip", "netns", "exec", namespace] + arguments
    }

    /// `a` and `b` no longer reach each other; each still reaches every other host. Connections
    /// between them stay open and carry nothing, as across a real partition.
    public func cut(_ a: String, from b: String) throws {
        try ip(["-n", namespace(of: a), "route", "add", "blackhole", address(of: b) + "/32"])
        try ip(["-n", namespace(of: b), "route", "add", "blackhole", address(of: a) + "/32"])
        cuts.insert([a, b])
    }

    /// Cuts every host of `side` from every host of `other`.
    public func partition(_ side: [String], from other: [String]) throws {
        for a in side { for b in other { try cut(a, from: b) } }
    }

    /// Every cut is mended.
    public func heal() throws {
        for pair in cuts {
            try ip(["-n", namespace(of: pair[0]), "route", "del", "blackhole", address(of: pair[1]) + "/32"])
            try ip(["-n", namespace(of: pair[1]), "route", "del", "blackhole", address(of: pair[0]) + "/32"])
        }
        cuts = []
    }

    private func ip(_ arguments: [String]) throws {
        let result = try TestNetwork.run(TestNetwork.ip ?? "ip", arguments)
        guard result.status == 0 else { throw EtcdClusterFailure("ip \(arguments.joined(separator: " ")): \(result.output)") }
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> FinishedRun {
        try FinishedRun.run(executable, arguments, environment: ProcessInfo.processInfo.environment)
    }

    deinit {
        for host in hosts { _ = try? TestNetwork.run(TestNetwork.ip ?? "ip", ["netns", "del", namespace(of: host)]) }
        _ = try? TestNetwork.run(TestNetwork.ip ?? "ip", ["netns", "del", switchNamespace])
    }
}
