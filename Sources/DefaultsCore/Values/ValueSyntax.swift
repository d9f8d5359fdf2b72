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
    /// optionally inside `<` `>`, with white space anywhere, no `0x`. An odd count makes the
    /// first digit a byte of its own.
    public static func data(fromHex text: String) throws(ValueSyntaxError) -> Data {
        var body = Substring(SystemText.trimmingWhitespace(text))
        if body.hasPrefix("<") && body.hasSuffix(">") && body.count >= 2 { body = body.dropFirst().dropLast() }
        var nibbles: [UInt8] = []
        for character in body where !character.isWhitespace {
            guard let value = character.hexDigitValue else { throw ValueSyntaxError(text: text, expected: "hexadecimal digits without 0x") }
            nibbles.append(UInt8(value))
        }
        if nibbles.count % 2 == 1 { nibbles.insert(0, at: 0) }
        return Data(stride(from: 0, to: nibbles.count, by: 2).map { nibbles[$0] << 4 | nibbles[$0 + 1] })
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
