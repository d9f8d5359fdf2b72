import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import SharedCorpus
import TestThreads
import Testing

/// Every case of the JSON conformance suite, and random bytes, sent to the real daemon as request
/// lines: each gets answers, the connection stays usable and the daemon stays up.
@Suite(.ownThreads) struct HostileInputTests {
    static let suite = SharedCorpus.jsonTestSuite

    /// Sends `payload` and then a ping with `marker`; returns the answers before the ping's.
    func answers(to payload: [UInt8], marker: Int, on client: LineSocket) throws -> [String] {
        try client.send(bytes: payload + [0x0A] + Array(#"{"id":\#(marker),"op":"ping"}"#.utf8) + [0x0A])
        var lines: [String] = []
        while true {
            let line = try client.readResponse(timeout: 10)
            if line == #"{"id":\#(marker),"ok":true}"# { return lines }
            lines.append(line)
        }
    }

    @Test(.needsSharedCorpus) func theConformanceSuiteAsRequests() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.suite.path).filter { $0.hasSuffix(".json") }.sorted()
        #expect(names.count == 318)
        for (index, name) in names.enumerated() {
            // Newlines would split the case into several requests; keep it one line.
            let bytes = try [UInt8](Data(contentsOf: Self.suite.appendingPathComponent(name))).filter { $0 != 0x0A && $0 != 0x0D }
            let lines = try answers(to: bytes, marker: index, on: client)
            let blank = bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 }
            #expect(lines.count == (blank ? 0 : 1), "\(name): \(lines)")
            for line in lines {
                let answer = try JSONParser.parse(line)
                #expect(answer["ok"] == .bool(false), "\(name) was accepted as a request: \(line)")
                guard case .string(let code)? = answer["error"]?["code"] else {
                    Issue.record("\(name): no error code in \(line)")
                    continue
                }
                #expect(["bad_json", "invalid_utf8", "missing_parameter"].contains(code), "\(name): \(code)")
            }
        }
        #expect(try client.request(#"{"op":"stats"}"#).contains(#""connections":1"#))
    }

    @Test func randomBytesNeverBreakTheDaemon() throws {
        let daemon = try DaemonProcess(arguments: ["--max-line-bytes", "4096"])
        var generator = SeededRandom(seed: 20261121)
        for round in 0..<20 {
            let client = try daemon.connect()
            for marker in 0..<50 {
                let length = Int(generator.next() % 6000)
                let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }.filter { $0 != 0x0A }
                let lines = try answers(to: bytes, marker: round * 100 + marker, on: client)
                // A line of nothing but blanks (after its `\r`) is ignored; every other one is answered once.
                let body = bytes.last == 0x0D ? bytes.dropLast() : bytes[...]
                let blank = body.allSatisfy { $0 == 0x20 || $0 == 0x09 }
                #expect(lines.count == (blank ? 0 : 1), "\(lines)")
                for line in lines { #expect(line.hasPrefix("{\"ok\":false,\"error\":{\"code\":"), "\(line)") }
            }
        }
        #expect(try daemon.connect().request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
    }
}
