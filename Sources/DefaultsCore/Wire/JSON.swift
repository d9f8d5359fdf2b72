/// A parsed JSON value that keeps integers and reals apart by their spelling:
/// a number with `.`, `e` or `E` is a real, any other number an integer.
///
/// ```swift
/// let json = try JSONParser.parse(#"{"op":"get","value":5.0}"#)
/// json["value"] // .real(5.0), never .integer(5)
/// ```
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case real(Double)
    case string(String)
    case array([JSON])
    /// Duplicate keys keep the last value.
    case object([String: JSON])
    /// A number that is valid JSON but has no exact representation here
    /// (an integer outside Int64, a real that overflows to infinity). Kept as written.
    case unrepresentableNumber(String)

    public subscript(key: String) -> JSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}

/// The members of one JSON object in the order written, looked up by a linear scan.
///
/// A request line has half a dozen members and each is read once or twice, so a scan beats
/// building and hashing a dictionary. As with ``JSON/object(_:)``, a repeated name means the
/// last one.
///
/// ```swift
/// let members = try JSONParser.parseObjectMembers(Array(#"{"op":"get","op":"set"}"#.utf8))
/// members?["op"] // .string("set")
/// ```
public struct JSONMembers: Sendable, Equatable {
    public struct Member: Sendable, Equatable {
        public var name: String
        public var value: JSON
    }

    public private(set) var members: [Member] = []

    public init() {
        members.reserveCapacity(8)  // a request's members fit; growing one by one reallocates
    }

    public init(_ pairs: KeyValuePairs<String, JSON>) {
        for (name, value) in pairs { append(name, value) }
    }

    public mutating func append(_ name: String, _ value: JSON) {
        members.append(Member(name: name, value: value))
    }

    /// Empties the table but keeps its storage for the next request.
    public mutating func removeAll() { members.removeAll(keepingCapacity: true) }

    public subscript(name: String) -> JSON? {
        var index = members.endIndex
        while index > members.startIndex {
            index -= 1
            if members[index].name == name { return members[index].value }
        }
        return nil
    }
}
