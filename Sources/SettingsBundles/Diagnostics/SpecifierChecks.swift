import DefaultsCore
import FoundationEssentials

/// The checks of one specifier dictionary against Apple's schema (``SpecifierSchema``). Checks
/// that need the rest of the bundle (child files, duplicate keys) are the loader's.
enum SpecifierChecks {
    static func check(_ raw: [String: PlistValue], at location: SpecifierLocation) -> [Diagnostic] {
        var found: [Diagnostic] = []
        func add(_ severity: Diagnostic.Severity, _ code: DiagnosticCode, _ message: String) {
            found.append(Diagnostic(severity, code, at: location, message))
        }
        let type = raw["Type"]?.stringValue
        let schemaKeys = type.flatMap { SpecifierSchema.keys[$0] }
        let typeName = type ?? "a specifier"

        switch raw["Type"] {
        case nil:
            add(.error, .specMissingType, "no Type (keys \(raw.keys.sorted().joined(separator: ", "))); not shown")
        case .string(let type) where schemaKeys == nil:
            add(
                SpecifierSchema.isInAppSettingsKit(type) ? .info : .warning, .specUnknownType,
                "\"\(type)\" is not a type Settings knows; kept, not shown")
        case .string:
            break
        case let other?:
            add(.warning, .specUnknownType, "Type is \(other.typeWithArticle), not \(PlistType.string.nameWithArticle); kept, not shown")
        }

        // Misspellings first: a misspelt required key is reported once, as a misspelling.
        var misspelt: [String: String] = [:]
        var unknownKeyFindings: [(Diagnostic.Severity, DiagnosticCode, String)] = []
        for name in raw.keys.sorted() where !(schemaKeys ?? SpecifierSchema.allKeys).contains(name) {
            if let intended = KeySpelling.suggestion(for: name, among: SpecifierSchema.allKeys), raw[intended] == nil {
                misspelt[intended] = name
                unknownKeyFindings.append(
                    (
                        .warning, .specMisspeltKey,
                        "\"\(name)\" looks like a misspelling of \"\(intended)\"; Settings ignores it"
                    ))
            } else if schemaKeys == nil {
                continue
            } else if SpecifierSchema.allKeys.contains(name) {
                unknownKeyFindings.append((.info, .specKeyNotForType, "\"\(name)\" is not documented for \(typeName)"))
            } else if SpecifierSchema.isInAppSettingsKit(name) {
                unknownKeyFindings.append(
                    (.info, .specIASKKey, "InAppSettingsKit key \"\(name)\"; Settings ignores it"))
            } else {
                unknownKeyFindings.append(
                    (.info, .specUndocumentedKey, "undocumented key \"\(name)\" = \(raw[name]?.quotedText ?? "")"))
            }
        }

        for name in SpecifierSchema.required[type ?? ""] ?? [] where raw[name] == nil && misspelt[name] == nil {
            if name == "File", let iask = raw.keys.sorted().first(where: SpecifierSchema.isInAppSettingsKit) {
                add(.info, .childNoFileIASK, "child pane without File, opened by InAppSettingsKit (\(iask))")
                continue
            }
            let keyNote = raw["Key"]?.stringValue.map { " (Key \"\($0)\")" } ?? ""
            add(name == "Title" ? .warning : .error, missingCode(name), "\(typeName) without \(name)\(keyNote)")
        }

        switch raw["Key"] {
        case nil: break
        case .string(let key):
            if key.isEmpty {
                add(.error, .keyEmpty, "\(typeName) has an empty Key")
            } else if key.first?.isWhitespace == true || key.last?.isWhitespace == true {
                add(.warning, .keyWhitespace, "Key \"\(key)\" begins or ends with white space")
            }
            if key.utf8.count > DefaultsKey.maximumBytes {
                add(.error, .keyTooLong, "Key is \(key.utf8.count) bytes; the limit is \(DefaultsKey.maximumBytes)")
            }
        case let other?:
            add(.error, .keyNotString, "Key is \(other.typeWithArticle) (\(other.quotedText)), not \(PlistType.string.nameWithArticle)")
        }

        for (severity, code, message) in unknownKeyFindings { add(severity, code, message) }

        for (name, allowed) in SpecifierSchema.enumerations {
            guard let value = raw[name], !allowed.contains(value.stringValue ?? "\u{0}") else { continue }
            add(
                .warning, .enumInvalid,
                "\(name) \(value.quotedText) is not one of \(allowed.joined(separator: ", ")); Settings uses its default"
            )
        }
        if let idioms = raw["SupportedUserInterfaceIdioms"] {
            let isValid =
                idioms.arrayValue?.allSatisfy { $0.stringValue.flatMap(Idiom.init(rawValue:)) != nil } ?? false
            if !isValid {
                add(
                    .warning, .idiomInvalid,
                    "SupportedUserInterfaceIdioms \(idioms.quotedText) is not a list of Phone and Pad")
            }
        }
        for (name, expected) in SpecifierSchema.expectedTypes.sorted(by: { $0.key < $1.key }) {
            guard schemaKeys?.contains(name) ?? false, let value = raw[name], value.plistType != expected else {
                continue
            }
            add(
                .warning, .keyWrongType,
                "\(name) is \(value.typeWithArticle) (\(value.quotedText)), not \(expected.nameWithArticle)")
        }
        if let group = raw["ApplicationGroupContainerIdentifier"]?.stringValue, (try? DomainName(group)) == nil {
            add(.error, .suiteInvalid, "ApplicationGroupContainerIdentifier \"\(group)\" is not a valid domain name")
        }

        switch type {
        case SpecifierSchema.toggleSwitch: checkToggle(raw, add)
        case SpecifierSchema.textField:
            if let value = raw["DefaultValue"], value.stringValue == nil {
                add(.warning, .defaultWrongType, "text field DefaultValue \(value.typedText) (expected \(PlistType.string.nameWithArticle))")
            }
        case SpecifierSchema.titleValue where raw["Values"] == nil:
            if let value = raw["DefaultValue"], value.stringValue == nil {
                add(.info, .defaultWrongType, "title value DefaultValue \(value.typedText) (documented as \(PlistType.string.nameWithArticle))")
            }
        case SpecifierSchema.slider: checkSlider(raw, add)
        case SpecifierSchema.multiValue, SpecifierSchema.radioGroup, SpecifierSchema.titleValue:
            checkChoices(raw, isTitleValue: type == SpecifierSchema.titleValue, add)
        case SpecifierSchema.childPane:
            checkChildFile(raw, add)
        default: break
        }
        return found
    }

