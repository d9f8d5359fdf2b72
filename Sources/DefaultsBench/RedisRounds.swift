import DefaultsCore
import Foundation
import LineSocket

/// The Redis rounds, with the same client code as defaultsd's.
extension DefaultsBench {
    func measureRedis(socket: String, roundTripsOnly: Bool = false) throws -> Results {
        var results = Results()
        let client = try LineSocket(path: socket)
        let command = Self.redisCommand
        func send(_ parts: [String], on socket: LineSocket) throws { try socket.send(bytes: Array(command(parts).utf8)) }
        let pong = Array("+PONG".utf8), stored = Array("+OK".utf8)
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
            try Self.readRedisValue(client)
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

    /// A Redis command in its wire form (RESP): an array of bulk strings.
    static func redisCommand(_ parts: [String]) -> String {
        "*\(parts.count)\r\n" + parts.map { "$\($0.utf8.count)\r\n\($0)\r\n" }.joined()
    }

    private static let redisMissingValue = Array("$-1".utf8)

    /// Reads Redis's answer to a GET: `$-1` for a missing value, else the value's length and then
    /// the value.
    static func readRedisValue(_ client: LineSocket) throws {
        if try !client.nextLine(hasPrefix: redisMissingValue) { _ = try client.nextLine(hasPrefix: []) }
    }
}
