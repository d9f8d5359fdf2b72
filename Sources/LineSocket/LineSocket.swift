import DefaultsCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A blocking line client for a Unix stream socket, with a deadline on every read.
///
/// Tests and the benchmark use it rather than an event-loop client: they want each step to
/// block until its answer arrives (or a deadline passes), and latency figures that include
/// no scheduler hops. Events (lines with `"event"`) are set aside while a response is awaited.
///
/// Not thread-safe: one owner at a time.
///
/// ```swift
/// let socket = try LineSocket(path: "/run/user/1000/defaultsd/socket")
/// let answer = try socket.request(#"{"op":"ping"}"#) // {"ok":true}
/// ```
public final class LineSocket {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    public let fileDescriptor: Int32
    /// Bytes read and not yet taken; those before `start` are taken. Taking a line moves
    /// `start` instead of shifting the rest; the next read drops the taken bytes.
    private var buffer: [UInt8] = []
    private var start = 0
    /// What each `read` fills, allocated once: a fresh 64 KiB array per read would be zeroed
    /// every time, which costs a benchmark's client more than the read and evicts the caches
    /// the server shares with it.
    private var chunk = [UInt8](repeating: 0, count: 65536)
    /// Event lines read while waiting for a response, oldest first.
    public private(set) var pendingEvents: [String] = []

    /// Connects to the daemon's socket at `path`, after checking whom it talks to
    /// (``SocketTrust``): a socket directory another user could write, or a server running as
    /// another user, is refused with a `not_permitted` ``DefaultsError`` before anything is sent.
    public init(path: String) throws {
        try SocketTrust.checkDirectory(ofSocket: path)
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            throw Failure(description: "socket path too long: \(path)")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "connect(\(path)): \(message)")
        }
        do throws(DefaultsError) {
            try SocketTrust.checkServer(PeerCredentials.of(descriptor: fd))
        } catch {
            close(fd)
            throw error
        }
        fileDescriptor = fd
    }

    deinit { close(fileDescriptor) }

    /// Sends raw bytes as they are.
    public func send(bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { raw in write(fileDescriptor, raw.baseAddress, raw.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(description: "write(): \(String(cString: strerror(errno)))")
            }
            offset += written
        }
    }

    /// Sends one line; a newline is added.
    public func send(_ line: String) throws { try send(bytes: Array((line + "\n").utf8)) }

    /// Closes the sending half: the daemon answers what it has and then closes.
    public func shutdownWrite() { shutdown(fileDescriptor, Int32(SHUT_WR)) }

    /// The next line, whatever it is. Throws after `timeout` seconds without one, or at end of stream.
    public func readLine(timeout: Double = 10) throws -> String {
        let line = try takeLine(timeout: timeout)
        return String(decoding: buffer[line], as: UTF8.self)
    }

    /// Takes the next line and tells whether it starts with `prefix`, without making a string
    /// of it: the benchmark's client, which should cost as little as possible beside the server
    /// it measures, reads its answers this way.
    public func nextLine(hasPrefix prefix: [UInt8], timeout: Double = 10) throws -> Bool {
        buffer[try takeLine(timeout: timeout)].starts(with: prefix)
    }

    /// Takes the next line from the buffer, reading as needed; its range in `buffer`, cut by the
    /// protocol's rule (``LineFraming``: newline, and a `\r` before it, excluded).
    private func takeLine(timeout: Double) throws -> Range<Int> {
        let deadline = LineSocket.now() + timeout
        while true {
            let found: (line: Range<Int>, newline: Int)? = buffer.withUnsafeBytes { raw in
                LineFraming.newline(in: raw, from: start).map { newline in
                    (start..<(start + LineFraming.contentLength(of: raw, from: start, upTo: newline)), newline)
                }
            }
            if let found {
                start = found.newline + 1
                return found.line
            }
            let remaining = deadline - LineSocket.now()
            guard remaining > 0 else { throw Failure(description: "no line within \(timeout) s") }
            guard try waitReadable(timeout: remaining) else { continue }
            let count = chunk.withUnsafeMutableBytes { raw in read(fileDescriptor, raw.baseAddress, raw.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw Failure(description: "read(): \(String(cString: strerror(errno)))")
            }
            if count == 0 { throw Failure(description: "connection closed by the daemon") }
            buffer.removeSubrange(..<start)
            start = 0
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    /// True when bytes are buffered or the socket is readable within `timeout` seconds.
    public func hasInput(timeout: Double) throws -> Bool {
        if buffer.withUnsafeBytes({ LineFraming.newline(in: $0, from: start) }) != nil { return true }
        return try waitReadable(timeout: timeout)
    }

    /// The next response line; event lines met on the way are kept in `pendingEvents`.
    public func readResponse(timeout: Double = 10) throws -> String {
        while true {
            let line = try readLine(timeout: timeout)
            if EventName.isEvent(line.utf8) { pendingEvents.append(line) } else { return line }
        }
    }

    /// The next event line, from `pendingEvents` first.
    public func readEvent(timeout: Double = 10) throws -> String {
        if !pendingEvents.isEmpty { return pendingEvents.removeFirst() }
        let line = try readLine(timeout: timeout)
        guard EventName.isEvent(line.utf8) else { throw Failure(description: "expected an event, got \(line)") }
        return line
    }

    /// Sends a request line and returns its response line.
    @discardableResult
    public func request(_ line: String, timeout: Double = 10) throws -> String {
        try send(line)
        return try readResponse(timeout: timeout)
    }

    private func waitReadable(timeout: Double) throws -> Bool {
        var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        let milliseconds = Int32(min(max(timeout * 1000, 0), Double(Int32.max)).rounded(.up))
        let ready = poll(&descriptor, 1, milliseconds)
        if ready < 0 && errno != EINTR { throw Failure(description: "poll(): \(String(cString: strerror(errno)))") }
        return ready > 0
    }

    /// Monotonic seconds.
    public static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
