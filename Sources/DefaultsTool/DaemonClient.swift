import DefaultsCore
import FoundationEssentials
import Glibc
import LineSocket

/// The `defaults` tool's connection to defaultsd: one blocking request at a time.
///
/// A short-lived command wants each answer before it goes on, so it uses the blocking
/// `LineSocket` rather than an event loop.
public final class DaemonClient {
    public let socketPath: String
    private let socket: LineSocket

    /// A daemon's refusal, with its protocol error code.
    public struct Refusal: Error {
        public var error: DefaultsError
        /// The wire code (`too_large`, ...).
        public var code: String { error.code.rawValue }
        public var message: String { error.message }
    }

    public init(socketPath: String) throws(ToolError) {
        self.socketPath = socketPath
        do {
            socket = try LineSocket(path: socketPath)
        } catch let refusal as DefaultsError {
            throw ToolError.daemonUnavailable(refusal.message)
        } catch {
            throw ToolError.daemonUnavailable(
                "defaultsd is not running at \(socketPath); start it with `systemctl --user start defaultsd.socket`, run `defaultsd`, or `make run` in a checkout of defaultsd")
        }
    }

    /// Sends one request built by `body` (which writes its members after `op`) and returns the answer.
    @discardableResult
    public func call(_ op: OperationName, timeout: Double = 60, _ body: (inout JSONWriter) -> Void = { _ in }) throws -> JSON {
        var writer = JSONWriter()
        writer.beginObject()
        writer.operation(op)
        body(&writer)
        writer.endObject()
        let line: String
        do {
            try socket.send(String(decoding: writer.bytes, as: UTF8.self))
            line = try socket.readResponse(timeout: timeout)
        } catch {
            throw ToolError.daemonUnavailable("defaultsd at \(socketPath) closed the connection: \(error)")
        }
        let answer = try JSONParser.parse(line)
        if let error = DefaultsError(answer: answer) { throw Refusal(error: error) }
        return answer
    }

    /// The values of a domain (empty when it does not exist).
    public func values(of domain: DomainName) throws -> [String: PlistValue] {
        let answer = try call(.get) { $0.domain(domain) }
        guard let json = answer["value"], case .dictionary(let values) = try WireValue.decode(json) else { return [:] }
        return values
    }

    /// One value, or nil.
    public func value(of domain: DomainName, key: String) throws -> PlistValue? {
        let answer = try call(.get) { $0.domain(domain); $0.key("key"); $0.string(key) }
        guard let json = answer["value"], json != .null else { return nil }
        return try WireValue.decode(json)
    }

    /// The domains that hold values, of the variant `host` names.
    public func domains(host: DomainName.Host = .any) throws -> [DomainName] {
        let answer = try call(.domains) { $0.host(host) }
        guard case .array(let names)? = answer["domains"] else { return [] }
        return names.compactMap { if case .string(let s) = $0 { try? DomainName(s, host: host) } else { nil } }
    }

    /// Reads the next event line (for `watch`); nil when the daemon closed the connection.
    public func nextEvent() -> String? {
        do { return try socket.readEvent(timeout: .infinity) } catch { return nil }
    }
}
