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

    init(wire value: JSON) {
        switch value {
        case .string(let text): (type, self.text) = ("string", text)
        case .integer(let number): (type, text) = ("integer", String(number))
        // The wire's spelling, which always shows a fraction or an exponent: 1.0 never reads as an integer.
        case .real: (type, text) = ("real", Self.compact(value))
        case .bool(let on): (type, text) = ("bool", on ? "true" : "false")
        case .array: (type, text) = ("array", Self.compact(value))
        case .object(let members):
            if members.count == 1, case .string(let date)? = members["$date"] {
                (type, text) = ("date", date)
            } else if members.count == 1, case .string(let data)? = members["$data"] {
                (type, text) = ("data", data)
            } else {
                (type, text) = ("dictionary", Self.compact(value))
            }
        case .null, .unrepresentableNumber: (type, text) = ("string", Self.compact(value))
        }
    }

    /// The wire value for a scalar typed in the editor. The daemon checks dates and data.
    static func wire(type: String, text: String) throws -> JSON {
        let trimmed = SystemText.trimmingWhitespace(text)
        switch type {
        case "string": return .string(text)
        case "integer":
            guard let number = Int64(trimmed) else { throw RowInput.Refused(description: "\"\(text)\" is not a whole number") }
            return .integer(number)
        case "real":
            guard let number = Double(trimmed), number.isFinite else { throw RowInput.Refused(description: "\"\(text)\" is not a number") }
            return .real(number)
        case "bool":
            switch trimmed.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: throw RowInput.Refused(description: "\"\(text)\" is not true or false")
            }
        case "date": return .object(["$date": .string(trimmed)])
        case "data": return .object(["$data": .string(trimmed)])
        default: throw RowInput.Refused(description: "\(type) values are not edited here; use defaults import")
        }
    }

    private static func compact(_ value: JSON) -> String {
        var writer = JSONWriter()
        writer.json(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
