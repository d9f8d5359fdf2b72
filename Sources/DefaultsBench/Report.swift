import DefaultsCore
import Foundation
import LineSocket

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
