/// Why a line is not accepted as JSON.
public enum JSONParseError: Error, Sendable, Hashable {
    /// Not valid JSON; the message names the first problem and its byte offset.
    case syntax(String)
    /// A string holds bytes that are not valid UTF-8.
    case invalidUTF8(offset: Int)

    public var defaultsError: DefaultsError {
        switch self {
        case .syntax(let message): DefaultsError(.badJSON, message)
        case .invalidUTF8(let offset): DefaultsError(.invalidUTF8, "the line is not valid UTF-8 (byte \(offset))")
        }
    }
}

/// A strict RFC 8259 parser that produces ``JSON``.
///
/// Written by hand because Foundation's `JSONSerialization` and `JSONDecoder` cannot tell
/// `1.0` from `1` (both become the same NSNumber), and the protocol must keep integer,
/// real and bool apart. It also reads straight from the connection's bytes without
/// building an intermediate `Data`, which keeps request parsing cheap.
///
/// ```swift
/// let json = try JSONParser.parse(Array(#"[1, 1.0, true]"#.utf8))
/// ```
public struct JSONParser: ~Copyable {
    /// Deeper nesting is refused rather than risking the stack.
    public static let maximumDepth = 512

    private let bytes: UnsafeRawBufferPointer
    /// The deepest nesting taken: ``maximumDepth`` for what comes from outside.
    private let depthLimit: Int
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeRawBufferPointer, depthLimit: Int = JSONParser.maximumDepth) {
        self.bytes = bytes
        self.depthLimit = depthLimit
    }

    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSON {
        var parser = JSONParser(bytes)
        return try parser.parseWhole()
    }

    /// Reads back what ``JSONWriter`` wrote here, at whatever depth: the value it was written
    /// from was already held that deep, so no nesting limit applies (``WireValue/json(_:)``).
    static func parseWritten(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSON {
        var parser = JSONParser(bytes, depthLimit: .max)
        return try parser.parseWhole()
    }

    /// One value and nothing after it but white space.
    private mutating func parseWhole() throws(JSONParseError) -> JSON {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        if index != bytes.count { throw error("unexpected data after the JSON value") }
        return value
    }

    /// Parses a line that should hold one object, keeping its top-level members in order
    /// instead of building a dictionary (the request path). Valid JSON that is not an object
    /// gives nil.
    public static func parseObjectMembers(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSONMembers? {
        var members = JSONMembers()
        return try parseObjectMembers(bytes, into: &members) ? members : nil
    }

    /// Checks a line that should hold one object and finds its top-level members in
    /// `members`, which are decoded only when asked for (the request path: a connection reuses
    /// one table for all its requests). Valid JSON that is not an object gives false.
    public static func parseObjectMembers(
        _ bytes: UnsafeRawBufferPointer, into members: inout JSONMembers
    ) throws(JSONParseError) -> Bool {
        var parser = JSONParser(bytes)
        parser.skipWhitespace()
        guard parser.peek() == UInt8(ascii: "{") else {
            _ = try parser.parseValue()
            parser.skipWhitespace()
            if parser.index != bytes.count { throw parser.error("unexpected data after the JSON value") }
            return false
        }
        members.start(bytes)
        try parser.readObject { parser throws(JSONParseError) in
            let name = parser.index
            let nameIsPlain = try parser.scanStringIsPlain()
            let nameEnd = parser.index
            try parser.expectColon()
            let value = parser.index
            let kind = try parser.checkValue()
            members.append(JSONMembers.Span(
                name: name..<nameEnd, nameIsPlain: nameIsPlain, value: value..<parser.index, kind: kind))
        }
        parser.skipWhitespace()
        if parser.index != bytes.count { throw parser.error("unexpected data after the JSON value") }
        return true
    }

    public static func parseObjectMembers(_ bytes: [UInt8]) throws(JSONParseError) -> JSONMembers? {
        try withBytes(of: bytes, parseObjectMembers)
    }

    public static func parse(_ bytes: [UInt8]) throws(JSONParseError) -> JSON {
        try withBytes(of: bytes, parse)
    }

    /// `Array.withUnsafeBytes` rethrows untyped errors; this keeps the parser's error type.
    private static func withBytes<Parsed>(
        of bytes: [UInt8], _ parse: (UnsafeRawBufferPointer) throws(JSONParseError) -> Parsed
    ) throws(JSONParseError) -> Parsed {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> Parsed in try parse(raw) }
        }
        return try result.get()
    }

    public static func parse(_ text: String) throws(JSONParseError) -> JSON {
        try parse(Array(text.utf8))
    }

    // MARK: - Grammar

    private mutating func parseValue() throws(JSONParseError) -> JSON {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("unexpected character")
        }
    }

    private mutating func parseObject() throws(JSONParseError) -> JSON {
        var members: [String: JSON] = [:]
        try readObject { parser throws(JSONParseError) in
            let name = try parser.parseString()
            try parser.expectColon()
            members[name] = try parser.parseValue()
        }
        return .object(members)
    }

    /// Reads `{...}`; `member` reads each member, from the opening quote of its name to the
    /// end of its value.
    private mutating func readObject(_ member: (inout JSONParser) throws(JSONParseError) -> Void) throws(JSONParseError) {
        try enter()
        index += 1
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a string key") }
            try member(&self)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"):
                index += 1
                depth -= 1
                return
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONParseError) -> JSON {
        try enter()
        index += 1
        var elements: [JSON] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"):
                index += 1
                depth -= 1
                return .array(elements)
            default: throw error("expected ',' or ']'")
            }
        }
    }

    private mutating func expectColon() throws(JSONParseError) {
        skipWhitespace()
        guard peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
        index += 1
        skipWhitespace()
    }

    /// Checks one value without building it when it is a string or a number (the request
    /// path's members), and tells how to read it back.
    private mutating func checkValue() throws(JSONParseError) -> JSONMembers.Kind {
        guard let first = peek() else { throw error("unexpected end of input") }
        switch first {
        case UInt8(ascii: "\""): return try scanStringIsPlain() ? .plainString : .other
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try scanNumber() ? .real : .integer
        default:
            _ = try parseValue()
            return .other
        }
    }

    private mutating func enter() throws(JSONParseError) {
        depth += 1
        if depth > depthLimit { throw error("nesting deeper than \(depthLimit)") }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONParseError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw error("invalid literal") }
        let base = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != base[offset] {
            throw error("invalid literal")
        }
        index += count
    }

    // MARK: - Numbers

    private mutating func parseNumber() throws(JSONParseError) -> JSON {
        let start = index
        let isReal = try scanNumber()
        return JSONParser.number(UnsafeRawBufferPointer(rebasing: bytes[start..<index]), isReal: isReal)
    }

    /// Checks the grammar of a number and steps over it; true when it is a real.
    private mutating func scanNumber() throws(JSONParseError) -> Bool {
        var isReal = false
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected a digit") }
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), isDigit(next) { throw error("leading zeros are not allowed") }
        } else {
            skipDigits()
        }
        if peek() == UInt8(ascii: ".") {
            isReal = true
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            isReal = true
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        return isReal
    }

    /// The value of a number whose grammar was checked (``scanNumber()``).
    static func number(_ text: UnsafeRawBufferPointer, isReal: Bool) -> JSON {
        if isReal {
            let string = String(decoding: text, as: UTF8.self)
            guard let value = Double(string), value.isFinite else { return .unrepresentableNumber(string) }
            return .real(value)
        }
        // Accumulate negatively so that Int64.min parses without overflow.
        var value: Int64 = 0
        let negative = text[0] == UInt8(ascii: "-")
        for byte in text.dropFirst(negative ? 1 : 0) {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(Int64(byte &- UInt8(ascii: "0")))
            if o1 || o2 { return .unrepresentableNumber(String(decoding: text, as: UTF8.self)) }
            value = next
        }
        if negative { return .integer(value) }
        if value == .min { return .unrepresentableNumber(String(decoding: text, as: UTF8.self)) }
        return .integer(-value)
    }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    @inline(__always) private func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    // MARK: - Strings

    private mutating func parseString() throws(JSONParseError) -> String {
        switch try scanString() {
        case .plain(let contents):
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[contents]), as: UTF8.self)
        case .decoded(let string):
            return string
        }
    }

    /// A string token, read and checked: plain ASCII without escapes is left where it is;
    /// anything else had to be decoded to be checked, and is.
    private enum ScannedString {
        case plain(Range<Int>)
        case decoded(String)
    }

    /// Checks a string token and steps over it; true when it is plain (ASCII without escapes),
    /// so that its bytes between the quotes are its text.
    private mutating func scanStringIsPlain() throws(JSONParseError) -> Bool {
        if case .plain = try scanString() { return true }
        return false
    }

    private mutating func scanString() throws(JSONParseError) -> ScannedString {
        index += 1  // opening quote
        let start = index
        var ascii = true
        // Fast path: no escapes. ASCII needs no validation; anything else is validated in one go.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let contents = start..<index
                index += 1
                if ascii { return .plain(contents) }
                return .decoded(try validatedString(UnsafeRawBufferPointer(rebasing: bytes[contents]), offset: start))
            }
            if byte >= 0x80 { ascii = false }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string") }
            index += 1
        }
        guard index < bytes.count else { throw error("unterminated string") }
        return .decoded(try parseEscapedString(from: start))
    }

    private mutating func parseEscapedString(from start: Int) throws(JSONParseError) -> String {
        var scratch: [UInt8] = Array(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: scratch, as: UTF8.self) else { throw .invalidUTF8(offset: start) }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                guard index < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"):
                    let scalar = try parseUnicodeEscape()
                    scratch.append(contentsOf: String(Character(scalar)).utf8)
                default: throw error("invalid escape")
                }
            default:
                if byte < 0x20 { throw error("control character in a string") }
                scratch.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    /// Reads the hex digits after `\u`, joining a surrogate pair. Lone surrogates are refused:
    /// they cannot be held in a Swift string or written to a property list.
    private mutating func parseUnicodeEscape() throws(JSONParseError) -> Unicode.Scalar {
        let high = try parseHex4()
        if (0xD800...0xDBFF).contains(high) {
            guard bytes.count - index >= 6, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw error("lone surrogate in \\u escape")
            }
            index += 2
            let low = try parseHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw error("invalid surrogate pair") }
            let value = 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
            guard let scalar = Unicode.Scalar(value) else { throw error("invalid surrogate pair") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(high) else { throw error("lone surrogate in \\u escape") }
        return scalar
    }

    private mutating func parseHex4() throws(JSONParseError) -> UInt32 {
        guard bytes.count - index >= 4 else { throw error("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private func validatedString(_ raw: UnsafeRawBufferPointer, offset: Int) throws(JSONParseError) -> String {
        guard let string = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8(offset: offset) }
        return string
    }

    // MARK: - Helpers

    @inline(__always) private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func error(_ message: String) -> JSONParseError {
        .syntax("\(message) at byte \(index)")
    }
}
