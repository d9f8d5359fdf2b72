import DefaultsCore
import FoundationEssentials

/// The protocol version this daemon speaks, answered by `hello`.
public enum ProtocolVersion {
    public static let current: Int64 = 1
    public static let serverVersion = "0.1.0"
}

/// A parsed request line: `{"id":7,"op":"set","domain":"com.x","key":"k","value":1}`.
struct Request {
    /// Echoed verbatim in the response; any JSON value.
    var id: JSON?
    /// The operation named by `op`; nil for a name the protocol does not have.
    var operation: OperationName?
    /// Every member of the line, `id` and `op` included, in the order written.
    var parameters: JSONMembers

    /// The op's name as the request wrote it, for messages.
    var op: String { operation?.rawValue ?? parameters.stringValue("op") ?? "" }

    /// Parses a request object. Errors carry the id when one could be read.
    struct Failure: Error {
        var id: JSON?
        var error: DefaultsError
        init(_ id: JSON?, _ error: DefaultsError) {
            self.id = id
            self.error = error
        }
    }

    static func parse(_ members: JSONMembers) -> Result<Request, Failure> {
        let id = members["id"]
        if let operation = OperationName(of: members) {
            return .success(Request(id: id, operation: operation, parameters: members))
        }
        guard let opValue = members["op"] else {
            return .failure(Failure(id, DefaultsError(.missingParameter, "missing \"op\"")))
        }
        guard case .string = opValue else {
            return .failure(Failure(id, DefaultsError(.invalidParameter, "\"op\" must be a string")))
        }
        return .success(Request(id: id, operation: nil, parameters: members))
    }

    // MARK: - Typed parameters

    func has(_ name: StaticString) -> Bool { parameters.hasValue(name) }

    func string(_ name: StaticString) throws(DefaultsError) -> String {
        if let string = parameters.stringValue(name) { return string }
        guard let value = parameters[name], value != .null else {
            throw DefaultsError(.missingParameter, "\(op) needs \"\(name)\"")
        }
        guard case .string(let string) = value else {
            throw DefaultsError(.invalidParameter, "\"\(name)\" must be a string")
        }
        return string
    }

    func optionalString(_ name: StaticString) throws(DefaultsError) -> String? {
        has(name) ? try string(name) : nil
    }

    /// A domain named by parameter `name`, the variant every host sees. A request's `"domain"`
    /// with its `"host"` is read through ``Session/domain(of:)``.
    func domain(_ name: StaticString) throws(DefaultsError) -> DomainName {
        try DomainName(try string(name))
    }

    /// The host named by `"host"` (absent: any host; `"current"`: this machine's by-host domains).
    func host() throws(DefaultsError) -> DomainName.Host {
        guard let host = DomainName.Host(wire: parameters["host"]) else {
            throw DefaultsError(.invalidParameter, DomainName.Host.invalidMessage)
        }
        return host
    }

    func key(_ name: StaticString = "key") throws(DefaultsError) -> String {
        let key = try string(name)
        try DefaultsKey.validate(key)
        return key
    }

    func bool(_ name: StaticString) throws(DefaultsError) -> Bool? {
        guard let parameter = parameters[name] else { return nil }
        guard case .bool(let flag) = parameter else {
            throw DefaultsError(.invalidParameter, "\"\(name)\" must be true or false")
        }
        return flag
    }

    /// An integer parameter within `range`; nil when absent.
    func integer(_ name: StaticString, in range: ClosedRange<Int64>) throws(DefaultsError) -> Int64? {
        guard let parameter = parameters[name], parameter != .null else { return nil }
        guard case .integer(let number) = parameter, range.contains(number) else {
            throw DefaultsError(.invalidParameter, "\"\(name)\" must be an integer from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    /// A time parameter, as RFC 3339 text (`"2026-11-27T09:00:00Z"`); nil when absent.
    func time(_ name: StaticString) throws(DefaultsError) -> Date? {
        guard let text = try optionalString(name) else { return nil }
        guard let time = RFC3339.parse(text) else {
            throw DefaultsError(.invalidParameter, "\"\(name)\" must be an RFC 3339 time, such as \"2026-11-27T09:00:00Z\"")
        }
        return time
    }

    func value(_ name: StaticString = "value") throws(DefaultsError) -> PlistValue {
        if let value = parameters.scalarValue(name) { return value }
        guard let json = parameters[name] else { throw DefaultsError(.missingParameter, "\(op) needs \"\(name)\"") }
        return try WireValue.decode(json)
    }

    /// A parameter that maps keys to values (`"set"`, `"values"`, `"defaults"`). Its members are keys,
    /// so unlike a dictionary *value* it is never read as a `$date`/`$data`/`$dict` wrapper.
    func keyedValues(_ name: StaticString) throws(DefaultsError) -> [String: PlistValue] {
        guard let json = parameters[name], json != .null else {
            throw DefaultsError(.missingParameter, "\(op) needs \"\(name)\"")
        }
        guard case .object(let members) = json else {
            throw DefaultsError(.invalidParameter, "\"\(name)\" must be an object of key → value")
        }
        var result: [String: PlistValue] = [:]
        result.reserveCapacity(members.count)
        for (key, member) in members {
            try DefaultsKey.validate(key)
            result[key] = try WireValue.decode(member)
        }
        return result
    }

    /// Preconditions (`"expect": {"count": 3, "name": null}`): each key's expected value, nil
    /// (JSON `null`) for "absent".
    func expectedValues(_ name: StaticString) throws(DefaultsError) -> [String: PlistValue?] {
        guard case .object(let members)? = parameters[name] else {
            throw DefaultsError(.invalidParameter, "\"\(name)\" must be an object of key → expected value (null: absent)")
        }
        var result: [String: PlistValue?] = [:]
        result.reserveCapacity(members.count)
        for (key, member) in members {
            try DefaultsKey.validate(key)
            result[key] = member == .null ? .some(nil) : .some(try WireValue.decode(member))
        }
        return result
    }

    func stringArray(_ name: StaticString) throws(DefaultsError) -> [String]? {
        guard let parameter = parameters[name] else { return nil }
        guard case .array(let elements) = parameter else {
            throw DefaultsError(.invalidParameter, "\"\(name)\" must be an array of strings")
        }
        var result: [String] = []
        for element in elements {
            guard case .string(let string) = element else {
                throw DefaultsError(.invalidParameter, "\"\(name)\" must be an array of strings")
            }
            result.append(string)
        }
        return result
    }

    /// The domains named by parameter `name`, each of the variant `host` names.
    func domains(_ name: StaticString, host: DomainName.Host = .any) throws(DefaultsError) -> [DomainName]? {
        guard let names = try stringArray(name) else { return nil }
        var result: [DomainName] = []
        for name in names { result.append(try DomainName(name, host: host)) }
        return result
    }
}