    private typealias Add = (Diagnostic.Severity, DiagnosticCode, String) -> Void

    private static func missingCode(_ key: String) -> DiagnosticCode {
        switch key {
        case "Key": .specMissingKey
        case "Title": .specMissingTitle
        case "DefaultValue": .specMissingDefaultValue
        case "Values": .specMissingValues
        case "Titles": .specMissingTitles
        case "File": .specMissingFile
        case "MinimumValue": .specMissingMinimumValue
        default: .specMissingMaximumValue
        }
    }

    private static func checkToggle(_ raw: [String: PlistValue], _ add: Add) {
        guard let value = raw["DefaultValue"] else { return }
        if raw["TrueValue"] != nil || raw["FalseValue"] != nil {
            let matches = [raw["TrueValue"], raw["FalseValue"]].contains { $0.map(value.isSettingsEqual) ?? false }
            if !matches {
                add(
                    .warning, .toggleDefaultNotTrueOrFalseValue,
                    "DefaultValue \(value.typedText) is neither TrueValue \(raw["TrueValue"]?.typedText ?? "(absent)") "
                        + "nor FalseValue \(raw["FalseValue"]?.typedText ?? "(absent)")")
            }
        } else if case .bool = value {
        } else {
            add(
                .warning, .defaultWrongType,
                "toggle DefaultValue \(value.typedText) (expected \(PlistType.boolean.nameWithArticle); Settings shows it "
                    + "\(value.settingsBoolValue ? "ON" : "OFF"))")
        }
    }

