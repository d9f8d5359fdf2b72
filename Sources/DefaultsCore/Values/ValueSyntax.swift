import FoundationEssentials

/// How values are written as text by people, in one place: the words for a boolean, the
/// truth of a string as Foundation reads it, and data as hexadecimal. `defaults`, `defaults
/// settings`, the Settings app's rows and plain editor, and the client's conversions all read
/// and write values through these rules (docs/VALUES.md has them as a table).
///
/// ```swift
/// ValueSyntax.booleanWord("Yes", in: .typeFlag)   // true
/// ValueSyntax.booleanWord("on", in: .typeFlag)    // nil: `defaults -bool` takes Apple's words only
/// ValueSyntax.booleanWord("on", in: .setting)     // true
/// ValueSyntax.boolValue(of: " +01")    // true, as NSString.boolValue
/// try ValueSyntax.data(fromHex: "<48 65 6c>")   // Data("Hel".utf8)
/// ValueSyntax.hex(Data("Hel".utf8))    // "48656c"
/// ```
public enum ValueSyntax {
    /// Where a person types a boolean, which decides the words taken.
    public enum BooleanContext: Sendable, CaseIterable {
        /// `defaults write … -bool`: Apple's words only, as macOS's `defaults` takes them.
        case typeFlag
        /// A switch: `defaults settings`, the Settings app's rows and its plain editor, which
        /// also take the words a switch shows (`on`/`off`) and `1`/`0`.
        case setting
    }

    /// The words for a boolean, true first, and where each pair is taken. Any case, with white
    /// space around, is the same word.
    public static let booleanWords: [(true: String, false: String, contexts: Set<BooleanContext>)] = [
        ("yes", "no", [.typeFlag, .setting]), ("true", "false", [.typeFlag, .setting]),
        ("on", "off", [.setting]), ("1", "0", [.setting]),
    ]

    /// The boolean a typed word stands for where it was typed; nil for any other word.
    public static func booleanWord(_ word: String, in context: BooleanContext) -> Bool? {
        let folded = SystemText.trimmingWhitespace(word).lowercased()
        for pair in booleanWords where pair.contexts.contains(context) {
            if folded == pair.true { return true }
            if folded == pair.false { return false }
        }
        return nil
    }

    /// The words taken in `context`, for messages: `yes/no, true/false, on/off, 1/0`.
    public static func booleanWordList(in context: BooleanContext) -> String {
        booleanWords.filter { $0.contexts.contains(context) }.map { "\($0.true)/\($0.false)" }.joined(separator: ", ")
    }

    /// `NSString.boolValue`, exactly as Foundation on Linux computes it: after white space
    /// (Unicode's, newlines included), `Y`, `y`, `T` or `t` is true; otherwise an optional `+`
    /// or `-`, then zeros, then a digit 1–9 is true, white space allowed between the three. So
    /// `"YES"`, `"true"`, `"1"`, `" -01"` are true; `"NO"`, `"0"`, `""`, `"-yes"`, `"0 0 1"` are
    /// false. `ValueSyntaxTests` holds it to Foundation's own answer on every case.
    public static func boolValue(of text: String) -> Bool {
        var scalars = text.unicodeScalars[...]
        func skipWhiteSpace() { scalars = scalars.drop(while: isWhiteSpace) }
        skipWhiteSpace()
        guard let first = scalars.first else { return false }
        if "YyTt".unicodeScalars.contains(first) { return true }
        if first == "+" || first == "-" { scalars = scalars.dropFirst() }
        skipWhiteSpace()
        scalars = scalars.drop(while: { $0 == "0" })
        skipWhiteSpace()
        guard let digit = scalars.first else { return false }
        return ("1"..."9").contains(digit)
    }

    /// The white space Foundation's `Scanner` skips (`CharacterSet.whitespacesAndNewlines`).
    private static func isWhiteSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200B, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// Data typed as hexadecimal digits, as `defaults` and old-style property lists write it:
    /// optionally inside `<` `>`, white space anywhere, no `0x`, an even number of digits (as
    /// macOS's `defaults write -data` and CoreFoundation's `<…>` require).
    public static func data(fromHex text: String) throws(ValueSyntaxError) -> Data {
        var body = Substring(SystemText.trimmingWhitespace(text))
        if body.hasPrefix("<") && body.hasSuffix(">") && body.count >= 2 { body = body.dropFirst().dropLast() }
        var digits = HexDigits()
        for unit in body.utf16 {
            guard digits.take(unit) else { throw ValueSyntaxError(text: text, expected: "hexadecimal digits without 0x") }
        }
        guard digits.isWhole else { throw ValueSyntaxError(text: text, expected: "an even number of hexadecimal digits") }
        return Data(digits.bytes)
    }

    /// The one reader of data written as hexadecimal digits, fed a UTF-16 unit at a time: by
    /// ``data(fromHex:)`` and by the old-style property-list parser for `<…>`. Digits are ASCII
    /// (`0-9`, `a-f`, `A-F`), two to a byte; white space, as the old-style grammar has it, may
    /// stand anywhere, even between the two digits of a byte.
    package struct HexDigits {
        package private(set) var bytes: [UInt8] = []
        private var highNibble: UInt8?

        package init() {}

        /// Takes a digit or white space; false, taking nothing, for any other unit.
        package mutating func take(_ unit: UInt16) -> Bool {
            if OldStyleParser.isWhitespace(unit) { return true }
            guard let nibble = Self.value(of: unit) else { return false }
            if let high = highNibble {
                bytes.append(high << 4 | nibble)
                highNibble = nil
            } else {
                highNibble = nibble
            }
            return true
        }

        /// False after an odd number of digits: the last byte has only half its digits.
        package var isWhole: Bool { highNibble == nil }

        /// The value of one hexadecimal digit; nil for any other unit.
        package static func value(of unit: UInt16) -> UInt8? {
            switch unit {
            case 0x30...0x39: UInt8(unit - 0x30)
            case 0x41...0x46: UInt8(unit - 0x41 + 10)
            case 0x61...0x66: UInt8(unit - 0x61 + 10)
            default: nil
            }
        }
    }

    /// Data as hexadecimal digits, lowercase, no separators: the text form `data(fromHex:)` reads.
    public static func hex(_ data: some Sequence<UInt8>) -> String { SystemText.hex(data) }
}

/// Text that is not a value of the kind asked for.
public struct ValueSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public var text: String
    public var expected: String

    public init(text: String, expected: String) {
        self.text = text
        self.expected = expected
    }

    public var description: String { "\"\(text)\" is not \(expected)" }
}
