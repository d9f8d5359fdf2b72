import DefaultsCore
import Foundation
import LineSocket

/// What the change journal costs: two fresh daemons alike but for the journal, on and off,
/// measured in alternating rounds; and the journal's disk use.
///
/// Each round measures both daemons, in turn, the first of them alternating from round to
/// round; a ratio is the median of the rounds' own ratios. Two measurements minutes apart on
/// a shared machine differ more than the journal does: pairing them within a round leaves out
/// what changed between rounds, and the control run (both daemons without the journal) shows
/// the spread that is left.
extension DefaultsBench {
    struct JournalCost {
        var setOn: [Double] = []
        var setOff: [Double] = []
        /// Seconds from sending a pipelined burst of `burst` sets to its last answer: the median of
        /// each round's ``burstsPerRound``.
        var burstOn: [Double] = []
        var burstOff: [Double] = []
        /// The journal file's size after one burst of `burst` sets to a fresh domain; nil in a
        /// control run.
        var bytesPerBurst: Int?
        /// Both daemons ran without the journal.
        var control = false
        /// Each daemon's CPU seconds (every thread) over all its rounds and their settling, and
        /// the changes made in them.
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

    static let journalRounds = 15
    static let burstsPerRound = 5

    func measureJournalCost(binary: String, directory: String, control: Bool = false) throws -> JournalCost {
        func start(journal: Bool) throws -> (server: Server, socket: String, storage: String) {
            let name = journal ? "journal-on" : "journal-off"
            let configuration = directory + "/\(name).json"
            try #"{ "settingsBundleDirectories": [], "journal.enabled": \#(journal && !control) }"#
                .write(toFile: configuration, atomically: true, encoding: .utf8)
            let socket = directory + "/\(name).sock", storage = directory + "/\(name)-storage"
            let server = try Server.start(
                binary, ["--config", configuration, "--socket", socket, "--storage-dir", storage], readyWhen: "start-up settled")
            return (server, socket, storage)
        }
        let on = try start(journal: true)
        defer { on.server.stop() }
        let off = try start(journal: false)
        defer { off.server.stop() }
        // Both servers on one CPU and this client on the other, where there are two: where the
        // scheduler would place each decides a round trip more than the journal does. On the
        // server's CPU, the journal thread's work weighs on the server's loop, as it would on a
        // busy machine.
        let cpus = ProcessInfo.processInfo.activeProcessorCount
        let pinned = cpus > 1 && Server.which("taskset") != nil
        if pinned { try Server.pin([on.server, off.server], cpus: "1", client: "0") }
        defer { if pinned { try? Server.pin([], cpus: "", client: "0-\(cpus - 1)") } }
        let (socket, offSocket, storage) = (on.socket, off.socket, on.storage)
        var cost = JournalCost()
        cost.control = control
        let cpuAtStart = (on: Self.cpuSeconds(of: on.server.process.processIdentifier), off: Self.cpuSeconds(of: off.server.process.processIdentifier))
        for round in 0..<Self.journalRounds {
            let order = [(try LineSocket(path: socket), true), (try LineSocket(path: offSocket), false)]
            let daemons = round.isMultiple(of: 2) ? order : order.reversed()
            for (client, isOn) in daemons {
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
                for (client, isOn) in daemons {
                    let time = try timeBurst(client, domain: "com.bench.journal-burst-\(round)-\(index)")
                    if isOn { bursts.on.append(time) } else { bursts.off.append(time) }
                }
            }
            cost.burstOn.append(Report.percentile(bursts.on, 0.5))
            cost.burstOff.append(Report.percentile(bursts.off, 0.5))
            for (client, _) in daemons { _ = try client.request(JSON.requestLine(.synchronize)) }
            cost.changes += 2 * (perRound + Self.burstsPerRound * burst)
            // The journal thread writes a second after the changes are durable: the rounds are
            // spaced so that this work, which no client waits for, falls between them. The CPU
            // times below count it.
            Thread.sleep(forTimeInterval: 1.5)
        }
        cost.cpuOn = Self.cpuSeconds(of: on.server.process.processIdentifier) - cpuAtStart.on
        cost.cpuOff = Self.cpuSeconds(of: off.server.process.processIdentifier) - cpuAtStart.off
        guard !control else { return cost }
        let client = try LineSocket(path: socket)
        _ = try client.request(JSON.requestLine(.history, ["domain": "com.bench.journal-burst-0-0", "limit": 1]))
        let file = storage + "/.defaultsd-journal/com.bench.journal-burst-0-0.journal"
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
        /// The median of the rounds' own ratios, and the middle half of them.
        func paired(_ on: [Double], _ off: [Double]) -> String {
            let ratios = zip(on, off).map { $0 / $1 }
            return "ratio **\(String(format: "%.2f", median(ratios)))** (middle half of the rounds "
                + "\(String(format: "%.2f", Report.percentile(ratios, 0.25)))–\(String(format: "%.2f", Report.percentile(ratios, 0.75))))"
        }
        let what = cost.control ? "control: both daemons without the journal" : "on against off"
        line("- change journal, \(what), in the same run (\(DefaultsBench.journalRounds) rounds, each daemon in turn, the first alternating, \(DefaultsBench.burstsPerRound) bursts each per round; "
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
