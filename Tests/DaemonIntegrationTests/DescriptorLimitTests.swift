import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// The descriptors the daemon may hold bound the connections it serves: it raises its soft
/// `RLIMIT_NOFILE` to the hard limit at start, and keeps 128 descriptors for its own files, so a
/// full set of connections never makes its own writes fail.
@Suite(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/prlimit"), "needs prlimit (util-linux)"), .ownThreads)
struct DescriptorLimitTests {
    static func openFilesLimit(of pid: Int32) -> String? {
        let limits = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
        return limits.split(separator: "\n").first { $0.hasPrefix("Max open files") }
            .map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(3).prefix(2).joined(separator: " ") }
    }

    @Test func theSoftLimitIsRaisedToTheHardOne() throws {
        let daemon = try DaemonProcess(commandPrefix: ["/usr/bin/prlimit", "--nofile=256:4096"])
        #expect(Self.openFilesLimit(of: daemon.pid) == "4096 4096")
        #expect(!daemon.logText.contains("fewer connections are served"))
    }

    @Test func aLowLimitServesFewerConnectionsAndEveryWriteStillLands() throws {
        let daemon = try DaemonProcess(commandPrefix: ["/usr/bin/prlimit", "--nofile=300:300"])
        #expect(daemon.logText.contains("fewer connections are served"))
        #expect(daemon.logText.contains("connections=172"))
        var clients: [LineSocket] = []
        for _ in 0..<172 {
            let client = try daemon.connect()
            #expect(try client.request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
            clients.append(client)
        }
        let refused = try daemon.connect()
        #expect(try refused.readResponse(timeout: 5).contains(#""code":"too_many_connections""#))
        // Full: the daemon's own files still open, so a write is durable.
        for domain in 0..<8 {
            #expect(try clients[domain].request(#"{"op":"set","domain":"com.example.full\#(domain)","key":"k","value":1}"#)
                == #"{"ok":true,"generation":1}"#)
        }
        #expect(try clients[0].request(#"{"op":"synchronize"}"#, timeout: 10) == #"{"ok":true}"#)
        #expect(try daemon.storedValues("com.example.full7") == ["k": .integer(1)])
    }
}
