import LocalServices
import DefaultsCore
import Foundation
import LineSocket

/// Roaming across two machines: two daemons (A and B, each with its own storage) on one 3-member
/// etcd cluster on loopback, as the roaming tests run them. Measures a `set` on A → the
/// `didChange` at B's subscriber, how many etcd transactions a burst of sets on A becomes, and
/// how long B takes to notice that the member its watch runs through froze (SIGSTOP) and to
/// receive A's change through another member.
enum RoamingLatency {
    static let domain = "com.bench.roaming"

    struct Results {
        var latencies: [Double]
        var burst: Int
        var burstTransactions: Int64
        /// For each freeze of B's watched member: seconds until B's `stats` showed the watch
        /// stale or moved, and until A's change made meanwhile reached B's subscriber.
        var staleDetections: [Double]
        var staleDeliveries: [Double]
    }

    /// Nil when etcd is not installed.
    static func measure(binary: String, directory: String, changes: Int = 300, burst: Int = 10_000) throws -> Results? {
        guard EtcdCluster.isInstalled else { return nil }
        let cluster = try EtcdCluster(size: 3)
        var machines: [String: Server] = [:]
        defer { for server in machines.values { server.stop() } }
        for host in ["A", "B"] {
            let configuration = "\(directory)/roaming-\(host).json"
            let endpoints = cluster.endpoints.map { "\"\($0)\"" }.joined(separator: ", ")
            try """
                { settingsBundleDirectories: [], roaming: { endpoints: [\(endpoints)], domains: ["\(domain)"], prefix: "/bench/", hostName: "\(host)" } }
                """.write(toFile: configuration, atomically: true, encoding: .utf8)
            machines[host] = try Server.start(
                binary,
                ["--config", configuration, "--socket", "\(directory)/roaming-\(host).sock", "--storage-dir", "\(directory)/roaming-\(host)"],
                readyWhen: "roaming through etcd")
        }
        let a = try LineSocket(path: "\(directory)/roaming-A.sock")
        let b = try LineSocket(path: "\(directory)/roaming-B.sock")
        _ = try b.request(JSON.requestLine(.subscribe, ["domains": [.string(domain)]]))

        var latencies: [Double] = []
        for change in 0..<(changes + 20) {
            let started = LineSocket.now()
            _ = try a.request(JSON.requestLine(.set, ["domain": .string(domain), "key": "k", "value": .integer(Int64(change))]))
            while true {
                let event = try JSONParser.parse(try b.readEvent(timeout: 5))
                if event["changes"]?["k"] == .integer(Int64(change)) { break }
            }
            if change >= 20 { latencies.append(LineSocket.now() - started) }  // the first ones warm the connections
        }

        let before = try transactions(a)
        var lines: [UInt8] = []
        for index in 0..<burst {
            lines += Array(JSON.requestLine(.set, ["domain": .string(domain), "key": .string("slider\(index % 50)"), "value": .integer(Int64(index))]).utf8) + [10]
        }
        try a.send(bytes: lines)
        for _ in 0..<burst { _ = try a.readResponse() }
        // B has the burst's last value once every transaction of it is through.
        let last = JSON.requestLine(.get, ["domain": .string(domain), "key": .string("slider\((burst - 1) % 50)")])
        let deadline = Date().addingTimeInterval(30)
        while try JSONParser.parse(try b.request(last))["value"] != .integer(Int64(burst - 1)) {
            guard Date() < deadline else { throw LineSocket.Failure(description: "B never received the burst") }
            _ = try? b.readEvent(timeout: 0.5)
        }
        let burstTransactions = try transactions(a) - before

        var detections: [Double] = []
        var deliveries: [Double] = []
        for trial in 0..<staleTrials {
            guard case .string(let watched)? = try roaming(b)["watching"], let member = cluster.endpoints.firstIndex(of: watched) else {
                throw LineSocket.Failure(description: "B watches through no member")
            }
            cluster.freeze(member)
            defer { cluster.thaw(member) }
            let frozen = LineSocket.now()
            _ = try a.request(JSON.requestLine(.set, ["domain": .string(domain), "key": "frozen", "value": .integer(Int64(trial))]))
            var detected: Double?
            var delivered: Double?
            while delivered == nil || detected == nil {
                guard LineSocket.now() - frozen < 30 else { throw LineSocket.Failure(description: "B never noticed the frozen member") }
                if detected == nil {
                    let state = try roaming(b)
                    if state["stale"] != .null || state["watching"] != .string(watched) { detected = LineSocket.now() - frozen }
                }
                if delivered == nil, let line = try? b.readEvent(timeout: 0.01),
                    (try JSONParser.parse(line))["changes"]?["frozen"] == .integer(Int64(trial))
                {
                    delivered = LineSocket.now() - frozen
                }
            }
            // The loop above ends only once both are measured.
            if let detected, let delivered {
                detections.append(detected)
                deliveries.append(delivered)
            }
            cluster.thaw(member)
            // The next trial starts from a settled cluster: every member answering B's check again.
            let settled = Date().addingTimeInterval(30)
            while Date() < settled {
                if case .array(let members)? = try roaming(b)["members"], members.allSatisfy({ $0["answers"] == true }),
                    try roaming(b)["state"] == "online"
                {
                    break
                }
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
        return Results(
            latencies: latencies, burst: burst, burstTransactions: burstTransactions, staleDetections: detections, staleDeliveries: deliveries)
    }

    /// How many times the member B watches through is frozen.
    static let staleTrials = 5

    private static func roaming(_ client: LineSocket) throws -> JSON {
        try JSONParser.parse(try client.request(JSON.requestLine(.stats)))["roaming"] ?? .null
    }

    private static func transactions(_ client: LineSocket) throws -> Int64 {
        guard case .integer(let count)? = try JSONParser.parse(try client.request(JSON.requestLine(.stats)))["roaming"]?["transactions"] else {
            throw LineSocket.Failure(description: "stats has no roaming transactions")
        }
        return count
    }
}
