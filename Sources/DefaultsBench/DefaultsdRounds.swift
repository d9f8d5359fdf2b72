import DefaultsCore
import Foundation
import LineSocket

/// The defaultsd rounds: round trips, events, pipelined sets, a burst, hand edits and a plain
/// Foundation program's writes.
extension DefaultsBench {
    func measureDefaultsd(socket: String, roundTripsOnly: Bool = false) throws -> Results {
        var results = Results()
        let client = try LineSocket(path: socket)
        // A request that does no work: what the socket and the event loop cost by themselves.
        results.ping = try pingLatencies(client)
        results.set = try latencies(perRound, request: Self.setRequest) { request in
            try client.send(bytes: request)
            guard try client.nextLine(hasPrefix: Self.ok) else { throw LineSocket.Failure(description: "set failed") }
        }
        results.get = try latencies(perRound, request: Self.getRequest) { request in
            try client.send(bytes: request)
            guard try client.nextLine(hasPrefix: Self.ok) else { throw LineSocket.Failure(description: "get failed") }
        }
        if !roundTripsOnly {
            results.pipelined = try throughput(perRound * 5, batch: 1000, client: client, answer: Self.ok) { i in
                JSON.requestLine(.set, ["domain": "com.bench.pipe", "key": .string("k\(i % 100)"), "value": .integer(Int64(i))]) + "\n"
            }
        }

        for count in roundTripsOnly ? [1] : [1, 100] {
            let subscribers = try (0..<count).map { _ in try LineSocket(path: socket) }
            for subscriber in subscribers { try subscriber.request(JSON.requestLine(.subscribe, ["domains": ["com.bench.events"]])) }
            let samples = try latencies(count == 1 ? eventsPerRound : eventsPerRound / 4, request: { i in
                JSON.requestLine(.set, ["domain": "com.bench.events", "key": "k", "value": .integer(Int64(i))]) + "\n"
            }) { request in
                try client.send(bytes: request)
                for subscriber in subscribers {
                    guard try subscriber.nextLine(hasPrefix: Self.event) else { throw LineSocket.Failure(description: "no event") }
                }
            } untimed: {
                guard try client.nextLine(hasPrefix: Self.ok) else { throw LineSocket.Failure(description: "set failed") }
            }
            if count == 1 { results.event1 = samples } else { results.event100 = samples }
        }

        // Write the round's changes to disk now: a flush left for later would run during the
        // next server's round and disturb it (and where the scheduler places it).
        _ = try client.request(JSON.requestLine(.synchronize))
        return results
    }

    /// The round trips' requests, each with its line's end: round `i` sets or reads one of 100
    /// keys, and sets a value the key did not hold before.
    static let pingRequest = JSON.requestLine(.ping) + "\n"
    static func setRequest(_ i: Int) -> String {
        JSON.requestLine(.set, ["domain": "com.bench", "key": .string("k\(i % 100)"), "value": .integer(Int64(i))]) + "\n"
    }
    static func getRequest(_ i: Int) -> String {
        JSON.requestLine(.get, ["domain": "com.bench", "key": .string("k\(i % 100)")]) + "\n"
    }

    /// `ping` round trips to the bare SwiftNIO line server (``TransportFloor``).
    func measureFloor(socket: String) throws -> Results {
        var results = Results()
        results.floor = try pingLatencies(try LineSocket(path: socket))
        return results
    }

    /// `{"op":"ping"}` round trips, one at a time.
    func pingLatencies(_ client: LineSocket) throws -> [Double] {
        try latencies(perRound, request: { _ in Self.pingRequest }) { request in
            try client.send(bytes: request)
            guard try client.nextLine(hasPrefix: Self.ok) else { throw LineSocket.Failure(description: "ping failed") }
        }
    }

    /// File rewrites caused by a pipelined burst of `burst` sets to one domain.
    func measureBurst(socket: String) throws -> Int {
        let client = try LineSocket(path: socket)
        let burstDomain = "com.bench.burst"
        var lines = ""
        for i in 0..<burst { lines += JSON.requestLine(.set, ["domain": .string(burstDomain), "key": .string("k\(i % 50)"), "value": .integer(Int64(i))]) + "\n" }
        try client.send(bytes: Array(lines.utf8))
        for _ in 0..<burst { _ = try client.readResponse() }
        try client.request(JSON.requestLine(.synchronize))
        let stats = try JSONParser.parse(try client.request(JSON.requestLine(.stats, ["domain": .string(burstDomain)])))
        guard case .integer(let rewrites)? = stats["domainFileWrites"] else { return -1 }
        return Int(rewrites)
    }

    /// From an editor's save (a new file renamed over the domain's) to the `didChange` it causes.
    func measureHandEdits(socket: String, storage: String, count: Int = 200) throws -> [Double] {
        let client = try LineSocket(path: socket)
        let domain = "com.bench.hand"
        try client.request(JSON.requestLine(.set, ["domain": .string(domain), "key": "k", "value": 0]))
        try client.request(JSON.requestLine(.subscribe, ["domains": [.string(domain)]]))
        let path = storage + "/" + domain + ".plist"
        var samples: [Double] = []
        for i in 1...count {
            let data = try PropertyListFile.encode(["k": .integer(Int64(i))], format: .xml)
            try data.write(to: URL(fileURLWithPath: path + ".new"))
            let start = LineSocket.now()
            guard rename(path + ".new", path) == 0 else { throw CocoaError(.fileWriteUnknown) }
            _ = try client.readEvent()
            samples.append(LineSocket.now() - start)
            // The daemon writes the domain back; the next edit starts after that.
            try client.request(JSON.requestLine(.synchronize))
        }
        return samples
    }

    /// A program that uses plain Foundation `UserDefaults` (FoundationDefaultsProbe), in the
    /// folder it shares with the daemon: from its `set` + `synchronize()` to the `didChange` at a
    /// subscriber. Foundation writes in place and reads back what it wrote, inside the clock.
    func measureFoundationWrites(socket: String, storage: String, probe: String, count: Int = 200) throws -> [Double] {
        let client = try LineSocket(path: socket)
        let domain = "com.bench.foundation"
        try client.request(JSON.requestLine(.subscribe, ["domains": [.string(domain)]]))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: probe)
        process.arguments = ["serve", domain]
        process.environment = ["XDG_CONFIG_HOME": storage, "HOME": storage, "PATH": "/usr/bin:/bin"]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        defer { process.terminate() }
        func answer() -> String {
            var line: [UInt8] = []
            var byte: UInt8 = 0
            while read(output.fileHandleForReading.fileDescriptor, &byte, 1) == 1, byte != 10 { line.append(byte) }
            return String(decoding: line, as: UTF8.self)
        }
        var samples: [Double] = []
        for i in 1...count {
            let start = LineSocket.now()
            input.fileHandleForWriting.write(Data("set k \(i)\n".utf8))
            _ = try client.readEvent()
            samples.append(LineSocket.now() - start)
            guard answer() == "ok" else { throw CocoaError(.fileWriteUnknown) }
            // The daemon writes the domain back; the next write starts after that.
            try client.request(JSON.requestLine(.synchronize))
        }
        return samples
    }
}
