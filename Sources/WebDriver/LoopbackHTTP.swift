import Foundation

/// One HTTP/1.1 exchange with a server on 127.0.0.1, over a plain TCP connection, with every
/// header as the caller writes it. Written here because the tests need exactly that (a browser or
/// URLSession fixes `Host` and `Origin`), and because Foundation's URLSession on Linux fails on
/// chromedriver's answers ("Failed writing header": it writes `Content-Length:249`, no space).
public enum LoopbackHTTP {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public struct Answer {
        public let status: Int
        public let headers: [(String, String)]
        public let body: String
        public func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
        public func headers(_ name: String) -> [String] { headers.filter { $0.0.lowercased() == name.lowercased() }.map(\.1) }
    }

    public static func send(port: Int, _ method: String, _ path: String, headers: [String: String] = [:], body: String? = nil, host: String? = nil) throws -> Answer {
        var lines = ["\(method) \(path) HTTP/1.1", "Host: \(host ?? "127.0.0.1:\(port)")", "Connection: close"]
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
        if let body { lines.append("Content-Length: \(body.utf8.count)") }
        return try exchange(port: port, lines.joined(separator: "\r\n") + "\r\n\r\n" + (body ?? ""))
    }

    /// Sends `raw` as is and reads the answer until the server closes (or, with `untilHeaders`,
    /// until the headers are complete: an upgraded connection stays open).
    public static func exchange(port: Int, _ raw: String, untilHeaders: Bool = false) throws -> Answer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "cannot connect to port \(port)") }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(raw.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[..<count]
            if let end = Self.headerEnd(received) {
                if untilHeaders { break }
                if let length = Self.contentLength(received[..<end]), received.count - end >= length { break }
            }
        }
        let text = String(decoding: received, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(description: "no HTTP answer: \(text)") }
        let head = text[..<split.lowerBound].components(separatedBy: "\r\n")
        let status = Int(head.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let headers = head.dropFirst().compactMap { line -> (String, String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Answer(status: status, headers: headers, body: String(text[split.upperBound...]))
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    private static func contentLength(_ head: ArraySlice<UInt8>) -> Int? {
        for line in String(decoding: head, as: UTF8.self).components(separatedBy: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" { return Int(parts[1].trimmingCharacters(in: .whitespaces)) }
        }
        return nil
    }
}
