import DefaultsClient
import DefaultsCore
import Foundation
import NIOCore
import TestThreads
import Testing

/// `DaemonChannel`'s request timeout, which bounds every request the Settings app makes: a
/// server that takes the request and never answers is given up at the timeout, the connection
/// closed (a late answer could only be matched to the next request), and the events end.
@Suite(.ownThreads) struct DaemonChannelTimeoutTests {
    @Test func aRequestNeverAnsweredTimesOutAndClosesTheConnection() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("silent-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let socketPath = folder + "/socket"
        // Reads every request and answers none.
        let silent = Process()
        silent.executableURL = URL(fileURLWithPath: "/usr/bin/socat")
        silent.arguments = ["UNIX-LISTEN:" + socketPath, "SYSTEM:cat >/dev/null"]
        // Not the test runner's output: a server left behind would hold it open, and the runner
        // would wait for it to close.
        silent.standardOutput = FileHandle.nullDevice
        silent.standardError = FileHandle.nullDevice
        try silent.run()
        defer {
            // SIGKILL: socat inherits the test runner's blocked signals, SIGTERM among them.
            kill(silent.processIdentifier, SIGKILL)
            silent.waitUntilExit()
        }
        // The socket's file appears when socat binds it, a moment before it listens: until then a
        // connection is refused, and is tried again. A refused one is not the one socat serves.
        let deadline = Date(timeIntervalSinceNow: 10)
        var connected: DaemonChannel?
        while connected == nil {
            do {
                connected = try await DaemonChannel.connect(socketPath: socketPath)
            } catch {
                guard Date() < deadline else { throw error }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        let channel = try #require(connected)
        await #expect(throws: DaemonChannel.TimedOut.self) {
            _ = try await channel.request(.request(.ping, [:]), timeout: .milliseconds(300))
        }
        try await channel.closeFuture.get()
        for await _ in channel.events { Issue.record("no event came") }
    }
}
