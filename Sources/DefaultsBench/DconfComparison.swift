import DefaultsCore
import Foundation
import LineSocket

extension DefaultsBench {
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
        _ = try Server.run(tool, ["write", "com.bench.cli", "k", "-int", "42"], environment: environment)
        _ = try Server.run(try Server.required("dconf"), ["write", "/bench/cli/k", "42"], environment: environment)
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

        try compareGSettings(
            here: URL(fileURLWithPath: tool).deletingLastPathComponent(), dconf: dconf, socket: socket, directory: directory, into: &rows)

        let loaded = Footprint(pid: server.process.processIdentifier)
        let dconfLoaded = Footprint(pid: dconf.servicePID)
        rows.insert(contentsOf: [
            ("idle resident memory (VmRSS)", Footprint.mebi(idle.rss), Footprint.mebi(dconfIdle.rss), ratio(Double(idle.rss), Double(dconfIdle.rss)), "defaultsd ≤ 10 MiB"),
            ("idle proportional memory (PSS)", Footprint.mebi(idle.pss), Footprint.mebi(dconfIdle.pss), ratio(Double(idle.pss), Double(dconfIdle.pss)), ""),
            ("resident memory after the run (VmRSS)", Footprint.mebi(loaded.rss), Footprint.mebi(dconfLoaded.rss), ratio(Double(loaded.rss), Double(dconfLoaded.rss)), "defaultsd ≤ 14 MiB"),
            ("proportional memory after the run (PSS)", Footprint.mebi(loaded.pss), Footprint.mebi(dconfLoaded.pss), ratio(Double(loaded.pss), Double(dconfLoaded.pss)), ""),
        ], at: 0)

        report.dconfTable(rows)
    }

    /// GSettings programs on each backend (GSettingsComparison), as rows of the dconf table; a
    /// part that cannot run says why in one row.
    func compareGSettings(
        here: URL, dconf: DconfPeer, socket: String, directory: String, into rows: inout [(String, String, String, String, String)]
    ) throws {
        guard let setup = GSettingsComparison.setup(here: here) else {
            return rows.append(("GSettings programs not measured: `make bench` builds the probe, the module and the schema", "", "", "", ""))
        }
        do {
            rows += try GSettingsComparison.measure(
                setup, dconf: dconf, socket: socket, cliRuns: cliRuns, directory: directory, events: max(eventsPerRound, 200))
        } catch {
            rows.append(("GSettings programs not measured: \(error)", "", "", "", ""))
        }
    }
}

extension Report {
    mutating func dconfTable(_ rows: [(String, String, String, String, String)]) {
        line("")
        line("defaultsd and dconf (dconf-service on a private session bus, measured by bench/dconf-probe.c, bench/gsettings-probe.c and `dconf`):")
        line("")
        line("| measurement | defaultsd | dconf | defaultsd ÷ dconf | target |")
        line("|---|---:|---:|---:|---|")
        for (name, a, b, r, target) in rows { line("| \(name) | \(a) | \(b) | \(r) | \(target) |") }
    }
}
