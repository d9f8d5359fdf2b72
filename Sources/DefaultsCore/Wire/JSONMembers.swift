import FoundationEssentials
import Glibc

/// The top-level members of one JSON object, in the order written: checked in full when the
/// line is read, decoded only when asked for.
///
/// A request line has half a dozen members and an operation reads three or four of them,
/// mostly short strings. Each member is kept as two ranges of the line's bytes (its name and
/// its value), so reading a line builds no `JSON` value and no name string; names are compared
/// byte by byte. A connection reuses the same storage for every request:
/// the line's bytes are shared with the requests read from it and reused once none holds
/// them. As with ``JSON/object(_:)``, a repeated name means the last one.
///
/// ```swift
/// let members = try JSONParser.parseObjectMembers(Array(#"{"op":"get","op":"set"}"#.utf8))
/// members?["op"] // .string("set")
/// ```
public struct JSONMembers: Sendable, Equatable {
    /// A decoded member (for tests, and for comparing two tables).
    struct Member: Sendable, Equatable {
        var name: String
        var value: JSON
    }

    /// Where one member lies in `line`. Both ranges include the quotes of a string; a plain
    /// string is ASCII without escapes, so its bytes between the quotes are its text.
    struct Span: Sendable, Equatable {
        var name: Range<Int>
        var nameIsPlain: Bool
        var value: Range<Int>
        var kind: Kind
    }

    /// What a value is, as far as reading it back quickly needs to know.
    enum Kind: Sendable {
        case plainString
        case integer
        case real
        /// Anything else: decoded by parsing its bytes again.
        case other
    }

    /// The bytes of the object, as read. A class so that a request and the table it was read
    /// into share them, and the next line is copied into the same storage once the request is
    /// gone: copying into a reused array would outweigh the rest of reading a short line.
    private final class Line: @unchecked Sendable {
        // Sendable: written only while it is uniquely referenced (`start`), read-only after.
        var base: UnsafeMutableRawPointer
        var capacity: Int
        var count = 0

        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(byteCount: capacity, alignment: 8)
        }

        deinit { base.deallocate() }

