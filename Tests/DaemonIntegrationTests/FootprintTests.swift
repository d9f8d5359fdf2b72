import DaemonTestSupport
import DefaultsCore
import Foundation
import LineSocket
import TestThreads
import Testing

/// The daemon gives back the mappings of its start-up code once start-up has settled, and goes
/// on working with the code it needs faulted back in.
@Suite(.ownThreads) struct FootprintTests {
    /// Resident pages of the daemon's own executable file, KiB.
    static func executablePagesKiB(_ pid: Int32) -> Int {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) ?? "?"
        let smaps = (try? String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8)) ?? ""
        var total = 0, inExecutable = false
        for line in smaps.split(separator: "\n") {
            if let first = line.first, first.isHexDigit, line.contains("-") {
                inExecutable = line.hasSuffix(executable)
            } else if inExecutable, line.hasPrefix("Rss:") {
                total += Int(line.split(separator: " ")[1]) ?? 0
            }
        }
        return total
    }

    @Test func startUpCodeIsReleasedAndTheDaemonWorksOn() throws {
        let daemon = try DaemonProcess()
        defer { daemon.kill() }
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"com.example.footprint","key":"k","value":1}"#)
        let started = Self.executablePagesKiB(daemon.pid)
        #expect(daemon.waitForLog("start-up settled"))
        // The release follows the line that announces it: wait for the pages to go.
        let deadline = LineSocket.now() + 10
        var settled = Self.executablePagesKiB(daemon.pid)
        while settled > started - 2048, LineSocket.now() < deadline {
            usleep(10_000)
            settled = Self.executablePagesKiB(daemon.pid)
        }
        #expect(settled <= started - 2048, "\(started) KiB of the executable before, \(settled) KiB after")

        // Every path still runs: requests, events, a durable write, a reload.
        #expect(try client.request(#"{"op":"get","domain":"com.example.footprint","key":"k"}"#).contains(#""value":1"#))
        let subscriber = try daemon.connect()
        try subscriber.request(#"{"op":"subscribe","domains":["com.example.footprint"]}"#)
        try client.request(#"{"op":"set","domain":"com.example.footprint","key":"k","value":2}"#)
        #expect(try subscriber.readEvent().contains(#""k":2"#))
        try client.request(#"{"op":"synchronize"}"#)
        #expect(try daemon.storedValues("com.example.footprint") == ["k": 2])
        daemon.send(SIGHUP)
        #expect(daemon.waitForLog("configuration reloaded"))
        #expect(try client.request(#"{"op":"ping"}"#).hasPrefix(#"{"ok":true"#))
    }
}
