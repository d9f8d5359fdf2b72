import Foundation
import SystemdSupport
import TestThreads
import Testing

/// The parts of the service manager's protocol that the real-systemd tests (DaemonIntegrationTests,
/// `SystemdTests`) do not reach: abstract notification sockets, refused addresses, variables meant
/// for another process, and the socket checks. The environment is the process's own, so the suite
/// runs serialized and puts every variable back.
@Suite(.serialized, .ownThreads) struct SystemdProtocolTests {
    @Test func notifyReachesAPathSocketInOneDatagram() throws {
        let directory = NSTemporaryDirectory() + "systemd-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let receiver = try DatagramReceiver(path: directory + "/notify")
        try withEnvironment(["NOTIFY_SOCKET": directory + "/notify"]) {
            #expect(Systemd.isNotifying)
            #expect(Systemd.notify("READY=1", "STATUS=serving"))
            #expect(receiver.receive() == "READY=1\nSTATUS=serving")
        }
    }

    @Test func notifyReachesAnAbstractSocket() throws {
        let name = "defaultsd-test-\(UUID().uuidString.prefix(8))"
        let receiver = try DatagramReceiver(abstractName: name)
        try withEnvironment(["NOTIFY_SOCKET": "@" + name]) {
            #expect(Systemd.notify("WATCHDOG=1"))
            #expect(receiver.receive() == "WATCHDOG=1")
        }
    }

    @Test(arguments: [nil, "relative/notify", "vsock:2:1234", "/" + String(repeating: "x", count: 200)])
    func notifyWithoutAUsableAddressSendsNothing(_ value: String?) throws {
        try withEnvironment(["NOTIFY_SOCKET": value]) {
            #expect(Systemd.isNotifying == (value != nil))
            #expect(!Systemd.notify("READY=1"))
        }
    }

    @Test func socketsPassedToAnotherProcessAreNotAdoptedAndTheVariablesGo() throws {
        try withEnvironment(["LISTEN_PID": "1", "LISTEN_FDS": "2", "LISTEN_FDNAMES": "a:b"]) {
            #expect(Systemd.listeningSockets() == [])
            #expect(getenv("LISTEN_PID") == nil)
            #expect(getenv("LISTEN_FDS") == nil)
            #expect(getenv("LISTEN_FDNAMES") == nil)
        }
    }

    @Test func onlyAListeningUnixStreamSocketQualifies() throws {
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bound = withUnsafePointer(to: &address) {
            // Only the family: the kernel gives the socket an abstract name of its own.
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sa_family_t>.size)) }
        }
        #expect(bound == 0)
        let unbound = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        let datagram = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        let tcp = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var pipeEnds: [Int32] = [0, 0]
        #expect(pipe(&pipeEnds) == 0)
        defer { for fd in [listener, unbound, datagram, tcp] + pipeEnds { close(fd) } }
        #expect(listen(listener, 1) == 0)
        #expect(listen(tcp, 1) == 0)

        #expect(Systemd.isListeningUnixStreamSocket(listener))
        #expect(!Systemd.isListeningUnixStreamSocket(unbound), "not listening")
        #expect(!Systemd.isListeningUnixStreamSocket(datagram), "not a stream")
        #expect(!Systemd.isListeningUnixStreamSocket(tcp), "not Unix")
        #expect(!Systemd.isListeningUnixStreamSocket(pipeEnds[0]), "not a socket")
        #expect(!Systemd.isListeningUnixStreamSocket(999), "not open")
    }

    @Test func theWatchdogFollowsItsVariables() throws {
        let ownPID = String(getpid())
        try withEnvironment(["WATCHDOG_USEC": "400000", "WATCHDOG_PID": nil]) {
            #expect(Systemd.watchdogInterval() == .milliseconds(400))
        }
        try withEnvironment(["WATCHDOG_USEC": "400000", "WATCHDOG_PID": ownPID]) {
            #expect(Systemd.watchdogInterval() == .milliseconds(400))
        }
        try withEnvironment(["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "1"]) {
            #expect(Systemd.watchdogInterval() == nil, "meant for another process")
        }
        for value in ["0", "-5", "soon", nil] {
            try withEnvironment(["WATCHDOG_USEC": value, "WATCHDOG_PID": nil]) {
                #expect(Systemd.watchdogInterval() == nil, "WATCHDOG_USEC=\(value ?? "unset")")
            }
        }
    }
}

/// Sets (or, for nil, removes) each variable for the length of `body`, then restores it.
private func withEnvironment(_ values: [String: String?], _ body: () throws -> Void) rethrows {
    let saved = values.keys.map { ($0, getenv($0).map { String(cString: $0) }) }
    for (name, value) in values {
        if let value { setenv(name, value, 1) } else { unsetenv(name) }
    }
    defer {
        for (name, value) in saved {
            if let value { setenv(name, value, 1) } else { unsetenv(name) }
        }
    }
    try body()
}

/// A bound Unix datagram socket standing in for systemd's notification socket.
private final class DatagramReceiver {
    private let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
    private let path: String?

    init(path: String) throws {
        self.path = path
        try bind(Array(path.utf8) + [0])
    }

    init(abstractName: String) throws {
        path = nil
        try bind([0] + Array(abstractName.utf8))
    }

    private func bind(_ bytes: [UInt8]) throws {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EINVAL) }
    }

    deinit {
        close(fd)
        if let path { unlink(path) }
    }

    func receive() -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, 5000) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        return count > 0 ? String(decoding: buffer[..<count], as: UTF8.self) : nil
    }
}
