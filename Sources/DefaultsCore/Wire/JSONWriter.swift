import FoundationEssentials

/// Appends JSON text to a buffer of bytes it owns.
///
/// Written by hand for the same reason as ``JSONParser``: reals must always be written with
/// a `.` or an exponent (`5.0`, never `5`) so they read back as reals, and responses are
/// built straight into bytes without an intermediate object graph.
///
/// Noncopyable, and its storage a plain allocation rather than an `Array`: every answer and
/// every event is written through it, and an array checks that its storage is unshared and
/// large enough at each appended byte. Here each call makes room once for all it writes and
/// stores through a pointer (docs/PERFORMANCE.md has what that saves).
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject(); writer.key("ok"); writer.bool(true); writer.endObject()
/// String(decoding: writer.bytes, as: UTF8.self) // {"ok":true}
/// ```
public struct JSONWriter: ~Copyable, @unchecked Sendable {
    // Sendable: the storage is owned by this one value and never shared.
    // Internal rather than private so that the small calls below can be inlined into their
    // callers, where a literal's length and bytes are known when compiling.
    @usableFromInline var base: UnsafeMutablePointer<UInt8>
    @usableFromInline var allocated: Int
    @usableFromInline var written = 0
    @usableFromInline var needsComma = false

    public init(capacity: Int = 128) {
        allocated = Swift.max(capacity, 16)
        base = .allocate(capacity: allocated)
    }

    /// Bytes allocated.
    public var capacity: Int { allocated }
    /// Bytes written so far.
    public var count: Int { written }

    deinit { base.deallocate() }

    /// A copy of the bytes written.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: base, count: count)) }

    public var isEmpty: Bool { count == 0 }

