import DefaultsCore

extension Specifier {
    /// Reads one `PreferenceSpecifiers` dictionary. Never fails: a property of the wrong type is
    /// left at its default here and reported by ``SpecifierChecks``.
    ///
    /// - Parameters:
    ///   - pageApplicationGroup: the page's `ApplicationGroupContainerIdentifier`, inherited
    ///     unless the specifier has its own.
    ///   - childPage: for a child pane, the page its `File` was resolved to.
    init(raw: [String: PlistValue], location: SpecifierLocation, pageApplicationGroup: String?, childPage: String?) {
        let type = raw["Type"]?.stringValue
        let strings = { (name: String) in raw[name]?.stringValue }
        let kind: Kind
        switch type {
        case SpecifierSchema.group:
            kind = .group(footerText: strings("FooterText"))
        case SpecifierSchema.textField:
            kind = .textField(
                TextField(
                    isSecure: raw["IsSecure"] == .bool(true),
                    keyboardType: strings("KeyboardType").flatMap(KeyboardType.init(rawValue:)) ?? .alphabet,
                    autocapitalizationType: strings("AutocapitalizationType").flatMap(AutocapitalizationType.init)
                        ?? .none,
                    autocorrectionType: strings("AutocorrectionType").flatMap(AutocorrectionType.init) ?? .default))
        case SpecifierSchema.toggleSwitch:
            kind = .toggleSwitch(ToggleSwitch(trueValue: raw["TrueValue"], falseValue: raw["FalseValue"]))
        case SpecifierSchema.slider:
            kind = .slider(
                Slider(
                    minimumValue: raw["MinimumValue"]?.sliderNumber, maximumValue: raw["MaximumValue"]?.sliderNumber,
                    minimumValueImage: strings("MinimumValueImage"), maximumValueImage: strings("MaximumValueImage")))
        case SpecifierSchema.multiValue:
            kind = .multiValue(Self.choices(raw))
        case SpecifierSchema.radioGroup:
            kind = .radioGroup(Self.choices(raw), footerText: strings("FooterText"))
        case SpecifierSchema.titleValue:
            kind = .titleValue(Self.choices(raw))
        case SpecifierSchema.childPane:
            kind = .childPane(ChildPane(file: strings("File"), page: childPage))
        default:
            kind = .unknown
        }
        let idioms = raw["SupportedUserInterfaceIdioms"]?.arrayValue.map { $0.compactMap(\.stringValue) }
        self.init(
            location: location, type: type, kind: kind, key: strings("Key"), title: strings("Title"),
            defaultValue: raw["DefaultValue"], supportedIdioms: idioms,
            applicationGroup: strings("ApplicationGroupContainerIdentifier") ?? pageApplicationGroup, raw: raw)
    }

    private static func choices(_ raw: [String: PlistValue]) -> Choices {
        Choices(
            values: raw["Values"]?.arrayValue ?? [],
            titles: raw["Titles"]?.arrayValue?.map(\.displayText) ?? [],
            shortTitles: raw["ShortTitles"]?.arrayValue?.map(\.displayText),
            displaySortedByTitle: raw["DisplaySortedByTitle"] == .bool(true))
    }
}
