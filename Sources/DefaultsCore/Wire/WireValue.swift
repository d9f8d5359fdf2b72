import FoundationEssentials

/// The mapping between ``PlistValue`` and JSON on the wire.
///
/// | plist | JSON |
/// |---|---|
/// | string, bool, array | string, `true`/`false`, array |
/// | integer | a number without `.`/`e` (Int64 range) |
/// | real | a number with `.` or an exponent (`5.0`) |
/// | date | `{"$date":"2026-11-21T10:00:00.250Z"}` |
/// | data | `{"$data":"<base64>"}` |
/// | dictionary | an object; one whose only key starts with `$` is wrapped: `{"$dict":{...}}` |
///
/// ```swift
/// let value = try WireValue.decode(try JSONParser.parse(#"{"$date":"2026-11-21T10:00:00Z"}"#))
/// ```
public enum WireValue {
    /// The value as a client receives it: what decoding its wire form gives (a date kept to the
    /// microsecond). What a client sends back as "the value I read" is compared with this.
    public static func asSent(_ value: PlistValue) -> PlistValue {
        (try? decode(json(value))) ?? value
    }

    public static func decode(_ json: JSON) throws(DefaultsError) -> PlistValue {
        switch json {
        case .string(let s): return .string(s)
        case .integer(let i): return .integer(i)
        case .real(let d): return .real(d)
        case .bool(let b): return .bool(b)
        case .null:
            throw DefaultsError(.invalidValue, "null is not a property-list value (to remove a key, use remove)")
        case .unrepresentableNumber(let text):
            throw DefaultsError(.invalidValue, "the number \(text) is out of range (integers are 64-bit signed, reals finite)")
        case .array(let elements):
            var result: [PlistValue] = []
            result.reserveCapacity(elements.count)
            for element in elements { result.append(try decode(element)) }
            return .array(result)
        case .object(let members):
            if isTag(keys: members.keys), let (key, inner) = members.first {
                return try decodeTagged(key, inner)
            }
            return .dictionary(try decodeMembers(members))
        }
    }

    private static func decodeMembers(_ members: [String: JSON]) throws(DefaultsError) -> [String: PlistValue] {
        var result: [String: PlistValue] = [:]
        result.reserveCapacity(members.count)
        for (key, member) in members { result[key] = try decode(member) }
        return result
    }

    private static func decodeTagged(_ tag: String, _ inner: JSON) throws(DefaultsError) -> PlistValue {
        switch (tag, inner) {
        case ("$date", .string(let text)):
            guard let date = RFC3339.parse(text) else {
                throw DefaultsError(.invalidValue, "\"$date\" must be an RFC 3339 date such as 2026-11-21T10:00:00.250Z, not \"\(text)\"")
            }
            return .date(date)
        case ("$data", .string(let text)):
            guard let data = Data(base64Encoded: text) else {
                throw DefaultsError(.invalidValue, "\"$data\" must be base64")
            }
            return .data(data)
        case ("$dict", .object(let members)):
            return .dictionary(try decodeMembers(members))
        case ("$date", _), ("$data", _):
            throw DefaultsError(.invalidValue, "\"\(tag)\" must hold a string")
        case ("$dict", _):
            throw DefaultsError(.invalidValue, "\"$dict\" must hold an object")
        default:
            throw DefaultsError(.invalidValue, "an object whose only key is \"\(tag)\" must be wrapped as {\"$dict\":{...}}")
        }
    }

    /// One value as a JSON tree, for requests built as ``JSON``: the text ``JSONWriter/value(_:)``
    /// writes, read back, so the mapping has one encoder.
    public static func json(_ value: PlistValue) -> JSON {
        var writer = JSONWriter()
        writer.value(value)
        do {
            return try writer.withBytes { try JSONParser.parseWritten($0) }
        } catch {
            preconditionFailure("JSONParser refuses what JSONWriter wrote for \(value): \(error)")
        }
    }

    /// Whether an object with these keys is a tag (`$date`, `$data`, `$dict`) rather than a
    /// dictionary: its only key starts with `$`. A dictionary like that travels inside `$dict`.
    static func isTag(keys: some Collection<String>) -> Bool {
        keys.count == 1 && keys.first?.hasPrefix("$") == true
    }

    /// Encodes one value as JSON text.
    public static func encode(_ value: PlistValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.value(value)
        return writer.bytes
    }

    /// The size of a value in the wire encoding; the unit of the per-domain size limit.
    /// Counted without writing for the commonest values, by the writer's own rules.
    public static func encodedSize(of value: PlistValue) -> Int {
        switch value {
        case .bool(let b): return b ? 4 : 5
        case .integer(let i): return JSONWriter.decimalLength(of: i)
        case .string(let s): return JSONWriter.quotedLength(of: s)
        default: return encode(value).count
        }
    }
}
