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

    /// The value's type.
    public var plistType: PlistType {
        switch self {
        case .string: .string
        case .integer: .integer
        case .real: .real
        case .bool: .boolean
        case .date: .date
        case .data: .data
        case .array: .array
        case .dictionary: .dictionary
        }
    }

    /// The name of the value's type (``PlistType/name``).
    public var typeName: String { plistType.name }
}

/// The eight property-list types, and the one set of names every message gives them: a Settings
/// bundle's diagnostics, errors, and `defaults read-type` (which says `float` for a real, as
/// macOS's does; `DefaultsTool` keeps that one difference). They are the names of Apple's
/// property-list documentation: `boolean`, `integer`, `dictionary`, never `bool`, `int`, `dict`
/// (docs/VALUES.md). The wire has no type names: JSON's own types and the `$date`, `$data` and
/// `$dict` tags (``WireValue``).
///
/// ```swift
/// PlistValue.bool(true).plistType.name          // "boolean"
/// PlistType.integer.nameWithArticle             // "an integer"
/// PlistType(rawValue: "dictionary")             // .dictionary
/// ```
public enum PlistType: String, Sendable, Hashable, CaseIterable {
    case string, integer, real, boolean, date, data, array, dictionary

    /// The type's name.
    public var name: String { rawValue }

    /// The name in a sentence: `a string`, `an integer`, `an array`, `data`.
    public var nameWithArticle: String {
        switch self {
        case .data: name
        case .integer, .array: "an \(name)"
        case .string, .real, .boolean, .date, .dictionary: "a \(name)"
        }
    }

    /// Array and dictionary: the types whose values hold other values.
    public var isContainer: Bool { self == .array || self == .dictionary }
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
