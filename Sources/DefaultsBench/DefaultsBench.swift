import ArgumentParser
import DefaultsCore
import Foundation
import LineSocket

/// Measures defaultsd against a release build, and Redis over a Unix socket in the same run
/// when `redis-server` is installed. Prints a Markdown report for docs/PERFORMANCE.md.
@main
struct DefaultsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaultsd-bench",
        abstract: "Benchmarks defaultsd (and Redis, when installed) over Unix sockets.")

    @Option(help: "The defaultsd binary to measure (default: beside this one).")
    var daemon: String?

    @Option(help: "The redis-server binary (default: found in PATH; 'none' to skip).")
    var redis: String?

    @Option(help: "Requests per latency measurement.")
    var iterations: Int = 20_000

    @Option(help: "Events per event-latency measurement.")
    var events: Int = 2_000

    @Option(help: "Sets in the burst whose file rewrites are counted.")
    var burst: Int = 10_000

    @Option(help: "Alternating rounds the requests and events are spread over.")
    var rounds: Int = 10

    @Flag(inversion: .prefixedNo, help: "Also measure the round trips with the client and the servers placed on CPUs by hand (needs taskset).")
    var pinned = true

    @Option(help: "The dconf probe (bench/dconf-probe.c; default: beside this program; 'none' to skip dconf).")
    var dconfProbe: String?

    @Option(help: "Seconds each durable-write throughput measurement runs.")
    var durableSeconds: Double = 3

    @Option(help: "Runs of each command timed by hyperfine.")
    var cliRuns: Int = 300

    @Option(help: .hidden)
    var serveFloor: String?

    @Flag(help: "Measure only roaming between two daemons through a 3-member etcd cluster.")
    var roamingOnly = false

    var perRound: Int { max(iterations / rounds, 100) }
    var eventsPerRound: Int { max(events / rounds, 40) }

    func run() throws {
        if let serveFloor { return try TransportFloor.serve(path: serveFloor) }
        let here = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let binary = daemon ?? here.appendingPathComponent("defaultsd").path
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-bench-\(getpid())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        var report = Report()
        report.line("defaultsd-bench: \(iterations) requests, \(events) events per measurement; \(ProcessInfo.processInfo.activeProcessorCount) cores")
        if roamingOnly {
            try reportRoaming(binary: binary, directory: directory, into: &report)
            return print(report.text)
        }

        // The daemon at its built-in settings, whatever configuration file or Settings bundles the
        // user running the benchmark has.
        let configuration = directory + "/defaultsd.json"
        try #"{ "settingsBundleDirectories": [] }"#.write(toFile: configuration, atomically: true, encoding: .utf8)
        let server = try Server.start(
            binary,
            ["--config", configuration, "--socket", directory + "/defaultsd.sock", "--storage-dir", directory + "/storage"],
            readyWhen: "start-up settled")
        defer { server.stop() }
        usleep(200_000)  // the release follows the line that says it comes
        let idle = Footprint(pid: server.process.processIdentifier)

        var redisServer: Server?
        if let redisBinary = redis ?? Server.which("redis-server"), redisBinary != "none" {
            redisServer = try Server.start(
                redisBinary,
                ["--port", "0", "--unixsocket", directory + "/redis.sock", "--save", "", "--appendonly", "no",
                 "--maxclients", "1000", "--loglevel", "warning"],
                readyWhen: nil, socket: directory + "/redis.sock")
        }
        defer { redisServer?.stop() }

        // This same program, as a SwiftNIO line server that does no work (TransportFloor).
        let floorSocket = directory + "/floor.sock"
        let floor = try Server.start(
            try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), ["--serve-floor", floorSocket],
            readyWhen: nil, socket: floorSocket)
        defer { floor.stop() }

        // The servers are measured in alternating rounds, so that whatever else the machine
        // does during the run weighs on both alike.
        var ours = Results()
        var theirs: Results? = redisServer == nil ? nil : Results()
        for _ in 0..<rounds {
            ours.add(try measureDefaultsd(socket: directory + "/defaultsd.sock"))
            ours.add(try measureFloor(socket: floorSocket))
            if theirs != nil { theirs!.add(try measureRedis(socket: directory + "/redis.sock")) }
        }
        ours.burstRewrites = try measureBurst(socket: directory + "/defaultsd.sock")
        let handEdits = try measureHandEdits(socket: directory + "/defaultsd.sock", storage: directory + "/storage")
        let foundationProbe = here.appendingPathComponent("FoundationDefaultsProbe").path
        let foundationWrites = FileManager.default.isExecutableFile(atPath: foundationProbe)
            ? try measureFoundationWrites(socket: directory + "/defaultsd.sock", storage: directory + "/storage", probe: foundationProbe) : nil
        let loaded = Footprint(pid: server.process.processIdentifier)

        report.table(ours: ours, redis: theirs)

        // Where the scheduler puts the client and the server decides most of a round trip: on
        // this kind of machine waking a process on another CPU costs tens of microseconds,
        // and once a pair of processes shares a CPU (or not) it tends to stay so, which varies
        // from run to run and from server to server. With both placed by hand the same way,
        // the comparison is like with like: on two CPUs, the usual case on an idle machine;
        // on one CPU, where a round trip is mostly each process's own work.
        if pinned, let theirs = redisServer, Server.which("taskset") != nil {
            let cpus = ProcessInfo.processInfo.activeProcessorCount
            var placements = [("on one CPU", "0", "0")]
            if cpus > 1 { placements.insert(("on two CPUs", "0", "1"), at: 0) }
            for (name, clientCPU, serverCPU) in placements {
                var oursPinned = Results()
                var theirsPinned = Results()
                try Server.pin([server, theirs, floor], cpus: serverCPU, client: clientCPU)
                for _ in 0..<rounds {
                    oursPinned.add(try measureDefaultsd(socket: directory + "/defaultsd.sock", roundTripsOnly: true))
                    oursPinned.add(try measureFloor(socket: floorSocket))
                    theirsPinned.add(try measureRedis(socket: directory + "/redis.sock", roundTripsOnly: true))
                }
                report.line("")
                report.line("Client on CPU \(clientCPU), the servers on CPU \(serverCPU) (`taskset`):")
                report.roundTripTable(ours: oursPinned, redis: theirsPinned, placement: name)
            }
            try Server.pin([server, theirs, floor], cpus: "0-\(cpus - 1)", client: "0-\(cpus - 1)")
        }
        report.line("")
        report.line("- `didChange` file rewrites for a \(burst)-set burst to one domain: **\(ours.burstRewrites)** (target ≤ 2)")
        report.line("- hand edit (a file renamed over the domain's) → `didChange` at a subscriber, \(handEdits.count) edits: "
            + "p50 **\(Report.milli(Report.percentile(handEdits, 0.5)))**, p99 \(Report.milli(Report.percentile(handEdits, 0.99))) (target p50 ≤ 20 ms)")
        if let foundationWrites {
            report.line("- a plain Foundation program's `set` + `synchronize()` → `didChange` at a subscriber, \(foundationWrites.count) writes: "
                + "p50 **\(Report.milli(Report.percentile(foundationWrites, 0.5)))**, p99 \(Report.milli(Report.percentile(foundationWrites, 0.99))) (target p50 ≤ 50 ms)")
        } else {
            report.line("- FoundationDefaultsProbe not found beside this program: the Foundation write is not measured")
        }
        report.line("- resident memory of defaultsd: **\(Footprint.mebi(idle.rss))** idle at start (target ≤ 10 MiB), "
            + "**\(Footprint.mebi(loaded.rss))** after the run (target ≤ 14 MiB)")
        if theirs == nil { report.line("- redis-server not found: install it (`apt-get install redis-server`) to measure the peer") }

        let probe = dconfProbe ?? here.appendingPathComponent("dconf-probe").path
        if probe != "none", FileManager.default.isExecutableFile(atPath: probe), Server.which("dbus-run-session") != nil {
            try compareWithDconf(
                probe: probe, directory: directory, socket: directory + "/defaultsd.sock", tool: here.appendingPathComponent("defaults").path,
                server: server, idle: idle, ours: ours, report: &report)
        } else if probe != "none" {
            report.line("- dconf not measured: `make bench` builds \(probe) when dconf-service, dconf-cli, libdconf-dev and dbus are installed")
        }
        // Last: it installs a Settings bundle, which the measurements above do without.
        report.line("")
        // A part that fails is reported as such; the figures of the others are kept.
        do {
            if let page = try SettingsPageLatency.measure(socket: directory + "/defaultsd.sock", directory: directory, here: here) {
                report.line("- Settings app: `set` on the socket → the open page shows it (Chromium, \(page.count) changes): "
                    + "p50 **\(Report.milli(Report.percentile(page, 0.5)))**, p99 \(Report.milli(Report.percentile(page, 0.99))) (target p50 ≤ 50 ms)")
            } else {
                report.line("- Settings app not measured: it needs chromium, chromium-driver and defaultsd-settings (make bench builds it)")
            }
        } catch {
            report.line("- Settings app not measured: \(error)")
        }
        do {
            try reportRoaming(binary: binary, directory: directory, into: &report)
        } catch {
            report.line("- roaming not measured: \(error)")
        }
        print(report.text)
    }

    func reportRoaming(binary: String, directory: String, into report: inout Report) throws {
        guard let roaming = try RoamingLatency.measure(binary: binary, directory: directory) else {
            return report.line("- roaming not measured: it needs etcd-server and etcd-client")
        }
        report.line("- roaming, A's `set` → `didChange` at B's subscriber through a 3-member etcd cluster on loopback, \(roaming.latencies.count) changes: "
            + "p50 **\(Report.milli(Report.percentile(roaming.latencies, 0.5)))**, p99 \(Report.milli(Report.percentile(roaming.latencies, 0.99))) (target p50 ≤ 10 ms)")
        report.line("- roaming, etcd transactions for a \(roaming.burst)-set burst on A (50 keys): **\(roaming.burstTransactions)** (target ≤ 20)")
        report.line("- roaming, the member B watches through frozen (SIGSTOP), \(roaming.staleDetections.count) times: B finds the watch stale after "
            + "p50 **\(Report.seconds(Report.percentile(roaming.staleDetections, 0.5)))**, max \(Report.seconds(roaming.staleDetections.max() ?? 0)); "
            + "A's change made at the freeze reaches B after p50 **\(Report.seconds(Report.percentile(roaming.staleDeliveries, 0.5)))**, "
            + "max \(Report.seconds(roaming.staleDeliveries.max() ?? 0)) (bound ≤ 10 s)")
    }

    // MARK: - defaultsd

    func measureDefaultsd(socket: String, roundTripsOnly: Bool = false) throws -> Results {
        var results = Results()
        let client = try LineSocket(path: socket)
        // A request that does no work: what the socket and the event loop cost by themselves.
        results.ping = try pingLatencies(client)
        results.set = try latencies(perRound, request: { i in
            JSON.requestLine(.set, ["domain": "com.bench", "key": .string("k\(i % 100)"), "value": .integer(Int64(i))]) + "\n"
        }) { request in
            try client.send(bytes: request)
            guard try client.nextLine(hasPrefix: Self.ok) else { throw LineSocket.Failure(description: "set failed") }
        }
        results.get = try latencies(perRound, request: { i in JSON.requestLine(.get, ["domain": "com.bench", "key": .string("k\(i % 100)")]) + "\n" }) { request in
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

    /// `ping` round trips to the bare SwiftNIO line server (``TransportFloor``).
    func measureFloor(socket: String) throws -> Results {
        var results = Results()
        results.floor = try pingLatencies(try LineSocket(path: socket))
        return results
    }

    /// `{"op":"ping"}` round trips, one at a time.
    func pingLatencies(_ client: LineSocket) throws -> [Double] {
        try latencies(perRound, request: { _ in JSON.requestLine(.ping) + "\n" }) { request in
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

    // MARK: - dconf

    /// The footprint, the command-line tools, durable writes and change events of defaultsd and
    /// dconf, measured one after the other in this run, as a table with ratios.
    func compareWithDconf(
        probe: String, directory: String, socket: String, tool: String, server: Server, idle: Footprint, ours: Results,
        report: inout Report
    ) throws {
        let dconf = try DconfPeer(probe: probe, directory: directory + "/dconf")
        defer { dconf.stop() }
        let dconfIdle = Footprint(pid: dconf.servicePID)

        var rows: [(String, String, String, String, String)] = []
        func ratio(_ a: Double, _ b: Double) -> String { String(format: "%.2f", a / b) }
        func add(_ name: String, _ a: Double, _ b: Double, _ format: (Double) -> String, _ target: String) {
            rows.append((name, format(a), format(b), ratio(a, b), target))
        }
        func perSecond(_ value: Double) -> String { "\(Int(value)) /s" }

        // Command-line tools, one call each.
        var environment = dconf.environment
        environment["DEFAULTSD_SOCKET"] = socket
        _ = try DconfPeer.run(tool, ["write", "com.bench.cli", "k", "-int", "42"], environment: environment)
        _ = try DconfPeer.run(Server.which("dconf")!, ["write", "/bench/cli/k", "42"], environment: environment)
        let calls = try Hyperfine.measure(
            ["\(tool) read com.bench.cli k", "dconf read /bench/cli/k", "\(tool) write com.bench.cli k -int 42", "dconf write /bench/cli/k 42"],
            environment: environment, runs: cliRuns, directory: directory)
        if calls.count == 4 {
            add("`defaults read` / `dconf read`, one call (mean)", calls[0].mean, calls[1].mean, Report.milli, "≤ 1.0")
            add("`defaults write` / `dconf write`, one call (mean)", calls[2].mean, calls[3].mean, Report.milli, "≤ 1.0")
        }

        // Durable writes.
        let ourTrips = try DurableWrites.roundTrips(socket: socket, count: 500)
        let theirTrips = try dconf.writeRoundTrips(500)
        add("durable write round trip p50 (`set` + `synchronize` / `write_sync`)",
            Report.percentile(ourTrips, 0.5), Report.percentile(theirTrips, 0.5), Report.milli, "")
        for writers in [1, 4, 50] {
            let a = try DurableWrites.throughput(socket: socket, writers: writers, seconds: durableSeconds)
            let b = try dconf.writeThroughput(writers: writers, seconds: durableSeconds)
            rows.append(("durable writes, \(writers) writer\(writers == 1 ? "" : "s") on \(writers) domain\(writers == 1 ? "" : "s")",
                         perSecond(a), perSecond(b), ratio(a, b), writers == 4 ? "≥ 1.5" : ""))
        }

        // Change events: defaultsd's figures are the ones measured above.
        let one = try dconf.eventLatencies(watchers: 1, count: max(eventsPerRound, 200))
        let hundred = try dconf.eventLatencies(watchers: 100, count: 50)
        for (name, a, b) in [("change event to 1 watcher", ours.event1, one), ("change event to 100 watchers, last receiver", ours.event100, hundred)] {
            for p in [0.5, 0.99] {
                add("\(name) p\(Int(p * 100))", Report.percentile(a, p), Report.percentile(b, p), Report.micro, "")
            }
        }

        let loaded = Footprint(pid: server.process.processIdentifier)
        let dconfLoaded = Footprint(pid: dconf.servicePID)
        rows.insert(contentsOf: [
            ("idle resident memory (VmRSS)", Footprint.mebi(idle.rss), Footprint.mebi(dconfIdle.rss), ratio(Double(idle.rss), Double(dconfIdle.rss)), "defaultsd ≤ 10 MiB"),
            ("idle proportional memory (PSS)", Footprint.mebi(idle.pss), Footprint.mebi(dconfIdle.pss), ratio(Double(idle.pss), Double(dconfIdle.pss)), ""),
            ("resident memory after the run (VmRSS)", Footprint.mebi(loaded.rss), Footprint.mebi(dconfLoaded.rss), ratio(Double(loaded.rss), Double(dconfLoaded.rss)), "defaultsd ≤ 14 MiB"),
            ("proportional memory after the run (PSS)", Footprint.mebi(loaded.pss), Footprint.mebi(dconfLoaded.pss), ratio(Double(loaded.pss), Double(dconfLoaded.pss)), ""),
        ], at: 0)

        report.line("")
        report.line("defaultsd and dconf (dconf-service on a private session bus, measured by bench/dconf-probe.c and `dconf`):")
        report.line("")
        report.line("| measurement | defaultsd | dconf | defaultsd ÷ dconf | target |")
        report.line("|---|---:|---:|---:|---|")
        for (name, a, b, r, target) in rows { report.line("| \(name) | \(a) | \(b) | \(r) | \(target) |") }
    }

    // MARK: - Redis

    func measureRedis(socket: String, roundTripsOnly: Bool = false) throws -> Results {
        var results = Results()
        let client = try LineSocket(path: socket)
        func command(_ parts: [String]) -> String {
            "*\(parts.count)\r\n" + parts.map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined()
        }
        func send(_ parts: [String], on socket: LineSocket) throws { try socket.send(bytes: Array(command(parts).utf8)) }
        let pong = Array("+PONG".utf8), stored = Array("+OK".utf8), missing = Array("$-1".utf8)
        results.ping = try latencies(perRound, request: { _ in command(["PING"]) }) { request in
            try client.send(bytes: request)
            guard try client.nextLine(hasPrefix: pong) else { throw LineSocket.Failure(description: "PING failed") }
        }
        results.set = try latencies(perRound, request: { i in command(["SET", "k\(i % 100)", "\(i)"]) }) { request in
            try client.send(bytes: request)
            guard try client.nextLine(hasPrefix: stored) else { throw LineSocket.Failure(description: "SET failed") }
        }
        results.get = try latencies(perRound, request: { i in command(["GET", "k\(i % 100)"]) }) { request in
            try client.send(bytes: request)
            if try !client.nextLine(hasPrefix: missing) { _ = try client.nextLine(hasPrefix: []) }  // $<length>, then the value
        }
        if !roundTripsOnly {
            results.pipelined = try throughput(perRound * 5, batch: 1000, client: client, answer: stored) { i in
                command(["SET", "p\(i % 100)", "\(i)"])
            }
        }

        for count in roundTripsOnly ? [1] : [1, 100] {
            let subscribers = try (0..<count).map { _ in try LineSocket(path: socket) }
            for subscriber in subscribers {
                try send(["SUBSCRIBE", "bench"], on: subscriber)
                for _ in 0..<6 { _ = try subscriber.readLine() }  // *3 $9 subscribe $5 bench :1
            }
            let samples = try latencies(count == 1 ? eventsPerRound : eventsPerRound / 4, request: { i in
                command(["PUBLISH", "bench", "{\"k\":\(i)}"])
            }) { request in
                try client.send(bytes: request)
                // *3 $7 message $5 bench $<length> <payload>
                for subscriber in subscribers { for _ in 0..<7 { _ = try subscriber.nextLine(hasPrefix: []) } }
            } untimed: {
                _ = try client.nextLine(hasPrefix: [])
            }
            if count == 1 { results.event1 = samples } else { results.event100 = samples }
        }
        return results
    }

    // MARK: - Measuring

    static let ok = Array(#"{"ok":true"#.utf8)
    static let event = EventName.linePrefix

    /// `count` timed rounds, after a tenth as many (at most 1,000) untimed ones to warm up.
    /// Round `n` hands `body` the bytes of `request(n)`, all encoded before the clock starts, so
    /// the client's own work in a timed round is one `write` and the reads; `n` counts on
    /// through the warm-up, so no round repeats the one before it (a set of the value a key
    /// already holds changes nothing and has no event). `untimed` then reads what is left of a
    /// round outside the clock: for an event, the writer's answer, so that the figure is the
    /// time until the last subscriber has read its event, as documented, not until the answer.
    func latencies(_ count: Int, request: (Int) -> String, _ body: ([UInt8]) throws -> Void,
                   untimed: () throws -> Void = {}) throws -> [Double] {
        let warmUp = min(count / 10, 1000)
        let requests = (0..<(warmUp + count)).map { Array(request($0).utf8) }
        for bytes in requests[..<warmUp] {
            try body(bytes)
            try untimed()
        }
        var samples: [Double] = []
        samples.reserveCapacity(count)
        for bytes in requests[warmUp...] {
            let start = LineSocket.now()
            try body(bytes)
            samples.append(LineSocket.now() - start)
            try untimed()
        }
        return samples
    }

    /// Requests per second with `batch` requests in flight; `line` gives each request with its
    /// terminator, and every answer must start with `answer`.
    func throughput(_ count: Int, batch: Int, client: LineSocket, answer: [UInt8],
                    line: (Int) -> String) throws -> Double {
        // Every batch is encoded before the clock starts, as the single requests are.
        let batches = stride(from: 0, to: count, by: batch).map { first in
            (first..<min(first + batch, count)).reduce(into: [UInt8]()) { $0 += Array(line($1).utf8) }
        }
        let start = LineSocket.now()
        for (index, bytes) in batches.enumerated() {
            try client.send(bytes: bytes)
            for _ in 0..<min(batch, count - index * batch) {
                guard try client.nextLine(hasPrefix: answer) else { throw LineSocket.Failure(description: "a pipelined set failed") }
            }
        }
        return Double(count) / (LineSocket.now() - start)
    }
}

struct Results {
    var ping: [Double] = []
    /// `ping` to the bare SwiftNIO line server, which does no work.
    var floor: [Double] = []
    var set: [Double] = []
    var get: [Double] = []
    var pipelined: Double = 0
    var event1: [Double] = []
    var event100: [Double] = []
    var burstRewrites = -1
    var pipelinedRounds: [Double] = []

    mutating func add(_ round: Results) {
        ping += round.ping
        floor += round.floor
        set += round.set
        get += round.get
        event1 += round.event1
        event100 += round.event100
        guard round.pipelined > 0 else { return }
        pipelinedRounds.append(round.pipelined)
        pipelined = pipelinedRounds.sorted()[pipelinedRounds.count / 2]
    }
}

struct Report {
    var text = ""

    mutating func line(_ s: String) { text += s + "\n" }

    static func percentile(_ samples: [Double], _ p: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        return sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
    }

    static func micro(_ seconds: Double) -> String { String(format: "%.1f µs", seconds * 1e6) }
    static func milli(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1e3) }
    static func seconds(_ seconds: Double) -> String { String(format: "%.2f s", seconds) }

    mutating func table(ours: Results, redis: Results?) {
        line("")
        line("| measurement | defaultsd | Redis | defaultsd ÷ Redis |")
        line("|---|---:|---:|---:|")
        func row(_ name: String, _ a: [Double], _ b: [Double]?, _ p: Double) {
            let x = Report.percentile(a, p)
            if let b {
                let y = Report.percentile(b, p)
                line("| \(name) | \(Report.micro(x)) | \(Report.micro(y)) | \(String(format: "%.2f", x / y)) |")
            } else {
                line("| \(name) | \(Report.micro(x)) | – | – |")
            }
        }
        row("ping round trip p50 (Redis PING)", ours.ping, redis?.ping, 0.5)
        row("bare SwiftNIO server ping p50 (Redis PING)", ours.floor, redis?.ping, 0.5)
        row("set round trip p50 (Redis SET)", ours.set, redis?.set, 0.5)
        row("set round trip p99 (Redis SET)", ours.set, redis?.set, 0.99)
        row("get round trip p50 (Redis GET)", ours.get, redis?.get, 0.5)
        row("get round trip p99 (Redis GET)", ours.get, redis?.get, 0.99)
        row("didChange to 1 subscriber p50 (PUBLISH)", ours.event1, redis?.event1, 0.5)
        row("didChange to 1 subscriber p99 (PUBLISH)", ours.event1, redis?.event1, 0.99)
        row("didChange to 100 subscribers, last receiver p50", ours.event100, redis?.event100, 0.5)
        row("didChange to 100 subscribers, last receiver p99", ours.event100, redis?.event100, 0.99)
        if let redis, !redis.pipelinedRounds.isEmpty {
            line("| pipelined set throughput (batches of 1000) | \(Int(ours.pipelined)) /s | \(Int(redis.pipelined)) /s | \(String(format: "%.2f", ours.pipelined / redis.pipelined)) |")
        } else {
            line("| pipelined set throughput (batches of 1000) | \(Int(ours.pipelined)) /s | – | – |")
        }
    }
}

extension Report {
    mutating func roundTripTable(ours: Results, redis: Results, placement: String) {
        line("")
        line("| measurement | defaultsd | Redis | defaultsd ÷ Redis |")
        line("|---|---:|---:|---:|")
        for (name, a, b) in [
            ("ping round trip", ours.ping, redis.ping), ("bare SwiftNIO server ping", ours.floor, redis.ping),
            ("set round trip", ours.set, redis.set), ("get round trip", ours.get, redis.get),
            ("didChange to 1 subscriber", ours.event1, redis.event1),
        ] {
            for p in [0.5, 0.99] {
                let x = Report.percentile(a, p), y = Report.percentile(b, p)
                line("| \(name) p\(Int(p * 100)), \(placement) | \(Report.micro(x)) | \(Report.micro(y)) | \(String(format: "%.2f", x / y)) |")
            }
        }
    }
}

/// A server process started for the benchmark.
final class Server {
    let process: Process

    init(process: Process) { self.process = process }

    static func which(_ name: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/usr/sbin").split(separator: ":") {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return nil
    }

    /// Starts `binary` and waits until `readyWhen` appears on its stderr, or until `socket` accepts connections.
    static func start(_ binary: String, _ arguments: [String], readyWhen: String?, socket: String? = nil) throws -> Server {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let server = Server(process: process)
        if let readyWhen {
            var seen = ""
            while !seen.contains(readyWhen) {
                let chunk = errors.fileHandleForReading.availableData
                if chunk.isEmpty { throw LineSocket.Failure(description: "\(binary) exited: \(seen)") }
                seen += String(decoding: chunk, as: UTF8.self)
            }
        } else if let socket {
            let deadline = LineSocket.now() + 10
            while (try? LineSocket(path: socket)) == nil {
                if LineSocket.now() > deadline { throw LineSocket.Failure(description: "\(binary) did not listen on \(socket)") }
                usleep(10_000)
            }
        }
        // Keep draining stderr so the server never blocks on logging.
        errors.fileHandleForReading.readabilityHandler = { handle in
            if handle.availableData.isEmpty { handle.readabilityHandler = nil }
        }
        return server
    }

    /// Restricts every thread of the servers to `cpus`, and this process to `client` (`taskset` lists).
    static func pin(_ servers: [Server], cpus: String, client: String) throws {
        for (pid, list) in servers.map({ ($0.process.processIdentifier, cpus) }) + [(getpid(), client)] {
            let taskset = Process()
            taskset.executableURL = URL(fileURLWithPath: which("taskset")!)
            taskset.arguments = ["--all-tasks", "--cpu-list", "--pid", list, "\(pid)"]
            taskset.standardOutput = FileHandle.nullDevice
            try taskset.run()
            taskset.waitUntilExit()
            guard taskset.terminationStatus == 0 else {
                throw LineSocket.Failure(description: "taskset could not pin \(pid) to CPU \(list)")
            }
        }
    }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }
}
