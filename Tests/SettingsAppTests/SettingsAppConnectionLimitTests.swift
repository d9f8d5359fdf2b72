import Foundation
import Hummingbird
import TestThreads
import Testing

@testable import SettingsApp

/// The Settings app's own bounds on connections, over real TCP, with the application run as
/// `defaultsd-settings` runs it (HummingbirdTesting's live server would set its own
/// configuration, without the cap): a connection nothing is read from is closed after the idle
/// timeout, whether or not it ever sent a request, and past the cap a new connection waits,
/// unserved, until one closes.
@Suite(.ownThreads) struct SettingsAppConnectionLimitTests {
    /// The app, run as `defaultsd-settings` runs it, on a free port; the port, and the task to cancel.
    func running(maximumConnections: Int, idleTimeout: Duration) async throws -> (port: Int, service: Task<Void, any Error>) {
        let server = SettingsServer(configuration: .init(
            port: 0, socketPath: "/nonexistent/defaultsd/socket", hosts: ["127.0.0.1"], schemaTool: nil,
            maximumConnections: maximumConnections, idleTimeout: idleTimeout))
        let (ports, running) = AsyncStream.makeStream(of: Int.self)
        let application = server.application(host: "127.0.0.1", port: 0, onRunning: { running.yield($0) })
        let service = Task { try await application.runService(gracefulShutdownSignals: []) }
        return (try #require(await ports.first { _ in true }), service)
    }

    /// Past the cap a new connection waits, accepted by the kernel into the backlog but unserved,
    /// until one of those served closes.
    @Test func aConnectionPastTheCapWaitsUntilOneCloses() async throws {
        let (port, service) = try await running(maximumConnections: 2, idleTimeout: .seconds(600))
        defer { service.cancel() }
        let first = try RawTCP(port: port)
        let second = try RawTCP(port: port)
        second.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(await second.received(within: 120)?.hasPrefix("HTTP/1.1 ") == true, "served, then kept alive")
        let third = try RawTCP(port: port)
        third.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(await third.received(within: 1) == "", "served while two connections held the cap of two")
        first.close()
        let answer = try #require(await third.received(within: 120))
        #expect(answer.hasPrefix("HTTP/1.1 "), "\(answer)")
    }

    /// A connection with nothing read or written for the idle timeout is closed, whether it
    /// never sent a request or was kept alive after one. (Whether the request was answered first
    /// depends on how fast this busy machine runs the handler; that it ends does not.)
    @Test func idleConnectionsAreClosed() async throws {
        let (port, service) = try await running(maximumConnections: 8, idleTimeout: .seconds(2))
        defer { service.cancel() }
        let silent = try RawTCP(port: port)
        let keptAlive = try RawTCP(port: port)
        keptAlive.send("GET / HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(await silent.received(within: 120) == nil, "a connection that never sent a request is closed")
        #expect(await keptAlive.ended(within: 120), "a kept-alive connection with no request since is closed")
    }
}

/// A plain TCP connection to 127.0.0.1, for what an HTTP client library would hide: a
/// connection that sends nothing, and whether the server closed it.
private final class RawTCP: @unchecked Sendable {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port)).bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            Glibc.close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    private var isOpen = true

    func close() {
        guard isOpen else { return }
        isOpen = false
        Glibc.close(fd)
    }

    deinit { close() }

    func send(_ text: String) {
        _ = text.withCString { Glibc.send(fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }

    /// ``receive(within:)`` on a thread of its own: the wait never holds one of the few threads
    /// Swift's concurrency runs the server's handlers on.
    func received(within seconds: Double) async -> String? {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: self.receive(within: seconds)) }
        }
    }

    /// Whether the server ends the connection within `seconds`, whatever it sends first.
    func ended(within seconds: Double) async -> Bool {
        let deadline = Date(timeIntervalSinceNow: seconds)
        while Date() < deadline {
            guard let text = await received(within: max(deadline.timeIntervalSinceNow, 0)) else { return true }
            if text.isEmpty { return false }
        }
        return false
    }

    /// What arrives within `seconds`: "" when nothing did, nil when the server closed the
    /// connection (or reset it) before sending anything.
    func receive(within seconds: Double) -> String? {
        var readable = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&readable, 1, Int32(seconds * 1000)) > 0 else { return "" }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}