    private static func checkSlider(_ raw: [String: PlistValue], _ add: Add) {
        for name in ["DefaultValue", "MinimumValue", "MaximumValue"] {
            if let value = raw[name], value.sliderNumber == nil {
                add(.warning, .sliderNotNumber, "\(name) \(value.typedText) is not a number")
            }
        }
        if let minimum = raw["MinimumValue"]?.sliderNumber, let maximum = raw["MaximumValue"]?.sliderNumber {
            if minimum >= maximum {
                add(
                    .error, .sliderRange,
                    "MinimumValue \(PlistValue.format(minimum)) is not below MaximumValue \(PlistValue.format(maximum))"
                )
            } else if let value = raw["DefaultValue"]?.sliderNumber, !(minimum...maximum).contains(value) {
                add(
                    .warning, .sliderDefaultOutOfRange,
                    "DefaultValue \(PlistValue.format(value)) is outside \(PlistValue.format(minimum))"
                        + "…\(PlistValue.format(maximum))")
            }
        }
        for name in ["MinimumValueImage", "MaximumValueImage"] where raw[name] == .string("") {
            add(.info, .sliderEmptyImage, "\(name) is an empty string")
        }
    }

    private static func checkChoices(_ raw: [String: PlistValue], isTitleValue: Bool, _ add: Add) {
        let values = raw["Values"]?.arrayValue
        let titles = raw["Titles"]?.arrayValue
        if let value = raw["Values"], values == nil {
            add(.error, .valuesNotArray, "Values is \(value.typeWithArticle), not \(PlistType.array.nameWithArticle)")
        }
        if let value = raw["Titles"], titles == nil {
            add(.error, .titlesNotArray, "Titles is \(value.typeWithArticle), not \(PlistType.array.nameWithArticle)")
        }
        if let values, let titles, values.count != titles.count {
            add(.error, .valuesTitlesLength, "\(values.count) Values but \(titles.count) Titles")
        }
        guard let values else { return }
        if let short = raw["ShortTitles"]?.arrayValue, short.count != values.count {
            add(.warning, .shortTitlesLength, "\(short.count) ShortTitles but \(values.count) Values")
        }
        let types = Set(values.map(\.plistType.name))
        if types.count > 1 {
            add(.warning, .valuesMixedTypes, "Values mix \(types.sorted().joined(separator: ", ")): \(list(values))")
        }
        if Set(values).count != values.count {
            add(.warning, .valuesDuplicate, "Values repeat an entry: \(list(values))")
        }
        if values.isEmpty && !isTitleValue {
            add(.warning, .valuesEmpty, "Values is empty")
        }
        guard let value = raw["DefaultValue"], !values.isEmpty else { return }
        if values.contains(where: value.isSettingsEqual) {
            if !types.contains(value.plistType.name) {
                add(
                    .info, .defaultTypeDiffers,
                    "DefaultValue \(value.typedText) equals a Value only numerically (Values are \(types.sorted().joined(separator: ", ")))"
                )
            }
        } else if values.contains(where: { $0.comparableText == value.comparableText }) {
            add(
                .warning, .defaultWrongType,
                "DefaultValue \(value.typedText) matches a Value only as text; Values \(list(values))")
        } else {
            let isTitle = titles?.contains { $0 == value } ?? false
            add(
                isTitleValue ? .info : .warning, .defaultNotInValues,
                "DefaultValue \(value.typedText) is not among Values \(list(values))"
                    + (isTitle ? " (it is one of the Titles)" : ""))
        }
    }

    private static func checkChildFile(_ raw: [String: PlistValue], _ add: Add) {
        guard let value = raw["File"] else { return }
        guard let file = value.stringValue else {
            add(.error, .childFileNotString, "File is \(value.typeWithArticle), not \(PlistType.string.nameWithArticle)")
            return
        }
        var notes: [String] = []
        if file.hasSuffix(".plist") { notes.append("has a .plist suffix") }
        if file.contains("/") { notes.append("has a directory") }
        if file.contains(#/^[a-z]+:\/\//#) { notes.append("is a URL") }
        if !notes.isEmpty { add(.info, .childFileForm, "File \"\(file)\" \(notes.joined(separator: " and "))") }
    }

    private static func list(_ values: [PlistValue]) -> String {
        let shown = values.prefix(8).map(\.quotedText).joined(separator: ", ")
        return "(" + shown + (values.count > 8 ? ", …" : "") + ")"
    }
}

extension PlistValue {
    /// The value as text for the "matches only as text" check (`"0"` and `0`, `"1.5"` and `1.5`).
    fileprivate var comparableText: String {
        switch self {
        case .real(let d): String(d)
        default: displayText
        }
    }
}