    /// Calls `body` with the bytes written, without copying them.
    @discardableResult
    public func withBytes<Result>(_ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    @inlinable @inline(__always) public mutating func beginObject() { separate(); put(UInt8(ascii: "{")); needsComma = false }
    @inlinable @inline(__always) public mutating func endObject() { put(UInt8(ascii: "}")); needsComma = true }
    @inlinable @inline(__always) public mutating func beginArray() { separate(); put(UInt8(ascii: "[")); needsComma = false }
    @inlinable @inline(__always) public mutating func endArray() { put(UInt8(ascii: "]")); needsComma = true }

    /// Writes an object key; the next value call writes its value.
    public mutating func key(_ key: String) {
        separate()
        appendQuoted(key)
        put(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a key the caller knows needs no escaping (the protocol's own member names),
    /// without checking its bytes as ``key(_:)`` does.
    @inlinable @inline(__always) public mutating func key(literal key: StaticString) {
        separate()
        put(UInt8(ascii: "\""))
        put(key)
        put(UInt8(ascii: "\""))
        put(UInt8(ascii: ":"))
        needsComma = false
    }

    @inlinable @inline(__always) public mutating func null() { separate(); put("null"); needsComma = true }
    @inlinable @inline(__always) public mutating func bool(_ value: Bool) {
        separate()
        if value { put("true") } else { put("false") }
        needsComma = true
    }
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
    public mutating func raw(_ encoded: [UInt8]) {
        separate()
        encoded.withUnsafeBytes { put($0) }
        needsComma = true
    }

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

    /// Writes a property-list value in the wire mapping of ``WireValue``: the one encoder of that
    /// mapping (``WireValue/json(_:)`` reads back what it writes).
    public mutating func value(_ value: PlistValue) {
        switch value {
        case .string(let s): string(s)
        case .integer(let i): integer(i)
        case .real(let d): real(d)
        case .bool(let b): bool(b)
        case .date(let date):
            beginObject(); key(literal: "$date"); string(RFC3339.format(date)); endObject()
        case .data(let data):
            beginObject(); key(literal: "$data"); string(data.base64EncodedString()); endObject()
        case .array(let elements):
            beginArray()
            for element in elements { self.value(element) }
            endArray()
        case .dictionary(let members):
            let wrap = WireValue.isTag(keys: members.keys)
            if wrap { beginObject(); key(literal: "$dict") }
            dictionary(members)
            if wrap { endObject() }
        }
    }

    /// Writes a dictionary's members with keys in sorted order, so output is deterministic.
    public mutating func dictionary(_ members: [String: PlistValue]) {
        beginObject()
        for key in members.keys.sorted() {
            // Every key is the dictionary's own, so each finds its value.
            guard let member = members[key] else { continue }
            self.key(key)
            value(member)
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

    @inlinable @inline(__always) public mutating func newline() { put(UInt8(ascii: "\n")); needsComma = false }

    /// Empties the writer but keeps its storage, so a connection can encode every response
    /// into one writer without allocating per response.
    @inlinable public mutating func removeAll() {
        written = 0
        needsComma = false
    }

    /// The number of bytes `string` takes once written by ``string(_:)``: its quotes, and each
    /// byte as itself or escaped.
    static func quotedLength(of string: String) -> Int {
        string.utf8.reduce(2) { $0 + writtenLength(of: $1) }
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

    // MARK: - Storage

    /// Where the next `needed` bytes go, growing the storage when they do not fit.
    @inlinable @inline(__always) mutating func room(_ needed: Int) -> UnsafeMutablePointer<UInt8> {
        if allocated &- written < needed { grow(needed) }
        return base + written
    }

    @usableFromInline @inline(never) mutating func grow(_ needed: Int) {
        let newCapacity = Swift.max(allocated * 2, written + needed)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.initialize(from: base, count: written)
        base.deallocate()
        base = newBase
        allocated = newCapacity
    }

    @inlinable @inline(__always) mutating func put(_ byte: UInt8) {
        room(1).pointee = byte
        written &+= 1
    }

    @inlinable @inline(__always) mutating func put(_ literal: StaticString) {
        let length = literal.utf8CodeUnitCount
        let to = room(length)
        let from = literal.utf8Start
        // The protocol's literals are a few bytes long: a loop costs less than a call to memcpy.
        for offset in 0..<length { to[offset] = from[offset] }
        written &+= length
    }

    private mutating func put(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        UnsafeMutableRawPointer(room(bytes.count)).copyMemory(from: source, byteCount: bytes.count)
        written &+= bytes.count
    }

    @inlinable @inline(__always) mutating func separate() {
        if needsComma { put(UInt8(ascii: ",")) }
    }

    private mutating func appendASCII(_ text: String) {
        var text = text
        text.withUTF8 { put(UnsafeRawBufferPointer($0)) }
    }

    /// Digits written in place, last first: `String(value)` would allocate for every integer.
    private mutating func appendDecimal(_ value: Int64) {
        let length = JSONWriter.decimalLength(of: value)
        let to = room(length)
        var magnitude = value.magnitude
        var offset = length
        repeat {
            offset &-= 1
            to[offset] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        if value < 0 { to[0] = UInt8(ascii: "-") }
        written &+= length
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    private mutating func appendQuoted(_ string: String) {
        // Most keys and values need no escaping: they are copied as they are checked.
        let copied = string.utf8.withContiguousStorageIfAvailable { appendPlainQuoted($0) }
        if copied != true { appendEscapedQuoted(string) }
    }

    /// Copies `utf8` between quotes while checking it; false, with nothing written, when a
    /// byte needs an escape.
    private mutating func appendPlainQuoted(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let length = utf8.count
        let to = room(length &+ 2)
        to[0] = UInt8(ascii: "\"")
        for offset in 0..<length {
            let byte = utf8[offset]
            if JSONWriter.needsEscape(byte) { return false }
            to[offset &+ 1] = byte
        }
        to[length &+ 1] = UInt8(ascii: "\"")
        written &+= length &+ 2
        return true
    }

    private mutating func appendEscapedQuoted(_ string: String) {
        put(UInt8(ascii: "\""))
        for byte in string.utf8 {
            guard JSONWriter.needsEscape(byte) else {
                put(byte)
                continue
            }
            put(UInt8(ascii: "\\"))
            if let letter = JSONWriter.escapeLetter(of: byte) {
                put(letter)
            } else {
                put("u00")
                put(JSONWriter.hexDigits.utf8Start[Int(byte >> 4)])
                put(JSONWriter.hexDigits.utf8Start[Int(byte & 0xF)])
            }
        }
        put(UInt8(ascii: "\""))
    }

    // MARK: - Escapes, the one rule for writing a string and for sizing it

    /// A quote, a backslash and every control character are escaped inside a string.
    @inline(__always) static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// The letter after the backslash of a two-byte escape (`\"`, `\\`, `\n`, `\r`, `\t`); nil
    /// for the other control characters, written `\u00XX`.
    static func escapeLetter(of byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "\""): UInt8(ascii: "\"")
        case UInt8(ascii: "\\"): UInt8(ascii: "\\")
        case 0x0A: UInt8(ascii: "n")
        case 0x0D: UInt8(ascii: "r")
        case 0x09: UInt8(ascii: "t")
        default: nil
        }
    }

    /// The bytes one byte of a string takes once written: itself, a two-byte escape or `\u00XX`.
    static func writtenLength(of byte: UInt8) -> Int {
        guard needsEscape(byte) else { return 1 }
        return escapeLetter(of: byte) == nil ? 6 : 2
    }
}
