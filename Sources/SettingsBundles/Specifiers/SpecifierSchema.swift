import DefaultsCore

/// What Apple's Settings Application Schema Reference documents: the keys of each specifier type,
/// the required ones and the enumerations. Diagnostics are checked against it.
enum SpecifierSchema {
    static let group = "PSGroupSpecifier"
    static let textField = "PSTextFieldSpecifier"
    static let toggleSwitch = "PSToggleSwitchSpecifier"
    static let slider = "PSSliderSpecifier"
    static let titleValue = "PSTitleValueSpecifier"
    static let multiValue = "PSMultiValueSpecifier"
    static let radioGroup = "PSRadioGroupSpecifier"
    static let childPane = "PSChildPaneSpecifier"

    /// Keys every element may carry.
    private static let common: Set<String> = [
        "Type", "SupportedUserInterfaceIdioms", "ApplicationGroupContainerIdentifier",
    ]

    /// The documented keys of each type.
    static let keys: [String: Set<String>] = [
        group: common.union(["Title", "FooterText"]),
        textField: common.union([
            "Title", "Key", "DefaultValue", "IsSecure", "KeyboardType", "AutocapitalizationType", "AutocorrectionType",
        ]),
        toggleSwitch: common.union(["Title", "Key", "DefaultValue", "TrueValue", "FalseValue"]),
        slider: common.union([
            "Key", "DefaultValue", "MinimumValue", "MaximumValue", "MinimumValueImage", "MaximumValueImage",
        ]),
        titleValue: common.union(["Title", "Key", "DefaultValue", "Values", "Titles"]),
        multiValue: common.union([
            "Title", "Key", "DefaultValue", "Values", "Titles", "ShortTitles", "DisplaySortedByTitle",
        ]),
        radioGroup: common.union([
            "Title", "FooterText", "Key", "DefaultValue", "Values", "Titles", "DisplaySortedByTitle",
        ]),
        childPane: common.union(["Title", "File"]),
    ]

    /// Required keys, in the order they are reported. `Title` is reported as a warning, the rest as errors.
    static let required: [String: [String]] = [
        group: [],
        textField: ["Key"],
        toggleSwitch: ["Title", "Key", "DefaultValue"],
        slider: ["Key", "DefaultValue", "MinimumValue", "MaximumValue"],
        titleValue: ["Key", "DefaultValue"],
        multiValue: ["Title", "Key", "DefaultValue", "Values", "Titles"],
        radioGroup: ["Key", "DefaultValue", "Values", "Titles"],
        childPane: ["Title", "File"],
    ]

    static let allKeys: Set<String> = keys.values.reduce(into: []) { $0.formUnion($1) }

    /// Keys of a page's root dictionary.
    static let rootKeys: Set<String> = ["PreferenceSpecifiers", "StringsTable", "ApplicationGroupContainerIdentifier"]

    static let enumerations: [(key: String, allowed: [String])] = [
        ("KeyboardType", KeyboardType.allCases.map(\.rawValue)),
        ("AutocapitalizationType", AutocapitalizationType.allCases.map(\.rawValue)),
        ("AutocorrectionType", AutocorrectionType.allCases.map(\.rawValue)),
    ]

    /// Documented keys whose value must be of one property-list type (besides the ones checked
    /// with their own codes: `Key`, `Values`, `Titles`, `File`, slider bounds, enumerations).
    static let expectedTypes: [String: PlistType] = [
        "Title": .string, "FooterText": .string, "IsSecure": .boolean, "DisplaySortedByTitle": .boolean,
        "MinimumValueImage": .string, "MaximumValueImage": .string, "ShortTitles": .array,
        "ApplicationGroupContainerIdentifier": .string,
    ]

    static func isInAppSettingsKit(_ name: String) -> Bool { name.hasPrefix("IASK") }
}
