import Foundation
import LineSocket

/// A real `NOTIFY_SOCKET`: a Unix datagram socket that receives what the daemon tells systemd.
final class NotifyListener {
    let path: String
    private let fd: Int32

    init(directory: String) throws {
        path = directory + "/notify-\(UUID().uuidString.prefix(6))"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw LineSocket.Failure(description: "bind \(path): \(String(cString: strerror(errno)))") }
    }

    deinit {
        close(fd)
        unlink(path)
    }

    /// The next datagram, or nil after `timeout` seconds.
    func receive(timeout: Double = 10) -> String? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// Datagrams until one contains `text` (returned last), or nil after `timeout` seconds.
    func receive(until text: String, timeout: Double = 10) -> [String]? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        var seen: [String] = []
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0, let message = receive(timeout: remaining) else { return nil }
            seen.append(message)
            if message.contains(text) { return seen }
        }
    }
}
