import Foundation

/// Appends JSON text to a byte array.
///
/// Written by hand for the same reason as ``JSONParser``: reals must always be written with
/// a `.` or an exponent (`5.0`, never `5`) so they read back as reals, and responses are
/// built straight into bytes without an intermediate object graph.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject(); writer.key("ok"); writer.bool(true); writer.endObject()
/// String(decoding: writer.bytes, as: UTF8.self) // {"ok":true}
/// ```
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]
    private var needsComma = false

    public init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    public mutating func beginObject() { separate(); bytes.append(UInt8(ascii: "{")); needsComma = false }
    public mutating func endObject() { bytes.append(UInt8(ascii: "}")); needsComma = true }
    public mutating func beginArray() { separate(); bytes.append(UInt8(ascii: "[")); needsComma = false }
    public mutating func endArray() { bytes.append(UInt8(ascii: "]")); needsComma = true }

    /// Writes an object key; the next value call writes its value.
    public mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a key the caller knows needs no escaping (the protocol's own member names).
    /// It is copied in one go, unlike ``key(_:)``, which checks every byte.
    public mutating func key(literal key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        appendLiteral(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    public mutating func null() { separate(); appendLiteral("null"); needsComma = true }
    public mutating func bool(_ value: Bool) { separate(); appendLiteral(value ? "true" : "false"); needsComma = true }
    public mutating func integer(_ value: Int64) { separate(); appendDecimal(value); needsComma = true }
    public mutating func string(_ value: String) { separate(); appendQuoted(value); needsComma = true }

    /// Writes a finite double so that it reads back as a real: `5.0`, `1e-05`, `1e+20`.
    public mutating func real(_ value: Double) {
        precondition(value.isFinite, "non-finite reals never reach the writer")
        separate()
        // Swift's description is the shortest text that round-trips, and always has '.' or 'e'.
        appendASCII(value.description)
        needsComma = true
    }

    /// Writes an already-encoded JSON value verbatim.
    public mutating func raw(_ encoded: [UInt8]) { separate(); bytes.append(contentsOf: encoded); needsComma = true }

    /// Writes a parsed JSON value back out (used to echo request ids).
    public mutating func json(_ value: JSON) {
        switch value {
        case .null: null()
        case .bool(let b): bool(b)
        case .integer(let i): integer(i)
        case .real(let d): real(d)
        case .string(let s): string(s)
        case .unrepresentableNumber(let text): separate(); appendASCII(text); needsComma = true
        case .array(let elements):
            beginArray()
            for element in elements { json(element) }
            endArray()
        case .object(let members):
            beginObject()
            for (key, member) in members.sorted(by: { $0.key < $1.key }) {
                self.key(key)
                json(member)
            }
            endObject()
        }
    }

    /// Writes a property-list value in the wire mapping of ``WireValue``.
    public mutating func value(_ value: PlistValue) {
        switch value {
        case .string(let s): string(s)
        case .integer(let i): integer(i)
        case .real(let d): real(d)
        case .bool(let b): bool(b)
        case .date(let date):
            beginObject(); key("$date"); string(RFC3339.format(date)); endObject()
        case .data(let data):
            beginObject(); key("$data"); string(data.base64EncodedString()); endObject()
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .dictionary(let members):
            let wrap = members.count == 1 && members.keys.first!.hasPrefix("$")
            if wrap { beginObject(); key("$dict") }
            dictionary(members)
            if wrap { endObject() }
        }
    }

    /// Writes a dictionary's members with keys in sorted order, so output is deterministic.
    public mutating func dictionary(_ members: [String: PlistValue]) {
        beginObject()
        for key in members.keys.sorted() {
            self.key(key)
            value(members[key]!)
        }
        endObject()
    }

    /// Writes a changeset's changes with keys in sorted order: removed keys as `null`.
    public mutating func changes(_ changeset: Changeset) {
        beginObject()
        if let (key, value) = changeset.onlyChange {
            // The common single-key change needs no sorted copy of the keys.
            self.key(key)
            if let value { self.value(value) } else { null() }
            endObject()
            return
        }
        for (key, value) in changeset.sorted(by: { $0.key < $1.key }) {
            self.key(key)
            if let value { self.value(value) } else { null() }
        }
        endObject()
    }

    public mutating func newline() { bytes.append(UInt8(ascii: "\n")); needsComma = false }

    /// Empties the writer but keeps its storage, so a connection can encode every response
    /// into one writer without allocating per response.
    public mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    /// The number of bytes `value` takes in decimal, sign included.
    public static func decimalLength(of value: Int64) -> Int {
        var magnitude = value.magnitude
        var length = value < 0 ? 2 : 1
        while magnitude >= 10 {
            magnitude /= 10
            length += 1
        }
        return length
    }

    // MARK: -

    @inline(__always) private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    private mutating func appendASCII(_ text: String) { bytes.append(contentsOf: text.utf8) }

    private mutating func appendLiteral(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Digits written straight into the bytes: `String(value)` would allocate for every integer.
    private mutating func appendDecimal(_ value: Int64) {
        var magnitude = value.magnitude
        if value >= 0 && magnitude < 10 {
            bytes.append(UInt8(ascii: "0") &+ UInt8(magnitude))
            return
        }
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            bytes.append(contentsOf: UnsafeMutableBufferPointer(rebasing: digits[start...]))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    private mutating func appendQuoted(_ string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        // Most keys and values need no escaping: copy them in one go.
        let plain = string.withUTF8 { utf8 in
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
        if plain {
            bytes.append(UInt8(ascii: "\""))
            return
        }
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "\\"))
            case 0x0A: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "n"))
            case 0x0D: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "\\")); bytes.append(UInt8(ascii: "t"))
            case 0..<0x20:
                bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                bytes.append(JSONWriter.hexDigits[Int(byte >> 4)])
                bytes.append(JSONWriter.hexDigits[Int(byte & 0xF)])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
