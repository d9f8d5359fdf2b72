import DefaultsCore
import Foundation
import LineSocket

/// What the change journal costs: two fresh daemons alike but for the journal, on in one and
/// off in the other, measured in alternating rounds; and the journal's disk use.
///
/// Each round measures both daemons, in turn, the first of them alternating; a round's ratio
/// is the one daemon's time over the other's. Two measurements minutes apart on a shared
/// machine differ more than the journal does, and pairing them within a round leaves that
/// out. Two processes of one binary differ too, each run by a few percent one way or the
/// other (the control run, both daemons without the journal, showed up to 7 %): so the
/// journal is on in each daemon for half the rounds (a reload turns it on or off), and a
/// ratio is the geometric mean of the two daemons' medians of their rounds' ratios, in which
/// what one process has over the other cancels.
extension DefaultsBench {
    struct JournalCost {
        /// Per round: the `set` round trip's median, with the journal on and off.
        var setOn: [Double] = []
        var setOff: [Double] = []
        /// Per round: seconds from sending a pipelined burst of `burst` sets to its last answer,
        /// the median of the round's ``burstsPerRound``.
        var burstOn: [Double] = []
        var burstOff: [Double] = []
        /// Per round: whether the journal was on in the first daemon started.
        var firstDaemonOn: [Bool] = []
        /// The journal file's size after one burst of `burst` sets to a fresh domain; nil in a
        /// control run.
        var bytesPerBurst: Int?
        /// Both daemons ran without the journal.
        var control = false
        /// CPU seconds (every thread) of the daemon with the journal on and of the one with it
        /// off over the rounds and their settling, and the changes made in them.
        var cpuOn = 0.0
        var cpuOff = 0.0
        var changes = 0
    }

    /// A daemon's CPU time so far, every thread's, in seconds (`/proc/<pid>/stat`).
    static func cpuSeconds(of pid: pid_t) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return 0 }
        // After the command's closing parenthesis: state is field 3; utime and stime are 14 and 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// An even number, so that each daemon has the journal on in as many rounds.
    static let journalRounds = 16
    static let burstsPerRound = 5

    /// One of the two daemons: its configuration file, rewritten and reloaded to turn the
    /// journal on or off.
    private struct JournalDaemon {
        let server: Server
        let socket: String
        let storage: String
        let configurationFile: String

        static func configuration(journal: Bool) -> String {
            #"{ "settingsBundleDirectories": [], "journal.enabled": \#(journal) }"#
        }

        /// Reloads the daemon with the journal on or off, and waits until it answers so:
        /// `history` is refused with `no_journal` while the journal is off.
        func reload(journal: Bool) throws {
            try Self.configuration(journal: journal).write(toFile: configurationFile, atomically: true, encoding: .utf8)
            kill(server.process.processIdentifier, SIGHUP)
            let client = try LineSocket(path: socket)
            let deadline = LineSocket.now() + 10
            while try client.request(JSON.requestLine(.history, ["domain": "com.bench.journal", "limit": 1])).hasPrefix(#"{"ok":true"#) != journal {
                guard LineSocket.now() < deadline else { throw LineSocket.Failure(description: "the daemon did not reload its journal setting") }
                usleep(2_000)
            }
        }
    }

    func measureJournalCost(binary: String, directory: String, control: Bool = false) throws -> JournalCost {
        func start(_ name: String) throws -> JournalDaemon {
            let configuration = directory + "/\(name).json"
            try JournalDaemon.configuration(journal: !control).write(toFile: configuration, atomically: true, encoding: .utf8)
            let socket = directory + "/\(name).sock", storage = directory + "/\(name)-storage"
            let server = try Server.start(
                binary, ["--config", configuration, "--socket", socket, "--storage-dir", storage], readyWhen: "start-up settled")
            return JournalDaemon(server: server, socket: socket, storage: storage, configurationFile: configuration)
        }
        let daemons = [try start("journal-a"), try start("journal-b")]
        defer { for daemon in daemons { daemon.server.stop() } }
        // Both servers on one CPU and this client on the other, where there are two: where the
        // scheduler would place each decides a round trip more than the journal does. On the
        // server's CPU, the journal thread's work weighs on the server's loop, as it would on a
        // busy machine.
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        let pinned = cpus > 1 && Server.which("taskset") != nil
        if pinned { try Server.pin(daemons.map(\.server), cpus: "1", client: "0") }
        defer { if pinned { try? Server.pin([], cpus: "", client: "0-\(cpus - 1)") } }
        var cost = JournalCost()
        cost.control = control
        for round in 0..<Self.journalRounds {
            // The journal is on in the first daemon in even rounds, in the second in odd ones;
            // which daemon goes first changes every two rounds.
            let firstOn = round.isMultiple(of: 2)
            let (on, off) = firstOn ? (daemons[0], daemons[1]) : (daemons[1], daemons[0])
            if !control {
                try on.reload(journal: true)
                try off.reload(journal: false)
            }
            cost.firstDaemonOn.append(firstOn)
            let order = [(try LineSocket(path: on.socket), true), (try LineSocket(path: off.socket), false)]
            let turns = (round / 2).isMultiple(of: 2) ? order : order.reversed()
            let cpuAtStart = (on: Self.cpuSeconds(of: on.server.process.processIdentifier), off: Self.cpuSeconds(of: off.server.process.processIdentifier))
            for (client, isOn) in turns {
                let sets = try latencies(perRound, request: { i in
                    JSON.requestLine(.set, ["domain": "com.bench.journal", "key": .string("k\(i % 100)"), "value": .integer(Int64(round * 1_000_000 + i))]) + "\n"
                }) { request in
                    try client.send(bytes: request)
                    guard try client.nextLine(hasPrefix: Self.ok) else { throw LineSocket.Failure(description: "set failed") }
                }
                if isOn { cost.setOn.append(Report.percentile(sets, 0.5)) } else { cost.setOff.append(Report.percentile(sets, 0.5)) }
            }
            // Bursts taken in turns, each to a fresh domain: a burst lasts tens of milliseconds,
            // and the round's median of several leaves out one the machine slowed.
            var bursts: (on: [Double], off: [Double]) = ([], [])
            for index in 0..<Self.burstsPerRound {
                for (client, isOn) in turns {
                    let time = try timeBurst(client, domain: "com.bench.journal-burst-\(round)-\(index)")
                    if isOn { bursts.on.append(time) } else { bursts.off.append(time) }
                }
            }
            cost.burstOn.append(Report.percentile(bursts.on, 0.5))
            cost.burstOff.append(Report.percentile(bursts.off, 0.5))
            for (client, _) in turns { _ = try client.request(JSON.requestLine(.synchronize)) }
            cost.changes += 2 * (perRound + Self.burstsPerRound * burst)
            // The journal thread writes a second after the changes are durable: the rounds are
            // spaced so that this work, which no client waits for, falls between them. The CPU
            // times count it.
            Thread.sleep(forTimeInterval: 1.5)
            cost.cpuOn += Self.cpuSeconds(of: on.server.process.processIdentifier) - cpuAtStart.on
            cost.cpuOff += Self.cpuSeconds(of: off.server.process.processIdentifier) - cpuAtStart.off
        }
        guard !control else { return cost }
        // Round 0's first burst went to the first daemon, with its journal on.
        let client = try LineSocket(path: daemons[0].socket)
        try daemons[0].reload(journal: true)
        _ = try client.request(JSON.requestLine(.history, ["domain": "com.bench.journal-burst-0-0", "limit": 1]))
        let file = daemons[0].storage + "/.defaultsd-journal/com.bench.journal-burst-0-0.journal"
        cost.bytesPerBurst = try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int
        return cost
    }

    /// A pipelined burst of `burst` sets to one domain (50 keys), timed to its last answer.
    private func timeBurst(_ client: LineSocket, domain: String) throws -> Double {
        var lines = ""
        for i in 0..<burst { lines += JSON.requestLine(.set, ["domain": .string(domain), "key": .string("k\(i % 50)"), "value": .integer(Int64(i))]) + "\n" }
        let bytes = Array(lines.utf8)
        let start = LineSocket.now()
        try client.send(bytes: bytes)
        for _ in 0..<burst {
            guard try client.nextLine(hasPrefix: Self.ok) else { throw LineSocket.Failure(description: "a burst's set failed") }
        }
        return LineSocket.now() - start
    }
}

