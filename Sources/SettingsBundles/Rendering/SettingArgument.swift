import DefaultsCore

/// Naming a setting and giving its value the way a person reads the pane: a key or a row's title,
/// and a bare word that means what the row's control would store.
///
/// ```swift
/// let row = try pane.editableRow(named: "Warp Factor")   // the slider, key warpFactor
/// try row.value(fromWord: "7")                           // .real(7), as its DefaultValue 5.0 is a real
/// ```
extension PaneDescription {
    /// Every row of this pane and of the child panes described inside it, in display order.
    public var allRows: [Row] {
        sections.flatMap(\.rows).flatMap { row -> [Row] in
            if case .childPane(_, let pane?) = row.control { return [row] + pane.allRows }
            return [row]
        }
    }

    /// The row a person means by `name`: the row whose key it is, else the row whose title it is
    /// (ignoring case) when no other key has that title. Only rows Settings lets a person edit
    /// qualify (text fields, switches, sliders, multi-values, radio groups).
    /// A row the administrator forces is found but refused.
    public func editableRow(named name: String) throws(SettingArgumentError) -> Row {
        let rows = allRows.filter { $0.key != nil }
        if let row = rows.first(where: { $0.key == name }) {
            guard row.isEditable else { throw .notEditable(key: name, type: row.type ?? "specifier") }
            return try Self.unlocked(row)
        }
        let titled = rows.filter { $0.isEditable && $0.title?.lowercased() == name.lowercased() }
        let keys = Set(titled.compactMap(\.key))
        if keys.count == 1, let row = titled.first { return try Self.unlocked(row) }
        if keys.count > 1 { throw .ambiguous(name: name, keys: keys.sorted()) }
        throw .unknown(
            name: name,
            settings: rows.filter(\.isEditable).map { row in (key: row.key ?? "", title: row.title) }.uniqued(by: \.key))
    }

    private static func unlocked(_ row: Row) throws(SettingArgumentError) -> Row {
        if case .managed(let domain)? = row.value?.source { throw .locked(key: row.key ?? "", domain: domain) }
        return row
    }
}

extension PaneDescription.Row {
    /// Whether Settings lets a person change the row's value.
    public var isEditable: Bool {
        switch control {
        case .textField, .toggleSwitch, .slider, .multiValue, .radioGroup: key != nil
        case .titleValue, .childPane, .unknown: false
        }
    }

    /// The value a bare word stands for in this row: a text field's string; a switch's TrueValue
    /// or FalseValue for ``ValueSyntax/booleanWord(_:)``'s words (or the values' own text); a slider's number (an
    /// integer when its DefaultValue is one, else a real); a multi-value's choice by its value,
    /// its title or its short title.
    public func value(fromWord word: String) throws(SettingArgumentError) -> PlistValue {
        let key = key ?? ""
        switch control {
        case .textField:
            return .string(word)
        case .toggleSwitch(_, let trueValue, let falseValue):
            if let on = ValueSyntax.booleanWord(word, in: .setting) { return on ? trueValue : falseValue }
            if word == trueValue.displayText { return trueValue }
            if word == falseValue.displayText { return falseValue }
            throw .invalid("\(key) is a switch: give one of \(ValueSyntax.booleanWordList(in: .setting))")
        case .slider:
            guard let number = Double(word), number.isFinite else { throw .invalid("\(key) is a slider: give a number") }
            if case .integer? = defaultValue, let integer = Int64(word) { return .integer(integer) }
            return .real(number)
        case .multiValue(let options), .radioGroup(let options):
            if let option = options.first(where: { $0.value.displayText == word })
                ?? options.first(where: { $0.title.lowercased() == word.lowercased() })
                ?? options.first(where: { $0.shortTitle?.lowercased() == word.lowercased() })
            {
                return option.value
            }
            let choices = options.map { $0.value.displayText == $0.title ? $0.title : "\($0.title) (\($0.value.displayText))" }
            throw .invalid("\(key) must be one of: \(choices.joined(separator: ", "))")
        case .titleValue, .childPane, .unknown:
            throw .notEditable(key: key, type: type ?? "specifier")
        }
    }
}

/// Why a setting's name or value was not understood; the description is the message for a person.
public enum SettingArgumentError: Error, Sendable, CustomStringConvertible {
    /// No editable row has that key or title.
    case unknown(name: String, settings: [(key: String, title: String?)])
    /// Several keys have that title.
    case ambiguous(name: String, keys: [String])
    /// The row shows a value but Settings does not let a person change it.
    case notEditable(key: String, type: String)
    /// The administrator's managed preferences force the row's value.
    case locked(key: String, domain: String)
    case invalid(String)

    public var description: String {
        switch self {
        case .unknown(let name, let settings):
            let list = settings.map { setting in setting.title.map { "\(setting.key) (\"\($0)\")" } ?? setting.key }
            return "The bundle has no setting \"\(name)\"; its settings are: \(list.joined(separator: ", "))"
        case .ambiguous(let name, let keys):
            return "\"\(name)\" is the title of several settings (\(keys.joined(separator: ", "))); name one by its key"
        case .notEditable(let key, let type):
            return "\(key) is shown by Settings but cannot be changed there (\(type))"
        case .locked(let key, let domain):
            return "\(key) of \(domain) is set by your administrator and cannot be changed"
        case .invalid(let message):
            return message
        }
    }
}

extension Array {
    fileprivate func uniqued<Key: Hashable>(by key: (Element) -> Key) -> [Element] {
        var seen = Set<Key>()
        return filter { seen.insert(key($0)).inserted }
    }
}
