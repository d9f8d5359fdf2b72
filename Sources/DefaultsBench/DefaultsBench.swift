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

    @Flag(inversion: .prefixedNo, help: "Also count instructions and instruction-cache misses per request under callgrind (needs valgrind).")
    var callgrind = true

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

    @Flag(help: "Measure only GSettings programs on defaultsd's GIO module against dconf's backend.")
    var gsettingsOnly = false

    @Flag(help: "Measure only the round trips against Redis and the bare server (the regression guards), then stop.")
    var roundTripsOnly = false

    @Flag(help: "Measure only what the change journal costs (on against off) and its disk use.")
    var journalOnly = false

    @Flag(help: "With --journal-only: both daemons with the journal off, to show the method's own spread.")
    var journalControl = false

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
        if journalOnly {
            report.journalCost(try measureJournalCost(binary: binary, directory: directory, control: journalControl), burst: burst)
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
        if gsettingsOnly {
            let probe = dconfProbe ?? here.appendingPathComponent("dconf-probe").path
            let dconf = try DconfPeer(probe: probe, directory: directory + "/dconf")
            defer { dconf.stop() }
            var rows: [(String, String, String, String, String)] = []
            try compareGSettings(here: here, dconf: dconf, socket: directory + "/defaultsd.sock", directory: directory, into: &rows)
            report.dconfTable(rows)
            return print(report.text)
        }

        let redisBinary = (redis ?? Server.which("redis-server")).flatMap { $0 == "none" ? nil : $0 }
        var redisServer: Server?
        if let redisBinary {
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
            if theirs != nil { theirs?.add(try measureRedis(socket: directory + "/redis.sock")) }
        }
        if roundTripsOnly {
            report.table(ours: ours, redis: theirs)
            return print(report.text)
        }
        ours.burstRewrites = try measureBurst(socket: directory + "/defaultsd.sock")
        let handEdits = try measureHandEdits(socket: directory + "/defaultsd.sock", storage: directory + "/storage")
        let foundationProbe = here.appendingPathComponent("FoundationDefaultsProbe").path
        let foundationWrites = FileManager.default.isExecutableFile(atPath: foundationProbe)
            ? try measureFoundationWrites(socket: directory + "/defaultsd.sock", storage: directory + "/storage", probe: foundationProbe) : nil
        let loaded = Footprint(pid: server.process.processIdentifier)
        // The daemon's deferred work ends within three seconds of the last change: the change
        // journal's hand-over a second after the changes are durable, then its giving back of
        // free memory a second after it goes quiet. What it holds then is what stays.
        Thread.sleep(forTimeInterval: 3)
        let settled = Footprint(pid: server.process.processIdentifier)

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
        if callgrind {
            // A part that fails is reported as such; the figures of the others are kept.
            do {
                let bench = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
                if let counts = try CodePerRequest.measure(daemon: binary, bench: bench, redis: redisBinary, directory: directory) {
                    report.codeTable(counts)
                } else {
                    report.line("")
                    report.line("- instructions per request not counted: it needs valgrind (`apt-get install valgrind`) and strip")
                }
            } catch {
                report.line("")
                report.line("- instructions per request not counted: \(error)")
            }
        }
        report.line("")
        report.line("- `didChange` file rewrites for a \(burst)-set burst to one domain: **\(ours.burstRewrites)** (target ≤ 2)")
        do {
            report.journalCost(
                try measureJournalCost(binary: binary, directory: directory),
                burst: burst)
        } catch {
            report.line("- change journal not measured: \(error)")
        }
        report.line("- hand edit (a file renamed over the domain's) → `didChange` at a subscriber, \(handEdits.count) edits: "
            + "p50 **\(Report.milli(Report.percentile(handEdits, 0.5)))**, p99 \(Report.milli(Report.percentile(handEdits, 0.99))) (target p50 ≤ 20 ms)")
        if let foundationWrites {
            report.line("- a plain Foundation program's `set` + `synchronize()` → `didChange` at a subscriber, \(foundationWrites.count) writes: "
                + "p50 **\(Report.milli(Report.percentile(foundationWrites, 0.5)))**, p99 \(Report.milli(Report.percentile(foundationWrites, 0.99))) (target p50 ≤ 50 ms)")
        } else {
            report.line("- FoundationDefaultsProbe not found beside this program: the Foundation write is not measured")
        }
        report.line("- resident memory of defaultsd: **\(Footprint.mebi(idle.rss))** idle at start (target ≤ 10 MiB), "
            + "**\(Footprint.mebi(loaded.rss))** after the run (target ≤ 14 MiB), \(Footprint.mebi(settled.rss)) three seconds later, "
            + "once its deferred work is done")
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
}