extension Report {
    mutating func journalCost(_ cost: DefaultsBench.JournalCost, burst: Int) {
        func median(_ samples: [Double]) -> Double { Report.percentile(samples, 0.5) }
        /// The geometric mean of the medians of the rounds' own ratios with the journal on in
        /// the first daemon and in the second, and those two medians.
        func paired(_ on: [Double], _ off: [Double]) -> String {
            let ratios = zip(on, off).map { $0 / $1 }
            let first = median(zip(ratios, cost.firstDaemonOn).filter(\.1).map(\.0))
            let second = median(zip(ratios, cost.firstDaemonOn).filter { !$0.1 }.map(\.0))
            return "ratio **\(String(format: "%.2f", (first * second).squareRoot()))** (the rounds' medians: "
                + "\(String(format: "%.2f", first)) with the first daemon on, \(String(format: "%.2f", second)) with the second)"
        }
        let what = cost.control ? "control: both daemons without the journal" : "on against off"
        line("- change journal, \(what), in the same run (\(DefaultsBench.journalRounds) rounds, each daemon in turn, "
            + "the journal on in each for half of them, \(DefaultsBench.burstsPerRound) bursts each per round; "
            + "servers on CPU 1, client on CPU 0): `set` round trip p50 "
            + "**\(Report.micro(median(cost.setOn)))** against \(Report.micro(median(cost.setOff))), \(paired(cost.setOn, cost.setOff)); "
            + "a \(burst)-set pipelined burst **\(Report.milli(median(cost.burstOn)))** against \(Report.milli(median(cost.burstOff))), "
            + "\(paired(cost.burstOn, cost.burstOff)) (budget ≤ 1.10 each)")
        let perChange = (on: cost.cpuOn / Double(max(cost.changes / 2, 1)), off: cost.cpuOff / Double(max(cost.changes / 2, 1)))
        line("- change journal, CPU per change, every thread of the daemon and the journal's deferred writing included: "
            + "**\(Report.micro(perChange.on))** against \(Report.micro(perChange.off)), ratio **\(String(format: "%.2f", perChange.on / perChange.off))**")
        guard let bytes = cost.bytesPerBurst else { return }
        line("- change journal on disk: **\(String(format: "%.2f", Double(bytes) / 1_048_576)) MiB** for \(burst) changes "
            + "(\(bytes / max(burst, 1)) bytes each)")
    }
}
