import DefaultsCore
import Foundation

// PlistValue → Swift values: what the typed getters answer, as UserDefaults answers them.
extension PlistValue {
    /// The value as `UserDefaults.object(forKey:)` returns it on Linux: Swift-native `String`, `Int`,
    /// `Double`, `Bool`, `Date`, `Data`, `[Any]` and `[String: Any]`, never `NSNumber`.
    public var foundationValue: Any {
        switch self {
        case .string(let s): s
        case .integer(let i): Int(i)
        case .real(let d): d
        case .bool(let b): b
        case .date(let d): d
        case .data(let d): d
        case .array(let a): a.map(\.foundationValue)
        case .dictionary(let d): d.mapValues(\.foundationValue)
        }
    }
}

/// The typed getters' conversions, as Apple documents them (and swift-corelibs-foundation 6.x does):
/// numbers become strings, numeric strings become numbers, `"YES"`/`"true"`/`"1"` become true,
/// `stringArray` converts nothing, `url` reads a path.
enum Conversions {
    static func string(_ value: PlistValue?) -> String? {
        switch value {
        case .string(let s)?: s
        case .integer(let i)?: String(i)
        case .real(let d)?: numberString(d)
        case .bool(let b)?: b ? "1" : "0"
        default: nil
        }
    }

    static func integer(_ value: PlistValue?) -> Int {
        switch value {
        case .integer(let i)?: Int(i)
        case .real(let d)?: truncated(d)
        case .bool(let b)?: b ? 1 : 0
        case .string(let s)?: scanInteger(s)
        default: 0
        }
    }

    static func double(_ value: PlistValue?) -> Double {
        switch value {
        case .real(let d)?: d
        case .integer(let i)?: Double(i)
        case .bool(let b)?: b ? 1 : 0
        case .string(let s)?: scanDouble(s) ?? 0
        default: 0
        }
    }

    static func float(_ value: PlistValue?) -> Float { Float(double(value)) }

    static func bool(_ value: PlistValue?) -> Bool {
        switch value {
        case .bool(let b)?: b
        case .integer(let i)?: i != 0
        case .real(let d)?: d != 0
        case .string(let s)?: ValueSyntax.boolValue(of: s)
        default: false
        }
    }

    static func array(_ value: PlistValue?) -> [Any]? {
        if case .array(let a)? = value { return a.map(\.foundationValue) }
        return nil
    }

    static func dictionary(_ value: PlistValue?) -> [String: Any]? {
        if case .dictionary(let d)? = value { return d.mapValues(\.foundationValue) }
        return nil
    }

    static func data(_ value: PlistValue?) -> Data? {
        if case .data(let d)? = value { return d }
        return nil
    }

    /// Only an array of strings; numbers are not converted (Apple: "NSNumbers are not converted").
    static func stringArray(_ value: PlistValue?) -> [String]? {
        guard case .array(let elements)? = value else { return nil }
        var result: [String] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let s) = element else { return nil }
            result.append(s)
        }
        return result
    }

    /// A path (with `~` expanded) becomes a file URL; a string with a scheme (`https://…`, as
    /// `set(_: URL?)` stores other URLs) becomes that URL.
    static func url(_ value: PlistValue?) -> URL? {
        guard case .string(let s)? = value, !s.isEmpty else { return nil }
        if hasScheme(s), let url = URL(string: s) { return url }
        return URL(fileURLWithPath: NSString(string: s).expandingTildeInPath)
    }

    // MARK: -

    static func numberString(_ d: Double) -> String {
        if d == d.rounded(.towardZero), abs(d) < 1e15 { return String(Int64(d)) }
        return d.description
    }

    private static func truncated(_ d: Double) -> Int {
        if d.isNaN { return 0 }
        if d >= 9.2233720368547758e18 { return .max }
        if d <= -9.2233720368547758e18 { return .min }
        return Int(d)
    }

    private static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (0x09...0x0D).contains(byte)
    }

    /// `NSString.integerValue`: leading white space, an optional sign, then digits; 0 when none.
    static func scanInteger(_ s: String) -> Int {
        var bytes = s.utf8[...]
        while let first = bytes.first, isSpace(first) { bytes = bytes.dropFirst() }
        var negative = false
        if let first = bytes.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
            negative = first == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        var result = 0
        var overflow = false
        for byte in bytes {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { break }
            let (times, o1) = result.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            if o1 || o2 { overflow = true; break }
            result = sum
        }
        if overflow { return negative ? .min : .max }
        return negative ? -result : result
    }

    /// `NSString.doubleValue`: the longest leading decimal number after white space.
    static func scanDouble(_ s: String) -> Double? {
        let bytes = Array(s.utf8)
        var index = 0
        while index < bytes.count, isSpace(bytes[index]) { index += 1 }
        let start = index
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") { index += 1 }
        var digits = 0
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; digits += 1 }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1; digits += 1 }
        }
        guard digits > 0 else { return nil }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            var exponent = index + 1
            if exponent < bytes.count, bytes[exponent] == UInt8(ascii: "-") || bytes[exponent] == UInt8(ascii: "+") { exponent += 1 }
            var exponentDigits = 0
            while exponent < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[exponent]) {
                exponent += 1
                exponentDigits += 1
            }
            if exponentDigits > 0 { index = exponent }
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else { return nil }
        return value
    }

    private static func hasScheme(_ s: String) -> Bool {
        guard let colon = s.utf8.firstIndex(of: UInt8(ascii: ":")) else { return false }
        let scheme = s.utf8[..<colon]
        guard let first = scheme.first, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(first | 0x20) else { return false }
        return scheme.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
        }
    }
}
