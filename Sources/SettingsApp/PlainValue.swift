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

    static let scalarTypes = PlistType.allCases.filter { !$0.isContainer }.map(\.name)
    /// Every type the editor offers, by the names every place uses (``PlistType``): the scalars, then the containers.
    static let types = PlistType.allCases.map(\.name)

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
        type = decoded.plistType.name
        switch decoded {
        case .string(let string): text = string
        case .integer(let number): text = String(number)
        // The wire's spelling, which always shows a fraction or an exponent: 1.0 never reads as an integer.
        case .real, .array, .dictionary: text = Self.compact(value)
        case .bool(let on): text = on ? "true" : "false"
        case .date(let date): text = RFC3339.format(date)
        case .data(let data): text = ValueSyntax.hex(data)
        }
    }

    /// The wire value for a scalar typed in the editor, in ``ValueSyntax``'s forms: booleans by
    /// its words, data as hexadecimal, dates as RFC 3339.
    static func wire(type: String, text: String) throws -> JSON {
        let trimmed = SystemText.trimmingWhitespace(text)
        let value: PlistValue
        switch PlistType(rawValue: type) {
        case .string: value = .string(text)
        case .integer:
            guard let number = Int64(trimmed) else { throw RowInput.Refused(description: "\"\(text)\" is not a whole number") }
            value = .integer(number)
        case .real:
            guard let number = Double(trimmed), number.isFinite else { throw RowInput.Refused(description: "\"\(text)\" is not a number") }
            value = .real(number)
        case .boolean:
            guard let on = ValueSyntax.booleanWord(text, in: .setting) else {
                throw RowInput.Refused(description: "\"\(text)\" is not one of \(ValueSyntax.booleanWordList(in: .setting))")
            }
            value = .bool(on)
        case .date:
            guard let date = RFC3339.parse(trimmed) else {
                throw RowInput.Refused(description: "\"\(text)\" is not a date such as 2026-11-21T10:00:00Z")
            }
            value = .date(date)
        case .data:
            do { value = .data(try ValueSyntax.data(fromHex: text)) } catch { throw RowInput.Refused(description: error.description) }
        case .array, .dictionary, nil: throw RowInput.Refused(description: "\(type) values are not edited here; use defaults import")
        }
        return WireValue.json(value)
    }

    // MARK: Trees: arrays and dictionaries, element by element

    /// A value as the editor's tree shows it: a scalar as `{"type","text"}`, an array as
    /// `{"type":"array","items":[…]}`, a dictionary as `{"type":"dictionary","entries":[{"key","value"}]}`
    /// in key order. Every element keeps its own type, so the page can edit any of them, at any
    /// depth, and send the whole tree back (``value(tree:)``).
    static func tree(_ value: PlistValue) -> JSON {
        switch value {
        case .array(let items): return ["type": "array", "items": .array(items.map(tree))]
        case .dictionary(let members):
            return ["type": "dictionary", "entries": .array(members.sorted { $0.key < $1.key }.map { ["key": .string($0.key), "value": tree($0.value)] })]
        default:
            let plain = PlainValue(wire: WireValue.json(value))
            return ["type": .string(plain.type), "text": .string(plain.text)]
        }
    }

    /// The most containers a tree from the page may nest: the daemon's own limit for files.
    static let maximumTreeDepth = PropertyListLimits.maximumDepth

    /// The value of a tree the page sent, each scalar read in ``ValueSyntax``'s forms by
    /// ``wire(type:text:)``; a refusal names the element (`list[2].name`).
    static func value(tree: JSON, at path: String = "", depth: Int = 0) throws -> PlistValue {
        guard depth <= maximumTreeDepth else { throw RowInput.Refused(description: "nested deeper than \(maximumTreeDepth) levels") }
        guard case .string(let type)? = tree["type"] else { throw RowInput.Refused(description: "\(path.isEmpty ? "the value" : path) has no type") }
        switch type {
        case "array":
            guard case .array(let items)? = tree["items"] else { throw RowInput.Refused(description: "\(path) has no items") }
            return .array(try items.enumerated().map { index, item in try value(tree: item, at: "\(path)[\(index)]", depth: depth + 1) })
        case "dictionary":
            guard case .array(let entries)? = tree["entries"] else { throw RowInput.Refused(description: "\(path) has no entries") }
            var members: [String: PlistValue] = [:]
            for entry in entries {
                guard case .string(let key)? = entry["key"], let element = entry["value"] else {
                    throw RowInput.Refused(description: "an entry of \(path.isEmpty ? "the dictionary" : path) has no key")
                }
                guard !key.isEmpty else { throw RowInput.Refused(description: "an entry of \(path.isEmpty ? "the dictionary" : path) has an empty key") }
                guard members[key] == nil else { throw RowInput.Refused(description: "\(path.isEmpty ? "the dictionary" : path) has the key \"\(key)\" twice") }
                members[key] = try value(tree: element, at: path.isEmpty ? key : "\(path).\(key)", depth: depth + 1)
            }
            return .dictionary(members)
        default:
            guard case .string(let text)? = tree["text"] else { throw RowInput.Refused(description: "\(path) has no text") }
            do {
                return try WireValue.decode(try wire(type: type, text: text))
            } catch let refused as RowInput.Refused {
                throw RowInput.Refused(description: path.isEmpty ? refused.description : "\(path): \(refused.description)")
            }
        }
    }

    private static func compact(_ value: JSON) -> String {
        var writer = JSONWriter()
        writer.json(value)
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
