import DefaultsCore
import Foundation
import LineSocket

/// Instructions and level-1 instruction-cache misses per request, counted by callgrind for
/// defaultsd, the bare SwiftNIO server and Redis in the same run.
///
/// A round trip's ratio to Redis on a shared virtual machine moves with what the host's other
/// tenants do; these counts do not, run to run. callgrind simulates the caches this CPU reports
/// (`--cache-sim=yes`), so the misses say how much distinct code one request runs through: a
/// request path whose code does not fit the 32 KiB level-1 instruction cache is fetched from
/// the level-2 cache at every request, and from further away when neighbours crowd it.
///
/// valgrind 3.19 cannot read the debugging information Swift 6.3 writes, so each Swift server
/// runs as a copy stripped with `strip --strip-debug`; the code it runs is the same.
struct CodePerRequest {
    struct Counts {
        var instructions: Double
        var instructionCacheMisses: Double
    }

    /// By request name: `ping`, `set`, `get`.
    var daemon: [String: Counts] = [:]
    var floor: [String: Counts] = [:]
    var redis: [String: Counts] = [:]

    static let requests = 2_000
    static let warmUp = 1_000

    /// valgrind, callgrind_control and strip, and the folder their files go to.
    private struct Tools {
        let valgrind: String
        let control: String
        let strip: String
        let folder: String

        /// Nil when valgrind, callgrind_control or strip is missing.
        init?(directory: String) throws {
            guard let valgrind = Server.which("valgrind"), let control = Server.which("callgrind_control"),
                let strip = Server.which("strip")
            else { return nil }
            (self.valgrind, self.control, self.strip) = (valgrind, control, strip)
            folder = directory + "/callgrind"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }

        func stripped(_ path: String, as name: String) throws -> String {
            let copy = folder + "/" + name
            try Server.run(strip, ["--strip-debug", "-o", copy, path])
            return copy
        }

        func callgrind(_ name: String) -> [String] {
            [valgrind, "--tool=callgrind", "--cache-sim=yes", "--callgrind-out-file=\(folder)/\(name).out"]
        }
    }

    /// Nil when valgrind, callgrind_control or strip is missing.
    static func measure(daemon binary: String, bench: String, redis: String?, directory: String) throws -> CodePerRequest? {
        guard let tools = try Tools(directory: directory) else { return nil }
        let folder = tools.folder
        var result = CodePerRequest()
        result.daemon = try countDaemon(binary, tools)
        let control = tools.control

        let floorSocket = folder + "/floor.sock"
        let floorArguments = tools.callgrind("floor") + [try tools.stripped(bench, as: "defaultsd-bench"), "--serve-floor", floorSocket]
        let floor = try Server.start(floorArguments[0], Array(floorArguments.dropFirst()), readyWhen: nil, socket: floorSocket, within: 60)
        defer { floor.stop() }
        result.floor = try count(floor, output: folder + "/floor.out", control: control, client: try LineSocket(path: floorSocket),
            requests: [Kind("ping", answered) { _ in DefaultsBench.pingRequest }])

        if let redis {
            let redisSocket = folder + "/redis.sock"
            let redisArguments = tools.callgrind("redis") + [redis, "--port", "0", "--unixsocket", redisSocket, "--save", "", "--appendonly", "no"]
            let server = try Server.start(redisArguments[0], Array(redisArguments.dropFirst()), readyWhen: nil, socket: redisSocket, within: 60)
            defer { server.stop() }
            let status: (LineSocket) throws -> Void = { client in _ = try client.nextLine(hasPrefix: []) }
            result.redis = try count(server, output: folder + "/redis.out", control: control, client: try LineSocket(path: redisSocket), requests: [
                Kind("ping", status) { _ in DefaultsBench.redisCommand(["PING"]) },
                Kind("set", status) { i in DefaultsBench.redisCommand(["SET", "k\(i % 100)", "\(i)"]) },
                Kind("get", DefaultsBench.readRedisValue) { i in DefaultsBench.redisCommand(["GET", "k\(i % 100)"]) },
            ])
        }
        return result
    }

    /// Reads a defaultsd or floor server answer: `{"ok":true…`.
    private static func answered(_ client: LineSocket) throws {
        guard try client.nextLine(hasPrefix: DefaultsBench.ok) else { throw LineSocket.Failure(description: "a request failed") }
    }

