import DefaultsCore

extension Specifier {
    /// What a specifier is, with the properties of its type. Properties of the wrong type in the
    /// file are ignored here (and diagnosed), so every field is what Settings would use.
    public enum Kind: Sendable, Hashable {
        /// `PSGroupSpecifier`: starts a section.
        case group(footerText: String?)
        case textField(TextField)
        case toggleSwitch(ToggleSwitch)
        case slider(Slider)
        case multiValue(Choices)
        /// `PSRadioGroupSpecifier`: a section of its own whose rows are the choices.
        case radioGroup(Choices, footerText: String?)
        /// `PSTitleValueSpecifier`: read-only; `Values`/`Titles` map the value to what is shown.
        case titleValue(Choices)
        case childPane(ChildPane)
        /// A type Settings does not know (InAppSettingsKit's `IASK*`, invented ones) or no `Type`
        /// at all: kept with its raw dictionary, never shown, contributes no default.
        case unknown
    }

    /// `PSTextFieldSpecifier` properties, with Apple's defaults for absent keys.
    public struct TextField: Sendable, Hashable {
        public var isSecure: Bool
        public var keyboardType: KeyboardType
        public var autocapitalizationType: AutocapitalizationType
        public var autocorrectionType: AutocorrectionType

        public init(
            isSecure: Bool = false, keyboardType: KeyboardType = .alphabet,
            autocapitalizationType: AutocapitalizationType = .none, autocorrectionType: AutocorrectionType = .default
        ) {
            self.isSecure = isSecure
            self.keyboardType = keyboardType
            self.autocapitalizationType = autocapitalizationType
            self.autocorrectionType = autocorrectionType
        }
    }

    /// `PSToggleSwitchSpecifier`: the values stored for ON and OFF; nil means a bool.
    public struct ToggleSwitch: Sendable, Hashable {
        public var trueValue: PlistValue?
        public var falseValue: PlistValue?

        public init(trueValue: PlistValue? = nil, falseValue: PlistValue? = nil) {
            self.trueValue = trueValue
            self.falseValue = falseValue
        }
    }

    /// `PSSliderSpecifier`: bounds (nil when absent or not a number) and the images at either end.
    public struct Slider: Sendable, Hashable {
        public var minimumValue: Double?
        public var maximumValue: Double?
        public var minimumValueImage: String?
        public var maximumValueImage: String?

        public init(
            minimumValue: Double?, maximumValue: Double?, minimumValueImage: String? = nil,
            maximumValueImage: String? = nil
        ) {
            self.minimumValue = minimumValue
            self.maximumValue = maximumValue
            self.minimumValueImage = minimumValueImage
            self.maximumValueImage = maximumValueImage
        }
    }

    /// `Values` with their `Titles` (and `ShortTitles`), unlocalised. A title that is not a string
    /// in the file (a number) is kept as its text, as InAppSettingsKit shows it.
    public struct Choices: Sendable, Hashable {
        public var values: [PlistValue]
        public var titles: [String]
        public var shortTitles: [String]?
        public var displaySortedByTitle: Bool

        public init(
            values: [PlistValue], titles: [String], shortTitles: [String]? = nil, displaySortedByTitle: Bool = false
        ) {
            self.values = values
            self.titles = titles
            self.shortTitles = shortTitles
            self.displaySortedByTitle = displaySortedByTitle
        }

        /// The index of the first value `-isEqual:` to `value`.
        public func index(of value: PlistValue) -> Int? {
            values.firstIndex { $0.isSettingsEqual(value) }
        }
    }

    /// `PSChildPaneSpecifier`.
    public struct ChildPane: Sendable, Hashable {
        /// `File` as written.
        public var file: String?
        /// The page it leads to, relative to the bundle (`More.plist`, `3rd/Lua.plist`); nil when
        /// no page was found.
        public var page: String?

        public init(file: String?, page: String?) {
            self.file = file
            self.page = page
        }
    }
}

public enum KeyboardType: String, Sendable, Hashable, CaseIterable {
    case alphabet = "Alphabet"
    case numbersAndPunctuation = "NumbersAndPunctuation"
    case numberPad = "NumberPad"
    case url = "URL"
    case emailAddress = "EmailAddress"
}

public enum AutocapitalizationType: String, Sendable, Hashable, CaseIterable {
    case none = "None"
    case sentences = "Sentences"
    case words = "Words"
    case allCharacters = "AllCharacters"
}

public enum AutocorrectionType: String, Sendable, Hashable, CaseIterable {
    case `default` = "Default"
    case no = "No"
    case yes = "Yes"
}
