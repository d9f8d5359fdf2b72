import DefaultsCore
import Foundation
import LineSocket

/// How a round is timed: latencies of single requests, and throughput of pipelined batches.
extension DefaultsBench {
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