    /// Counts defaultsd's `ping`, set and get, one callgrind dump each.
    private static func countDaemon(
        _ binary: String, _ tools: Tools, configuration settings: String = #"{ "settingsBundleDirectories": [] }"#
    ) throws -> [String: Counts] {
        let folder = tools.folder
        let socket = folder + "/defaultsd.sock"
        let configuration = folder + "/defaultsd.json"
        try settings.write(toFile: configuration, atomically: true, encoding: .utf8)
        let daemonArguments = tools.callgrind("defaultsd") + [try tools.stripped(binary, as: "defaultsd"),
            "--config", configuration, "--socket", socket, "--storage-dir", folder + "/storage", "--state-dir", folder + "/state"]
        let daemon = try Server.start(daemonArguments[0], Array(daemonArguments.dropFirst()), readyWhen: "start-up settled")
        defer { daemon.stop() }
        return try count(daemon, output: folder + "/defaultsd.out", control: tools.control, client: try LineSocket(path: socket), requests: [
            Kind("ping", answered) { _ in DefaultsBench.pingRequest },
            Kind("set", answered, request: DefaultsBench.setRequest),
            Kind("get", answered, request: DefaultsBench.getRequest),
        ])
    }

    /// One kind of request: its name, how its answer is read, and its text for round `n`.
    private struct Kind {
        var name: String
        var answered: (LineSocket) throws -> Void
        var request: (Int) -> String

        init(_ name: String, _ answered: @escaping (LineSocket) throws -> Void, request: @escaping (Int) -> String) {
            self.name = name
            self.answered = answered
            self.request = request
        }
    }

    /// Runs each kind of request `warmUp` times, zeroes callgrind's counters, then runs
    /// `requests` of each kind and has callgrind write what they cost, one dump per kind.
    private static func count(
        _ server: Server, output: String, control: String, client: LineSocket, requests kinds: [Kind]
    ) throws -> [String: Counts] {
        let pid = "\(server.process.processIdentifier)"
        func exchange(_ kind: Kind, _ rounds: Range<Int>) throws {
            for i in rounds {
                try client.send(bytes: Array(kind.request(i).utf8))
                try kind.answered(client)
            }
        }
        for kind in kinds { try exchange(kind, 0..<warmUp) }
        try Server.run(control, ["--zero", pid], quiet: true)
        var counts: [String: Counts] = [:]
        for (dump, kind) in kinds.enumerated() {
            try exchange(kind, warmUp..<(warmUp + requests))
            try Server.run(control, ["--dump", pid], quiet: true)
            counts[kind.name] = try totals(of: "\(output).\(dump + 1)")
        }
        return counts
    }

    /// The per-request counts in one dump: its `events:` line names the columns of `summary:`.
    private static func totals(of path: String) throws -> Counts {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        func fields(_ prefix: String) -> [Substring] {
            text.split(separator: "\n").first { $0.hasPrefix(prefix) }?.split(separator: " ").dropFirst().map { $0 } ?? []
        }
        let events = fields("events:"), summary = fields("summary:")
        func value(_ event: String) throws -> Double {
            guard let index = events.firstIndex(of: Substring(event)), index < summary.count, let count = Double(summary[index]) else {
                throw LineSocket.Failure(description: "\(path) has no \(event) count")
            }
            return count / Double(requests)
        }
        return Counts(instructions: try value("Ir"), instructionCacheMisses: try value("I1mr"))
    }
}

extension Report {
    mutating func codeTable(_ counts: CodePerRequest) {
        line("")
        line("Per request, counted by callgrind (\(CodePerRequest.requests) requests of each kind after \(CodePerRequest.warmUp) untimed; "
            + "simulated caches of this CPU):")
        line("")
        line("| request | defaultsd instructions | Redis instructions | ÷ | defaultsd L1i misses | Redis L1i misses | ÷ |")
        line("|---|---:|---:|---:|---:|---:|---:|")
        func figure(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "–" }
        func ratio(_ a: Double?, _ b: Double?) -> String {
            guard let a, let b, b > 0 else { return "–" }
            return String(format: "%.2f", a / b)
        }
        for (name, ours, theirs) in [
            ("ping (Redis PING)", counts.daemon["ping"], counts.redis["ping"]),
            ("bare SwiftNIO server ping (Redis PING)", counts.floor["ping"], counts.redis["ping"]),
            ("set (Redis SET)", counts.daemon["set"], counts.redis["set"]),
            ("get (Redis GET)", counts.daemon["get"], counts.redis["get"]),
        ] {
            line("| \(name) | \(figure(ours?.instructions)) | \(figure(theirs?.instructions)) | \(ratio(ours?.instructions, theirs?.instructions)) "
                + "| \(figure(ours?.instructionCacheMisses)) | \(figure(theirs?.instructionCacheMisses)) "
                + "| \(ratio(ours?.instructionCacheMisses, theirs?.instructionCacheMisses)) |")
        }
    }
}
