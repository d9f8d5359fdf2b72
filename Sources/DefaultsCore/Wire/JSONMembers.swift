import Foundation

/// The top-level members of one JSON object, in the order written: checked in full when the
/// line is read, decoded only when asked for.
///
/// A request line has half a dozen members and an operation reads three or four of them,
/// mostly short strings. Each member is kept as two ranges of the line's bytes (its name and
/// its value), so reading a line builds no `JSON` value and no name string, a member is found
/// by comparing its name's bytes, and a connection can reuse the same storage for every
/// request (the table holds no references). As with ``JSON/object(_:)``, a repeated name
/// means the last one.
///
/// ```swift
/// let members = try JSONParser.parseObjectMembers(Array(#"{"op":"get","op":"set"}"#.utf8))
/// members?["op"] // .string("set")
/// ```
public struct JSONMembers: Sendable, Equatable {
    /// A decoded member.
    public struct Member: Sendable, Equatable {
        public var name: String
        public var value: JSON
    }

    /// Where one member lies in `line`. Both ranges include the quotes of a string; a plain
    /// string is ASCII without escapes, so its bytes between the quotes are its text.
    struct Span: Sendable {
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

    /// The bytes of the object, as read.
    private var line: [UInt8] = []
    private var spans: [Span] = []

    public init() {}

    /// Members made from values (for tests and callers that build requests by hand).
    public init(_ pairs: KeyValuePairs<String, JSON>) {
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

    /// Every member, decoded, in the order written.
    public var members: [Member] {
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
        return span.value.count != 4 || line[span.value.lowerBound] != UInt8(ascii: "n")
    }

    /// True when the member called `name` is a string spelled exactly as `text`, compared
    /// without decoding it. False tells nothing more: the member may be missing, another
    /// string, or the same text written with escapes.
    public func string(_ name: StaticString, is text: String) -> Bool {
        guard let span = lastSpan(named: name), span.kind == .plainString else { return false }
        let contents = (span.value.lowerBound + 1)..<(span.value.upperBound - 1)
        return line.withUnsafeBytes { raw in
            text.utf8.withContiguousStorageIfAvailable { utf8 in
                utf8.count == contents.count
                    && (utf8.isEmpty || memcmp(utf8.baseAddress!, raw.baseAddress! + contents.lowerBound, utf8.count) == 0)
            } ?? text.utf8.elementsEqual(UnsafeRawBufferPointer(rebasing: raw[contents]))
        }
    }

    public static func == (lhs: JSONMembers, rhs: JSONMembers) -> Bool { lhs.members == rhs.members }

    // MARK: - Filled by the parser

    /// Starts a new object: forgets the last one's members, keeping the storage.
    mutating func start(_ object: UnsafeRawBufferPointer) {
        line.removeAll(keepingCapacity: true)
        // As typed bytes, so that appending is one copy rather than a loop over raw bytes.
        line.append(contentsOf: UnsafeBufferPointer(start: object.baseAddress?.assumingMemoryBound(to: UInt8.self), count: object.count))
        spans.removeAll(keepingCapacity: true)
    }

    mutating func append(_ span: Span) { spans.append(span) }

    // MARK: -

    private func lastSpan(named name: StaticString) -> Span? {
        let wanted = UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return line.withUnsafeBytes { raw -> Span? in
            var index = spans.endIndex
            while index > spans.startIndex {
                index -= 1
                let span = spans[index]
                if span.nameIsPlain {
                    let length = span.name.count - 2
                    if length == wanted.count,
                       memcmp(raw.baseAddress! + span.name.lowerBound + 1, wanted.baseAddress!, length) == 0 {
                        return span
                    }
                } else if case .string(let decoded) = decode(span.name, kind: .other), decoded.utf8.elementsEqual(wanted) {
                    return span
                }
            }
            return nil
        }
    }

    private func decode(_ range: Range<Int>, kind: Kind) -> JSON {
        line.withUnsafeBytes { raw in
            switch kind {
            case .plainString:
                let contents = (range.lowerBound + 1)..<(range.upperBound - 1)
                return .string(String(decoding: UnsafeRawBufferPointer(rebasing: raw[contents]), as: UTF8.self))
            case .integer, .real:
                return JSONParser.number(UnsafeRawBufferPointer(rebasing: raw[range]), isReal: kind == .real)
            case .other:
                // The parser checked these bytes when it read the line, so they parse again.
                return (try? JSONParser.parse(UnsafeRawBufferPointer(rebasing: raw[range]))) ?? .null
            }
        }
    }
}
