import DefaultsCore
import SettingsBundles

/// What a person did to a row of a pane, as the page sends it, and the typed value it stores.
///
/// The page never sends a value: it sends which switch position, which option, what number or
/// what text. The value is made from the row as the daemon describes it (`describeBundle`, read
/// back as a `PaneDescription`), by the rule `defaults settings` uses too
/// (`PaneDescription.Row.value(fromWord:)`): a switch stores its TrueValue or FalseValue, a slider
/// an integer only when its DefaultValue is one, a text field its text. JavaScript numbers cannot
/// keep `5` and `5.0` apart, so no type is decided in the page.
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
        guard case .object(let members)? = json, members.count == 1, let (name, value) = members.first.map({ ($0.key, $0.value) }) else {
            throw Refused(description: "input must be an object with one member")
        }
        switch (name, value) {
        case ("on", .bool(let on)): self = .switchOn(on)
        case ("option", .integer(let index)): self = .option(Int(index))
        case ("number", .string(let text)): self = .number(text)
        case ("text", .string(let text)): self = .text(text)
        default: throw Refused(description: "input must be one of on (bool), option (integer), number or text (string)")
        }
    }

    /// The value to store for `row`.
    func value(for row: PaneDescription.Row) throws -> PlistValue {
        do {
            switch (self, row.control) {
            case (.switchOn(let on), .toggleSwitch):
                return try row.value(fromWord: on ? "on" : "off")
            case (.option(let index), .multiValue(let options)), (.option(let index), .radioGroup(let options)):
                guard options.indices.contains(index) else { throw Refused(description: "there is no option \(index)") }
                return options[index].value
            case (.number(let text), .slider):
                return try row.value(fromWord: SystemText.trimmingWhitespace(text))
            case (.text(let text), .textField):
                return try row.value(fromWord: text)
            default:
                throw Refused(description: "this row does not take that input")
            }
        } catch let error as SettingArgumentError {
            throw Refused(description: error.description)
        }
    }
}
