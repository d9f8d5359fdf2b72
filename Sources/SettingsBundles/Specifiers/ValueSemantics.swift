import DefaultsCore
import FoundationEssentials

/// How Settings compares and shows values. It works on Foundation objects, so a stored value
/// matches a `TrueValue` or one of `Values` by `-isEqual:`: numbers compare numerically across
/// integer, real and bool (`true == 1 == 1.0`), and a string never equals a number.
extension PlistValue {
    /// `-[NSObject isEqual:]` between two property-list objects.
    ///
    /// ```swift
    /// PlistValue.bool(true).isSettingsEqual(.integer(1)) // true
    /// PlistValue.string("1").isSettingsEqual(.integer(1)) // false
    /// ```
    public func isSettingsEqual(_ other: PlistValue) -> Bool {
        switch (self, other) {
        case (.integer(let a), .integer(let b)): return a == b
        case (.string(let a), .string(let b)):
            // NSString compares UTF-16 units literally; Swift's == would also equate canonically
            // equivalent strings, which Settings does not.
            return a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.date(let a), .date(let b)): return a == b
        case (.data(let a), .data(let b)): return a == b
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.isSettingsEqual($1) }
        case (.dictionary(let a), .dictionary(let b)):
            return a.count == b.count && a.allSatisfy { key, value in b[key].map(value.isSettingsEqual) ?? false }
        default:
            guard let a = numberValue, let b = other.numberValue else { return false }
            return a == b
        }
    }

    /// The value as an `NSNumber` would give it: integer, real and bool are numbers.
    var numberValue: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .real(let d): d
        case .bool(let b): b ? 1 : 0
        default: nil
        }
    }

    /// A number a slider can hold: an integer or a real, never a bool.
    var sliderNumber: Double? {
        switch self {
        case .integer(let i): Double(i)
        case .real(let d): d
        default: nil
        }
    }

    /// `-boolValue` as Settings uses it for a toggle whose value is neither its TrueValue nor its
    /// FalseValue: numbers are true when non-zero; a string by ``ValueSyntax/boolValue(of:)``
    /// (so `"YES"` is on and `"NO"` is off).
    public var settingsBoolValue: Bool {
        switch self {
        case .bool(let b): return b
        case .integer(let i): return i != 0
        case .real(let d): return d != 0
        case .string(let s): return ValueSyntax.boolValue(of: s)
        default: return false
        }
    }

    /// The value as a row shows it: strings as they are, numbers without a needless `.0`.
    public var displayText: String {
        switch self {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .real(let d): return Self.format(d)
        case .bool(let b): return b ? "true" : "false"
        case .date(let d): return RFC3339.format(d)
        case .data(let d): return "<" + SystemText.hex(d) + ">"
        case .array(let a): return "(" + a.map(\.quotedText).joined(separator: ", ") + ")"
        case .dictionary(let d):
            return "{" + d.sorted { $0.key < $1.key }.map { "\"\($0.key)\" = \($0.value.quotedText)" }.joined(separator: "; ") + "}"
        }
    }

    /// The value as a message quotes it: strings in double quotes, everything else as `displayText`.
    public var quotedText: String {
        if case .string(let s) = self { return "\"" + s + "\"" }
        return displayText
    }

    /// `5` for 5.0, `0.5` for 0.5: slider bounds read as people write them.
    static func format(_ number: Double) -> String {
        if number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return String(number)
    }

    /// `a string`, `an integer`, `data`: the value's type in a sentence, named as every message
    /// names it (``PlistType``).
    var typeWithArticle: String { plistType.nameWithArticle }

    /// `string "YES"`, `integer 0`: a value with its type, for diagnostics.
    var typedText: String { "\(plistType.name) \(quotedText)" }

    var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    var arrayValue: [PlistValue]? {
        if case .array(let a) = self { return a }
        return nil
    }
}