        var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
    }

    private var line = Line(capacity: 0)
    /// Internal for tests.
    private(set) var spans: [Span] = []

    public init() {}

    /// Members made from values (for tests).
    init(_ pairs: KeyValuePairs<String, JSON>) {
        var writer = JSONWriter()
        writer.beginObject()
        for (name, value) in pairs {
            writer.key(name)
            writer.json(value)
        }
        writer.endObject()
        guard let members = try? JSONParser.parseObjectMembers(writer.bytes) else {
            preconditionFailure("JSONWriter wrote an object the parser refuses: \(writer.bytes)")
        }
        self = members
    }

    public var count: Int { spans.count }

    /// The bytes the table keeps allocated for the line, which a reused table keeps between
    /// objects.
    public var lineCapacity: Int { line.capacity }

    private var bytes: UnsafeRawBufferPointer { line.bytes }

    /// Every member, decoded, in the order written (for tests, and for comparing two tables).
    var members: [Member] {
        spans.map { span in
            guard case .string(let name) = decode(span.name, kind: span.nameIsPlain ? .plainString : .other) else {
                preconditionFailure("member names are strings")
            }
            return Member(name: name, value: decode(span.value, kind: span.kind))
        }
    }

    /// The value of the member called `name`, decoded; nil when there is none. Names are
    /// literals (the protocol's own), compared with the line's bytes as they are.
    public subscript(name: StaticString) -> JSON? {
        guard let span = lastSpan(named: name) else { return nil }
        return decode(span.value, kind: span.kind)
    }

    /// Whether there is a member called `name` whose value is not `null`, without decoding it.
    public func hasValue(_ name: StaticString) -> Bool {
        guard let span = lastSpan(named: name) else { return false }
        return span.value.count != 4 || bytes[span.value.lowerBound] != UInt8(ascii: "n")
    }

    /// Runs `body` on the text of the member called `name` when it is a plain string (ASCII
    /// without escapes), as the line's bytes between the quotes, without making a `String`;
    /// nil when the member is missing, not a string, not ASCII or written with escapes, and
    /// when `body` returns nil.
    ///
    /// ```swift
    /// members.withPlainString("op") { $0.count }   // 3 for {"op":"get"}; nil for {"op":"g\u0065t"}
    /// ```
    public func withPlainString<Result>(
        _ name: StaticString, _ body: (UnsafeRawBufferPointer) -> Result?
    ) -> Result? {
        guard let span = lastSpan(named: name), span.kind == .plainString else { return nil }
        return body(UnsafeRawBufferPointer(rebasing: bytes[(span.value.lowerBound + 1)..<(span.value.upperBound - 1)]))
    }

    /// The member called `name` when it is a string, decoded; nil when it is missing or not
    /// a string.
    public func stringValue(_ name: StaticString) -> String? {
        guard let span = lastSpan(named: name), case .string(let string) = decode(span.value, kind: span.kind) else {
            return nil
        }
        return string
    }

    /// The member called `name` as a property-list value, when it is a string or a number that
    /// fits its type, read without building a ``JSON`` value; nil for anything else (missing,
    /// `null`, other kinds, numbers out of range), which the caller decodes through the
    /// subscript to learn which.
    public func scalarValue(_ name: StaticString) -> PlistValue? {
        guard let span = lastSpan(named: name), span.kind != .other else { return nil }
        switch decode(span.value, kind: span.kind) {
        case .string(let string): return .string(string)
        case .integer(let value): return .integer(value)
        case .real(let value): return .real(value)
        default: return nil  // a number out of range
        }
    }

    public static func == (lhs: JSONMembers, rhs: JSONMembers) -> Bool { lhs.members == rhs.members }

    // MARK: - Filled by the parser

    /// Starts a new object: forgets the last one's members, keeping the storage when nothing
    /// else holds it.
    mutating func start(_ object: UnsafeRawBufferPointer) {
        if !isKnownUniquelyReferenced(&line) || line.capacity < object.count {
            line = Line(capacity: Swift.max(object.count, 256))
        }
        if let source = object.baseAddress { line.base.copyMemory(from: source, byteCount: object.count) }
        line.count = object.count
        spans.removeAll(keepingCapacity: true)
    }

    mutating func append(_ span: Span) { spans.append(span) }

    // MARK: -

    private func lastSpan(named name: StaticString) -> Span? {
        let wanted = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return spans.last { matches($0, wanted) }
    }

    private func matches(_ span: Span, _ wanted: UnsafeRawBufferPointer) -> Bool {
        if span.nameIsPlain {
            guard span.name.count - 2 == wanted.count else { return false }
            // Only an empty buffer lacks an address: then the names match only if both are empty.
            guard let line = bytes.baseAddress, let name = wanted.baseAddress else { return wanted.isEmpty }
            return memcmp(line + span.name.lowerBound + 1, name, wanted.count) == 0
        }
        guard case .string(let decoded) = decode(span.name, kind: .other) else { return false }
        return decoded.utf8.elementsEqual(wanted)
    }

    private func plainText(_ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[(range.lowerBound + 1)..<(range.upperBound - 1)]), as: UTF8.self)
    }

    private func decode(_ range: Range<Int>, kind: Kind) -> JSON {
        let raw = bytes
        switch kind {
        case .plainString:
            return .string(plainText(range))
        case .integer, .real:
            return JSONParser.number(UnsafeRawBufferPointer(rebasing: raw[range]), isReal: kind == .real)
        case .other:
            // The parser checked these bytes when it read the line, so they parse again.
            return (try? JSONParser.parse(UnsafeRawBufferPointer(rebasing: raw[range]))) ?? .null
        }
    }
}
