import DefaultsCore

/// A value of the "Other domains" editor: its property-list type and its text, the form in
/// which the page shows and edits it. The page sends back a type and a text, and the wire value
/// is made here, so an integer stays an integer and a real a real (JavaScript numbers cannot
/// tell `5` from `5.0`).
///
/// ```swift
/// PlainValue(wire: .integer(42))                            // type "integer", text "42"
/// try PlainValue.wire(type: "real", text: "1")              // .real(1.0)
/// ```
struct PlainValue: Equatable {
    /// string, integer, real, bool, date, data, array or dictionary.
    let type: String
    /// The scalar's text; for an array or a dictionary, its wire JSON (shown, not edited in place).
    let text: String

    static let scalarTypes = ["string", "integer", "real", "bool", "date", "data"]

    var isScalar: Bool { Self.scalarTypes.contains(type) }

    init(type: String, text: String) {
        self.type = type
        self.text = text
    }

    /// The type and text of a wire value, read through ``WireValue``; data as hexadecimal and
    /// booleans as `true`/`false`, in ``ValueSyntax``'s forms, the ones `defaults` writes too.
    init(wire value: JSON) {
        guard let decoded = try? WireValue.decode(value) else {
            (type, text) = ("string", Self.compact(value))
            return
        }
        switch decoded {
        case .string(let text): (type, self.text) = ("string", text)
        case .integer(let number): (type, text) = ("integer", String(number))
        // The wire's spelling, which always shows a fraction or an exponent: 1.0 never reads as an integer.
        case .real: (type, text) = ("real", Self.compact(value))
        case .bool(let on): (type, text) = ("bool", on ? "true" : "false")
        case .date(let date): (type, text) = ("date", RFC3339.format(date))
        case .data(let data): (type, text) = ("data", ValueSyntax.hex(data))
        case .array: (type, text) = ("array", Self.compact(value))
        case .dictionary: (type, text) = ("dictionary", Self.compact(value))
        }
    }

    /// The wire value for a scalar typed in the editor, in ``ValueSyntax``'s forms: booleans by
    /// its words, data as hexadecimal, dates as RFC 3339.
    static func wire(type: String, text: String) throws -> JSON {
        let trimmed = SystemText.trimmingWhitespace(text)
        let value: PlistValue
        switch type {
        case "string": value = .string(text)
        case "integer":
            guard let number = Int64(trimmed) else { throw RowInput.Refused(description: "\"\(text)\" is not a whole number") }
            value = .integer(number)
        case "real":
            guard let number = Double(trimmed), number.isFinite else { throw RowInput.Refused(description: "\"\(text)\" is not a number") }
            value = .real(number)
        case "bool":
            guard let on = ValueSyntax.booleanWord(text, in: .setting) else {
                throw RowInput.Refused(description: "\"\(text)\" is not one of \(ValueSyntax.booleanWordList(in: .setting))")
            }
            value = .bool(on)
        case "date":
            guard let date = RFC3339.parse(trimmed) else {
                throw RowInput.Refused(description: "\"\(text)\" is not a date such as 2026-11-21T10:00:00Z")
            }
            value = .date(date)
        case "data":
            do { value = .data(try ValueSyntax.data(fromHex: text)) } catch { throw RowInput.Refused(description: error.description) }
        default: throw RowInput.Refused(description: "\(type) values are not edited here; use defaults import")
        }
        return WireValue.json(value)
    }

    private static func compact(_ value: JSON) -> String {
        var writer = JSONWriter()
        writer.json(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
