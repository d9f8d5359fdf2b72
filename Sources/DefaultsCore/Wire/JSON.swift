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

/// Literals, for requests written in code: `["op": "get", "domain": "com.example.app"]`.
extension JSON: ExpressibleByDictionaryLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByArrayLiteral
{
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
}
