import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// A client that pipelines many requests and does not read: the daemon holds a bounded amount of
/// its answers (`maximumPendingReplyBytes`), serves other connections meanwhile, and answers
/// every request, in order, once the client reads.
@Suite(.ownThreads) struct SlowClientTests {
    static let domain = "com.example.large"

    @Test("1,000 pipelined gets of a 400 KB domain, unread: the daemon grows by less than 64 MiB, not 400 MB")
    func unreadAnswersAreBounded() throws {
        let daemon = try DaemonProcess()
        let setup = try daemon.connect()
        let members = (0..<40).map { #""key\#($0)":"\#(String(repeating: "v", count: 10_000))""# }.joined(separator: ",")
        #expect(try setup.request(#"{"op":"apply","domain":"\#(Self.domain)","set":{\#(members)}}"#) == #"{"ok":true,"generation":1}"#)
        let expected = try setup.request(#"{"op":"get","domain":"\#(Self.domain)"}"#)
        #expect(expected.utf8.count > 400_000)
        let baseline = daemon.anonymousResidentKiB()

        let slow = try daemon.connect()
        let count = 1_000
        try slow.send(bytes: Array((0..<count).map { #"{"id":\#($0),"op":"get","domain":"\#(Self.domain)"}"# + "\n" }.joined().utf8))
        // Another connection is answered at once, after the daemon has read what it will of the slow one's requests.
        let other = try daemon.connect()
        try other.send(#"{"op":"ping"}"#)
        #expect(try other.readResponse(timeout: 1) == #"{"ok":true}"#)
        let grown = daemon.anonymousResidentKiB() - baseline
        #expect(grown < 64 * 1024, "the daemon grew by \(grown) KiB holding unread answers")

        // Every answer arrives, in order, whole.
        let body = expected.dropFirst()  // `{`, then the members after the id
        for id in 0..<count {
            let answer = try slow.readResponse(timeout: 10)
            #expect(answer == #"{"id":\#(id),"# + body, "answer \(id)")
            if id % 100 == 0 { #expect(daemon.anonymousResidentKiB() - baseline < 64 * 1024, "after \(id) answers read") }
        }
        #expect(try slow.request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
    }

    @Test("a partial line left unfinished is answered line_timed_out and the connection ends; others go on")
    func anUnfinishedLineTimesOut() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unfinished-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let configuration = folder + "/config.json"
        try Data(#"{"unfinishedLineMilliseconds": 300}"#.utf8).write(to: URL(fileURLWithPath: configuration))
        let daemon = try DaemonProcess(arguments: ["--config", configuration])
        let stalled = try daemon.connect()
        let started = Date()
        try stalled.send(bytes: Array(#"{"op":"ping"}"#.utf8) + [10] + Array(#"{"op":"pi"#.utf8))
        #expect(try stalled.readResponse(timeout: 1) == #"{"ok":true}"#)
        #expect(try stalled.readResponse(timeout: 2)
            == #"{"ok":false,"error":{"code":"line_timed_out","message":"line left unfinished for 300 ms; the connection is closed"}}"#)
        #expect(Date().timeIntervalSince(started) >= 0.3)
        #expect(throws: (any Error).self, "the connection ends") { try stalled.readResponse(timeout: 3) }
        #expect(try daemon.connect().request(#"{"op":"ping"}"#, timeout: 1) == #"{"ok":true}"#)
    }
}
