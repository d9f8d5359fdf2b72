import FoundationEssentials

/// The old-style (OpenStep) property-list grammar that `.strings` files use, ported from
/// CoreFoundation's CFOldStylePList.c.
///
/// It reads old-style property lists for ``PropertyListFile`` (`import`'s text), and `.strings`
/// files for the Settings bundles, whose diagnostics need what a plain reader hides: the line of a syntax error, duplicate keys (CF keeps
/// the last one silently), an empty key, and text after the last entry that CF silently drops.
/// Owned by the single `parse` call that creates it.
package struct OldStyleParser {
    package struct Failure: Error, Hashable {
        package var message: String
        package var line: Int
    }

    package struct Duplicate: Hashable {
        package var key: String
        package var firstLine: Int
        package var line: Int
    }

    /// The parsed object, with what the grammar accepts silently but a diagnostic should mention.
    package struct Parsed {
        package var value: PlistValue
        package var duplicates: [Duplicate] = []
        package var emptyKeyLines: [Int] = []
        /// The line of text after the last entry that cannot start an entry (ignored, as CF does).
        package var trailingTextLine: Int?
    }

    private let units: [UInt16]
    private let newlineOffsets: [Int]
    private var position = 0
    /// How many arrays and dictionaries the parser is inside of; 0 in a `.strings` file's table.
    private var depth = 0
    private var duplicates: [Duplicate] = []
    private var emptyKeyLines: [Int] = []

    private init(_ text: String) {
        let units = Array(text.utf16)
        self.units = units
        newlineOffsets = units.indices.filter { units[$0] == 0x0A }
    }

    /// Parses a whole file. Its top level is one object, or, as in every `.strings` file, the
    /// content of a dictionary without braces. Whitespace and comments only make an empty dictionary.
    package static func parse(_ text: String) -> Result<Parsed, Failure> {
        var parser = OldStyleParser(text)
        do throws(Failure) {
            guard parser.skipWhitespaceAndComments() else { return .success(Parsed(value: .dictionary([:]))) }
            let start = parser.position
            let first = try parser.requiredObject()
            guard parser.skipWhitespaceAndComments() else {
                return .success(
                    Parsed(value: first, duplicates: parser.duplicates, emptyKeyLines: parser.emptyKeyLines))
            }
            guard case .string = first else {
                throw Failure(
                    message: "unexpected text after the property list", line: parser.line(at: parser.position))
            }
            // A string followed by more text: CF starts again and reads dictionary content.
            parser.position = start
            parser.duplicates = []
            parser.emptyKeyLines = []
            let dictionary = try parser.dictionaryContent()
            let trailing = parser.skipWhitespaceAndComments() ? parser.line(at: parser.position) : nil
            return .success(
                Parsed(
                    value: .dictionary(dictionary), duplicates: parser.duplicates, emptyKeyLines: parser.emptyKeyLines,
                    trailingTextLine: trailing))
        } catch {
            return .failure(error)
        }
    }

    // MARK: Lexical

    private static let slash: UInt16 = 0x2F, star: UInt16 = 0x2A, backslash: UInt16 = 0x5C
    private static let doubleQuote: UInt16 = 0x22, singleQuote: UInt16 = 0x27

    /// 1-based line of a UTF-16 offset.
    func line(at offset: Int) -> Int {
        var low = 0
        var high = newlineOffsets.count
        while low < high {
            let mid = (low + high) / 2
            if newlineOffsets[mid] < offset { low = mid + 1 } else { high = mid }
        }
        return low + 1
    }

    /// The grammar's white space, which data's hexadecimal digits may also hold.
    static func isWhitespace(_ unit: UInt16) -> Bool {
        (0x09...0x0D).contains(unit) || unit == 0x20 || unit == 0x2028 || unit == 0x2029
    }

    private static func isLineEnd(_ unit: UInt16) -> Bool {
        unit == 0x0A || unit == 0x0D || unit == 0x2028 || unit == 0x2029
    }

    /// `[A-Za-z0-9_$/:.-]`, the characters of an unquoted string.
    private static func isUnquoted(_ unit: UInt16) -> Bool {
        switch unit {
        case 0x41...0x5A, 0x61...0x7A, 0x30...0x39, 0x5F, 0x24, 0x2F, 0x3A, 0x2E, 0x2D: true
        default: false
        }
    }

    /// Skips whitespace, `//` and `/* */` comments; false at the end of the text.
    private mutating func skipWhitespaceAndComments() -> Bool {
        while position < units.count {
            let unit = units[position]
            if Self.isWhitespace(unit) {
                position += 1
            } else if unit == Self.slash, position + 1 < units.count, units[position + 1] == Self.slash {
                position += 2
                while position < units.count && !Self.isLineEnd(units[position]) { position += 1 }
            } else if unit == Self.slash, position + 1 < units.count, units[position + 1] == Self.star {
                position += 2
                while position < units.count
                    && !(units[position] == Self.star && position + 1 < units.count
                        && units[position + 1] == Self.slash)
                {
                    position += 1
                }
                position = min(position + 2, units.count)
            } else {
                return true
            }
        }
        return false
    }

    // MARK: Grammar

    private mutating func object(required: Bool) throws(Failure) -> PlistValue? {
        guard skipWhitespaceAndComments() else {
            if required { throw Failure(message: "unexpected end of file", line: line(at: position)) }
            return nil
        }
        let start = position
        switch units[position] {
        case 0x7B:  // {
            position += 1
            try enterContainer()
            let dictionary = try dictionaryContent()
            depth -= 1
            try expect(0x7D) { "expected '}' to close the dictionary opened on line \($0.line(at: start))" }
            return .dictionary(dictionary)
        case 0x28:  // (
            position += 1
            try enterContainer()
            var items: [PlistValue] = []
            while let item = try object(required: false) {
                items.append(item)
                guard skipWhitespaceAndComments() else { break }
                guard units[position] == 0x2C else { break }
                position += 1
            }
            depth -= 1
            try expect(0x29) { "expected ',' or ')' in the array opened on line \($0.line(at: start))" }
            return .array(items)
        case 0x3C:  // <
            return try data(openedAt: start)
        case Self.doubleQuote, Self.singleQuote:
            return .string(try quotedString())
        case let unit where Self.isUnquoted(unit):
            return .string(unquotedString())
        case let unit:
            if required {
                throw Failure(message: "unexpected character \(Self.describe(unit))", line: line(at: position))
            }
            return nil
        }
    }

    /// One level deeper, refused past ``PropertyListLimits/maximumDepth``: the grammar is read
    /// by recursion, and hostile text must not exhaust the stack.
    private mutating func enterContainer() throws(Failure) {
        depth += 1
        guard depth <= PropertyListLimits.maximumDepth else {
            throw Failure(message: "nested more than \(PropertyListLimits.maximumDepth) deep", line: line(at: position))
        }
    }

    /// Consumes `unit` as the next character after whitespace and comments, or fails on
    /// `failureLine` (by default the line where `unit` was expected) with the message `message`
    /// makes. The message is made, and the lines it names are looked up, only on failure; it is
    /// given the parser to read them from.
    private mutating func expect(
        _ unit: UInt16, line failureLine: Int? = nil, _ message: (OldStyleParser) -> String
    ) throws(Failure) {
        guard skipWhitespaceAndComments(), units[position] == unit else {
            throw Failure(message: message(self), line: failureLine ?? line(at: position))
        }
        position += 1
    }

    private mutating func requiredObject() throws(Failure) -> PlistValue {
        guard let value = try object(required: true) else {
            throw Failure(message: "expected a value", line: line(at: position))
        }
        return value
    }

    private mutating func dictionaryContent() throws(Failure) -> [String: PlistValue] {
        var dictionary: [String: PlistValue] = [:]
        var keyLines: [String: Int] = [:]
        while let (key, keyLine) = try entryKey() {
            guard skipWhitespaceAndComments() else {
                throw Failure(message: "missing ';' after the key \"\(key)\"", line: keyLine)
            }
            let value: PlistValue
            switch units[position] {
            case 0x3B:  // `key;` means `key = key;`
                value = .string(key)
            case 0x3D:  // =
                position += 1
                value = try requiredObject()
            case let unit:
                throw Failure(
                    message: "expected '=' or ';' after the key \"\(key)\", found \(Self.describe(unit))",
                    line: line(at: position))
            }
            if let firstLine = keyLines[key] {
                duplicates.append(Duplicate(key: key, firstLine: firstLine, line: keyLine))
            }
            if key.isEmpty && depth == 0 { emptyKeyLines.append(keyLine) }
            keyLines[key] = keyLine
            dictionary[key] = value
            try expect(0x3B, line: keyLine) { _ in "missing ';' after the entry \"\(key)\"" }
        }
        return dictionary
    }

    /// The next key and its line, or nil when what follows cannot start a key.
    private mutating func entryKey() throws(Failure) -> (String, Int)? {
        guard skipWhitespaceAndComments() else { return nil }
        let keyLine = line(at: position)
        switch units[position] {
        case Self.doubleQuote, Self.singleQuote: return (try quotedString(), keyLine)
        case let unit where Self.isUnquoted(unit): return (unquotedString(), keyLine)
        default: return nil
        }
    }

    private mutating func unquotedString() -> String {
        let start = position
        while position < units.count && Self.isUnquoted(units[position]) { position += 1 }
        return String(decoding: units[start..<position], as: UTF16.self)
    }

    /// A string in `"` or `'` with CF's escapes: `\a \b \f \n \r \t \v`, `\U` + up to four hex
    /// digits (a UTF-16 unit, so surrogate pairs take two), `\` + one to three octal digits (a byte),
    /// and `\` before anything else stands for that character (`\\`, `\"`, a backslash-newline).
    private mutating func quotedString() throws(Failure) -> String {
        let quote = units[position]
        let startLine = line(at: position)
        position += 1
        var result: [UInt16] = []
        while position < units.count && units[position] != quote {
            let unit = units[position]
            position += 1
            guard unit == Self.backslash else {
                result.append(unit)
                continue
            }
            guard position < units.count else { break }
            let escaped = units[position]
            position += 1
            switch escaped {
            case 0x30...0x37:
                var byte = escaped - 0x30
                for _ in 0..<2 where position < units.count && (0x30...0x37).contains(units[position]) {
                    byte = byte * 8 + (units[position] - 0x30)
                    position += 1
                }
                // CF maps bytes above 127 through the NeXTSTEP encoding; Latin-1 is used here
                // (identical for ASCII, which is all that real files escape this way).
                result.append(byte & 0xFF)
            case 0x55:  // U
                var value: UInt16 = 0
                for _ in 0..<4 {
                    guard position < units.count, let digit = ValueSyntax.HexDigits.value(of: units[position]) else { break }
                    value = value &* 16 &+ UInt16(digit)
                    position += 1
                }
                result.append(value)
            case 0x61: result.append(0x07)
            case 0x62: result.append(0x08)
            case 0x66: result.append(0x0C)
            case 0x6E: result.append(0x0A)
            case 0x72: result.append(0x0D)
            case 0x74: result.append(0x09)
            case 0x76: result.append(0x0B)
            default: result.append(escaped)
            }
        }
        guard position < units.count else {
            throw Failure(message: "unterminated quoted string starting on line \(startLine)", line: startLine)
        }
        position += 1
        return String(decoding: result, as: UTF16.self)
    }

    /// `<…>`: hexadecimal digits, read by ``ValueSyntax/HexDigits`` as typed data is, so an odd
    /// number of digits is refused here as CoreFoundation refuses it.
    private mutating func data(openedAt start: Int) throws(Failure) -> PlistValue {
        position += 1
        var digits = ValueSyntax.HexDigits()
        while position < units.count && units[position] != 0x3E {
            guard digits.take(units[position]) else {
                throw Failure(message: "invalid character \(Self.describe(units[position])) in data", line: line(at: position))
            }
            position += 1
        }
        guard position < units.count else {
            throw Failure(message: "malformed data opened on line \(line(at: start))", line: line(at: start))
        }
        guard digits.isWhole else {
            throw Failure(message: "an odd number of hexadecimal digits in the data opened on line \(line(at: start))", line: line(at: start))
        }
        position += 1
        return .data(Data(digits.bytes))
    }

    private static func describe(_ unit: UInt16) -> String {
        if let scalar = Unicode.Scalar(unit), scalar.value >= 0x20, scalar.value != 0x7F {
            return "'\(Character(scalar))'"
        }
        return "U+" + String(unit, radix: 16, uppercase: true)
    }
}
