import FoundationEssentials

/// One property-list value: the eight types of Apple's property lists.
///
/// Integer, real and bool are distinct cases and never turn into one another,
/// neither on the wire (see ``WireValue``) nor on disk (see ``PropertyListFile``).
///
/// ```swift
/// let warp: PlistValue = ["warp": true, "warpFactor": 5, "ratio": 0.5]
/// if case .dictionary(let d) = warp, case .integer(let f)? = d["warpFactor"] { print(f) } // 5
/// ```
public enum PlistValue: Sendable, Hashable {
    case string(String)
    /// A 64-bit signed integer (`<integer>`).
    case integer(Int64)
    /// A finite double (`<real>`). NaN and infinities are refused at every boundary.
    case real(Double)
    case bool(Bool)
    case date(Date)
    case data(Data)
    case array([PlistValue])
    /// A dictionary with string keys.
    case dictionary([String: PlistValue])

    /// The property-list type name, as `defaults read-type` and error messages say it.
    public var typeName: String {
        switch self {
        case .string: "string"
        case .integer: "integer"
        case .real: "real"
        case .bool: "boolean"
        case .date: "date"
        case .data: "data"
        case .array: "array"
        case .dictionary: "dictionary"
        }
    }
}

extension PlistValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .real(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: PlistValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, PlistValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
