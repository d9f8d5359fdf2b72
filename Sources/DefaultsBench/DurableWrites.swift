import DefaultsCore
import Foundation
import LineSocket

/// defaultsd's durable writes: each writer on its own connection and domain, `set` then
/// `synchronize`, which answers once the change is on disk.
enum DurableWrites {
    static func set(_ domain: String, _ value: Int) -> String {
        JSON.requestLine(.set, ["domain": .string(domain), "key": "k", "value": .integer(Int64(value))])
    }

    /// Round trips of `set` + `synchronize`, seconds each.
    static func roundTrips(socket: String, count: Int) throws -> [Double] {
        let client = try LineSocket(path: socket)
        var samples: [Double] = []
        for i in 0..<count {
            let start = LineSocket.now()
            _ = try client.request(set("com.bench.sync", i))
            _ = try client.request(JSON.requestLine(.synchronize))
            samples.append(LineSocket.now() - start)
        }
        return samples
    }

    /// Durable `set`s per second by `writers` concurrent writers for `seconds`.
    static func throughput(socket: String, writers: Int, seconds: Double) throws -> Double {
        let counts = Counts(writers)
        let done = DispatchGroup()
        let start = LineSocket.now() + 0.5, end = start + seconds  // every writer connected by then
        for index in 0..<writers {
            done.enter()
            Thread {
                defer { done.leave() }
                guard let client = try? LineSocket(path: socket) else { return }
                while LineSocket.now() < start { usleep(100) }
                var count = 0
                do {
                    while LineSocket.now() < end {
                        guard try client.request(set("com.bench.writer\(index)", count)).hasPrefix(#"{"ok":true"#),
                            try client.request(JSON.requestLine(.synchronize)).hasPrefix(#"{"ok":true"#)
                        else { break }
                        count += 1
                    }
                } catch {}
                counts.set(index, count)
            }.start()
        }
        done.wait()
        return Double(counts.total) / seconds
    }

    /// Each writer's count, written by its own thread. Owned by `throughput`.
    final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private var counts: [Int]
        init(_ writers: Int) { counts = Array(repeating: 0, count: writers) }
        func set(_ index: Int, _ count: Int) { lock.withLock { counts[index] = count } }
        var total: Int { lock.withLock { counts.reduce(0, +) } }
    }
}
