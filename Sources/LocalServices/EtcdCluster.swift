import Foundation

/// A real etcd cluster for the roaming tests and the benchmark: `size` members with distinct
/// client and peer ports, each with a private data directory under `directory`, each stopped by
/// its PID. Members can be killed and started again on their data, or frozen and thawed. A
/// ``ProcessLeash`` stops them when the test's process ends without running `deinit`.
///
/// On loopback by default; on a ``TestNetwork``, member `i` runs in the namespace of host `m<i>`
/// at that host's address, and `etcdctl` runs in the network's switch, which reaches them all.
///
/// ```swift
/// let cluster = try EtcdCluster(size: 3)
/// cluster.endpoints   // ["http://127.0.0.1:41234", ...]
/// cluster.kill(0)
/// try cluster.start(0)
/// ```
public final class EtcdCluster: @unchecked Sendable {
    public struct Member {
        public var name: String
        public var clientPort: Int
        public var peerPort: Int
        public var dataDirectory: String
        /// Where it listens: 127.0.0.1, or its host's address on the test network.
        public var address: String
        var namespace: String?
        var process: Process?
        var log: String
    }

    public static let binary = ["/usr/bin/etcd", "/usr/local/bin/etcd"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static let control = ["/usr/bin/etcdctl", "/usr/local/bin/etcdctl"].first { FileManager.default.isExecutableFile(atPath: $0) }
    public static var isInstalled: Bool { binary != nil && control != nil }

    public let directory: String
    public private(set) var members: [Member]
    private let initialCluster: String
    /// When set, clients must speak TLS and show a certificate signed by `ca`.
    private let tls: (certificate: String, key: String, ca: String)?
    private let network: TestNetwork?
    /// Stops the members and removes `directory` when the test's process ends without `deinit`.
    let leash: ProcessLeash

    public init(size: Int = 3, tls: (certificate: String, key: String, ca: String)? = nil, network: TestNetwork? = nil) throws {
        self.tls = tls
        self.network = network
        guard let _ = EtcdCluster.binary else { throw EtcdClusterFailure("etcd is not installed (apt-get install etcd-server)") }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-etcd-\(UUID().uuidString.prefix(8))").path
        self.directory = directory
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        // Every member's command line names its data directory, inside `directory`.
        leash = try ProcessLeash(directory: directory)
        let ports = try EtcdCluster.freePorts(2 * size)
        members = (0..<size).map { index in
            Member(
                name: "m\(index)", clientPort: ports[2 * index], peerPort: ports[2 * index + 1],
                dataDirectory: "\(directory)/m\(index).etcd", address: network?.address(of: "m\(index)") ?? "127.0.0.1",
                namespace: network?.namespace(of: "m\(index)"), process: nil, log: "\(directory)/m\(index).log")
        }
        initialCluster = members.map { "\($0.name)=http://\($0.address):\($0.peerPort)" }.joined(separator: ",")
        for index in members.indices { try launch(index) }
        try waitUntilHealthy()
    }

    /// The client URLs of every member, running or not.
    public var endpoints: [String] { members.map { endpoint($0) } }

    private func endpoint(_ member: Member) -> String { "\(scheme)://\(member.address):\(member.clientPort)" }

    private var scheme: String { tls == nil ? "http" : "https" }

    /// Stops a member at once (SIGKILL), as a machine that loses power.
    public func kill(_ index: Int) {
        guard let process = members[index].process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        members[index].process = nil
    }

    public func killAll() { for index in members.indices { kill(index) } }

    /// Freezes a member (SIGSTOP): alive, its connections open, and silent, as a hung member or
    /// one behind a path that drops everything looks to its clients.
    public func freeze(_ index: Int) {
        guard let process = members[index].process, process.isRunning else { return }
        Foundation.kill(process.processIdentifier, SIGSTOP)
    }

    /// Lets a frozen member go on (SIGCONT).
    public func thaw(_ index: Int) {
        guard let process = members[index].process else { return }
        Foundation.kill(process.processIdentifier, SIGCONT)
    }

    /// Starts a stopped member again on its data directory.
    public func start(_ index: Int) throws {
        guard members[index].process == nil else { return }
        try launch(index)
    }

    /// Starts every stopped member and waits until the cluster answers.
    public func startAll() throws {
        for index in members.indices { try start(index) }
        try waitUntilHealthy()
    }

    private func launch(_ index: Int) throws {
        let member = members[index]
        let process = Process()
        let command = [
            // `init` refuses to make a cluster without it.
            EtcdCluster.binary!,
            "--name", member.name, "--data-dir", member.dataDirectory,
            "--listen-client-urls", endpoint(member), "--advertise-client-urls", endpoint(member),
            "--listen-peer-urls", "http://\(member.address):\(member.peerPort)",
            "--initial-advertise-peer-urls", "http://\(member.address):\(member.peerPort)",
            "--initial-cluster", initialCluster, "--initial-cluster-token", URL(fileURLWithPath: directory).lastPathComponent,
            "--initial-cluster-state", "new",
            // Elections in a loopback cluster need not wait for a network's delays.
            "--heartbeat-interval", "50", "--election-timeout", "500",
        ] + (tls.map { ["--cert-file", $0.certificate, "--key-file", $0.key, "--trusted-ca-file", $0.ca, "--client-cert-auth"] } ?? [])
        let placed = member.namespace.map { TestNetwork.inside($0, command) } ?? command
        process.executableURL = URL(fileURLWithPath: placed[0])
        process.arguments = Array(placed.dropFirst())
        if !FileManager.default.fileExists(atPath: member.log) { _ = FileManager.default.createFile(atPath: member.log, contents: nil) }
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: member.log))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        process.environment = ["PATH": "/usr/bin:/bin"]
        try process.run()
        members[index].process = process
    }

    /// Waits until every running member reports itself healthy (it has a leader).
    public func waitUntilHealthy(timeout: Double = 30) throws {
        let running = members.filter { $0.process != nil }.map { endpoint($0) }
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let result = try control(["endpoint", "health", "--endpoints", running.joined(separator: ",")])
            if result.status == 0 { return }
            Thread.sleep(forTimeInterval: 0.1)
        }
        throw EtcdClusterFailure("the etcd cluster did not become healthy: \(logs())")
    }

    /// Runs `etcdctl` (API v3) against the running members until it exits, or, for a command
    /// that does not end by itself (`watch`), until its output satisfies `until` or `timeout`
    /// seconds pass; it is then stopped.
    public func control(
        _ arguments: [String], until done: ((String) -> Bool)? = nil, timeout: Double = 30
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        var arguments = arguments
        if !arguments.contains("--endpoints") {
            arguments += ["--endpoints", members.filter { $0.process != nil }.map { endpoint($0) }.joined(separator: ",")]
        }
        if let tls {
            // The server's certificate serves as the client's: it is made for both uses.
            arguments += ["--cacert", tls.ca, "--cert", tls.certificate, "--key", tls.key]
        }
        // Installed with etcd (etcd-client), which `init` requires.
        let command = [EtcdCluster.control ?? "etcdctl", "--dial-timeout", "1s", "--command-timeout", "3s"] + arguments
        let placed = network.map { TestNetwork.inside($0.switchNamespace, command) } ?? command
        process.executableURL = URL(fileURLWithPath: placed[0])
        process.arguments = Array(placed.dropFirst())
        process.environment = ["ETCDCTL_API": "3", "PATH": "/usr/bin:/bin"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        guard let done else {
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let collected = LogBuffer()
        collected.capture(output.fileHandleForReading)
        try process.run()
        _ = collected.wait(until: done, timeout: timeout)
        process.terminate()
        process.waitUntilExit()
        return (process.terminationStatus, collected.waitForEnd())
    }

    /// Compacts the history up to `revision` and returns once every running member has applied
    /// the compaction. The member that takes `etcdctl compact` answers after its own apply; the
    /// others apply it from the log later, and a watch started on one of them meanwhile would
    /// still be served the compacted revisions. A linearizable read of `revision - 1` on a member
    /// waits until that member has applied everything committed, so it proves the compaction there.
    public func compact(to revision: Int64) throws {
        let compaction = try control(["compact", String(revision)])
        guard compaction.status == 0 else { throw EtcdClusterFailure("compact \(revision): \(compaction.output)") }
        guard revision > 1 else { return }
        for member in members where member.process != nil {
            let read = try control([
                "get", "compaction-probe", "--rev", String(revision - 1),
                "--endpoints", endpoint(member),
            ])
            guard read.status != 0, read.output.contains("compacted") else {
                throw EtcdClusterFailure("\(member.name) still serves revision \(revision - 1) after the compaction: \(read.output)")
            }
        }
    }

    /// Every key under `prefix`; with an empty prefix, every key the cluster holds.
    public func keys(prefix: String) throws -> [String] {
        let result = try control(prefix.isEmpty ? ["get", "", "--from-key", "--keys-only"] : ["get", "--prefix", prefix, "--keys-only"])
        return result.output.split(separator: "\n").map(String.init).filter { !$0.isEmpty }
    }

    public func logs() -> String {
        members.map { "--- \($0.name)\n" + ((try? String(contentsOfFile: $0.log, encoding: .utf8)).map { String($0.suffix(2000)) } ?? "") }
            .joined(separator: "\n")
    }

    private static func freePorts(_ count: Int) throws -> [Int] {
        var sockets: [Int32] = []
        defer { for fd in sockets { close(fd) } }
        var ports: [Int] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
            }
            guard bound else { throw EtcdClusterFailure("no free port") }
            sockets.append(fd)
            ports.append(Int(UInt16(bigEndian: address.sin_port)))
        }
        return ports
    }

    deinit {
        for index in members.indices { thaw(index) }
        killAll()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

public struct EtcdClusterFailure: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
