import DefaultsCore

/// What a person did to a row of a pane, as the page sends it, and the typed value it stores.
///
/// The page never sends a value: it sends which switch position, which option, what number or
/// what text, and the value is made here from the row's own JSON as the daemon described it
/// (`describeBundle`), where an integer and a real stay apart. JavaScript numbers cannot keep
/// `5` and `5.0` apart, so the rule of types lives on this side only.
///
/// ```swift
/// let value = try RowInput.number("7").value(for: sliderRow)   // .real(7.0) when DefaultValue is a real
/// ```
enum RowInput: Equatable {
    case switchOn(Bool)
    case option(Int)
    case number(String)
    case text(String)

    struct Refused: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads `{"on":true}`, `{"option":2}`, `{"number":"5.5"}` or `{"text":"..."}`.
    init(json: JSON?) throws {
        switch json {
        case .object(let members) where members.count == 1:
            switch (members.first!.key, members.first!.value) {
            case ("on", .bool(let on)): self = .switchOn(on)
            case ("option", .integer(let index)): self = .option(Int(index))
            case ("number", .string(let text)): self = .number(text)
            case ("text", .string(let text)): self = .text(text)
            default: throw Refused(description: "input must be one of on (bool), option (integer), number or text (string)")
            }
        default: throw Refused(description: "input must be an object with one member")
        }
    }

    /// The wire value to store for `row` (a row object of `describeBundle`'s pane).
    func value(for row: JSON) throws -> JSON {
        let control = row["control"]
        let kind = control?["kind"]
        switch (self, kind) {
        case (.switchOn(let on), .string("toggleSwitch")):
            guard let stored = control?[on ? "trueValue" : "falseValue"] else { throw Refused(description: "the switch has no value") }
            return stored
        case (.option(let index), .string("multiValue")), (.option(let index), .string("radioGroup")):
            guard case .array(let options) = control?["options"], options.indices.contains(index),
                let stored = options[index]["value"]
            else { throw Refused(description: "there is no option \(index)") }
            return stored
        case (.number(let text), .string("slider")):
            return try Self.number(text, like: row["defaultValue"])
        case (.text(let text), .string("textField")):
            // A text field stores text whatever its keyboard, as on iOS (and the daemon checks so).
            return .string(text)
        default:
            throw Refused(description: "this row does not take that input")
        }
    }

    /// A number typed as `example` is (integer or real); a real when the example says nothing.
    private static func number(_ text: String, like example: JSON?) throws -> JSON {
        let trimmed = SystemText.trimmingWhitespace(text)
        guard let number = Double(trimmed), number.isFinite else { throw Refused(description: "\"\(text)\" is not a number") }
        if case .integer? = example {
            guard let whole = Int64(exactly: number.rounded()) else { throw Refused(description: "\"\(text)\" is out of range") }
            return .integer(whole)
        }
        return .real(number)
    }
}
