import DaemonTestSupport
import LocalServices
import DefaultsCore
import Foundation
import LineSocket

/// Two machines of one user for the roaming tests: two real `defaultsd` processes with their own
/// storage, each given a configuration file with a `roaming` section naming the same etcd
/// cluster and their own host name. On a ``TestNetwork`` each runs in its host's namespace.
final class RoamingMachines: @unchecked Sendable {
    static let domain = "com.example.roaming"
    let cluster: EtcdCluster
    let prefix: String
    private let configurations: String
    private(set) var machines: [String: DaemonProcess] = [:]
    let network: TestNetwork?
    /// The order in which a host lists the members, by index (default: the cluster's order).
    /// The watch runs through the first member that serves it.
    var memberOrder: [String: [Int]]

    init(
        cluster: EtcdCluster? = nil, hosts: [String] = ["A", "B"], domains: [String] = [RoamingMachines.domain],
        network: TestNetwork? = nil, memberOrder: [String: [Int]] = [:]
    ) throws {
        self.network = network
        self.memberOrder = memberOrder
        self.cluster = try cluster ?? EtcdCluster(size: 3, network: network)
        prefix = "/defaultsd/test-\(UUID().uuidString.prefix(8))/"
        configurations = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-roaming-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: configurations, withIntermediateDirectories: true)
        for host in hosts { try start(host, domains: domains) }
    }

    subscript(host: String) -> DaemonProcess { machines[host]! }

    func configurationPath(_ host: String) -> String { "\(configurations)/\(host).json" }

    /// etcd credentials written into every configuration from now on (the file is then mode 0600).
    var credentials: (user: String, password: String)?

    func writeConfiguration(host: String, domains: [String]) throws {
        let list = domains.map { "\"\($0)\"" }.joined(separator: ", ")
        let order = memberOrder[host] ?? Array(cluster.endpoints.indices)
        let endpoints = order.map { "\"\(cluster.endpoints[$0])\"" }.joined(separator: ", ")
        // The cluster is on loopback, so the password may travel over http://.
        let login = credentials.map { #", user: "\#($0.user)", password: "\#($0.password)", sendPasswordOverHTTP: true"# } ?? ""
        try """
            { roaming: { endpoints: [\(endpoints)], domains: [\(list)], prefix: "\(prefix)", hostName: "\(host)"\(login) } }
            """.write(toFile: configurationPath(host), atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: configurationPath(host))
    }

    /// Starts `host`'s daemon; with `sandbox`, inside it, as the unit would run it.
    func start(_ host: String, domains: [String] = [RoamingMachines.domain], arguments: [String] = [], sandbox: UnitSandbox? = nil) throws {
        try writeConfiguration(host: host, domains: domains)
        machines[host] = try DaemonProcess(
            arguments: ["--config", configurationPath(host)] + arguments, networkNamespace: network?.namespace(of: host),
            commandPrefix: sandbox?.commandPrefix ?? [])
    }

    /// The `roaming` member of `stats` on `host`.
    func roaming(_ host: String) throws -> JSON {
        let client = try self[host].connect()
        return try JSONParser.parse(try client.request(#"{"op":"stats"}"#))["roaming"] ?? .null
    }

    /// Waits until `host`'s roaming state satisfies `condition` (the state is polled: it is not an event).
    @discardableResult
    func waitFor(_ host: String, timeout: Double = 10, _ condition: (JSON) -> Bool) throws -> JSON {
        let deadline = Date().addingTimeInterval(timeout)
        var last = JSON.null
        while Date() < deadline {
            last = try roaming(host)
            if condition(last) { return last }
            Thread.sleep(forTimeInterval: 0.02)
        }
        throw LineSocket.Failure(description: "\(host) never reached the expected roaming state; last: \(last)\n\(self[host].logText)")
    }

    func waitOnline(_ host: String) throws { try waitFor(host) { $0["state"] == "online" } }

    /// Waits until every machine is online.
    func waitAllOnline() throws { for host in machines.keys.sorted() { try waitOnline(host) } }

    /// A subscriber of `domain` on `host`, its subscription confirmed.
    func subscriber(_ host: String, domain: String = RoamingMachines.domain) throws -> LineSocket {
        let client = try self[host].connect()
        _ = try client.request(#"{"op":"subscribe","domains":["\#(domain)"]}"#)
        return client
    }

    func set(_ host: String, _ key: String, _ valueJSON: String, domain: String = RoamingMachines.domain) throws -> JSON {
        let client = try self[host].connect()
        return try JSONParser.parse(try client.request(#"{"op":"set","domain":"\#(domain)","key":"\#(key)","value":\#(valueJSON)}"#))
    }

    func values(_ host: String, domain: String = RoamingMachines.domain) throws -> JSON {
        let client = try self[host].connect()
        return try JSONParser.parse(try client.request(#"{"op":"get","domain":"\#(domain)"}"#))["value"] ?? .null
    }

    /// Waits for `host`'s values of `domain` to equal `expected`, re-reading after each change event.
    func waitForValues(_ host: String, _ expected: JSON, domain: String = RoamingMachines.domain, timeout: Double = 10) throws {
        let events = try subscriber(host, domain: domain)
        let deadline = Date().addingTimeInterval(timeout)
        var current = try values(host, domain: domain)
        while current != expected {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else {
                throw LineSocket.Failure(description: "\(host) holds \(current), expected \(expected)\n\(self[host].logText)")
            }
            _ = try? events.readEvent(timeout: min(remaining, 0.5))
            current = try values(host, domain: domain)
        }
    }

    deinit {
        machines.removeAll()
        try? FileManager.default.removeItem(atPath: configurations)
    }
}
