import DefaultsCore

/// A pane as the Settings app lays it out: sections of rows, localised, with current values and
/// where each comes from, secure values masked. A plain value tree (no Codable) that a caller
/// turns into its own format, e.g. the daemon's JSON; ``renderedText()`` turns it into text.
///
/// ```swift
/// let pane = bundle.describe(lookup: { key, _ in stored[key].map { StoredValue($0, origin: "com.example.bridge") } })!
/// pane.sections[0].title            // "General Info"
/// pane.sections[0].rows[2].displayValue // "Captain"
/// ```
public struct PaneDescription: Sendable, Hashable {
    /// The page file (`Root.plist`, `More.plist`).
    public var file: String
    /// The localised title of the child pane that opens it; nil for the root (Settings shows the app's name).
    public var title: String?
    public var sections: [Section]

    public init(file: String, title: String?, sections: [Section]) {
        self.file = file
        self.title = title
        self.sections = sections
    }

    /// Rows between two group headers. Specifiers before the first group form a section without
    /// a header; a radio group is a section of its own.
    public struct Section: Sendable, Hashable {
        /// The group or radio group that opens the section; nil for the rows before the first group.
        public var location: SpecifierLocation?
        /// Localised; nil or empty means a gap without a header.
        public var title: String?
        /// Localised `FooterText`, shown under the section.
        public var footer: String?
        public var rows: [Row]

        public init(location: SpecifierLocation?, title: String?, footer: String?, rows: [Row]) {
            self.location = location
            self.title = title
            self.footer = footer
            self.rows = rows
        }
    }

    public struct Row: Sendable, Hashable {
        public var location: SpecifierLocation
        /// The `Type` string as written.
        public var type: String?
        public var key: String?
        /// The suite domain the value lives in; nil for the app's own domain.
        public var suite: DomainName?
        /// Localised title; nil when the specifier has none (a slider).
        public var title: String?
        /// The value shown; nil for rows without one (child panes, unknown specifiers).
        public var value: CurrentValue?
        /// The key's bundle default (``SettingsBundle/bundleDefault(of:)``), which "Reset to
        /// default" returns to; nil when it has none.
        public var defaultValue: PlistValue?
        public var control: Control
        /// The value as the row shows it: `ON`, `Captain`, `••••`, `5 (1–10)`; empty when none.
        /// A multi-value whose value is none of its `Values` shows the value and says so
        /// (Settings would show an empty row).
        public var displayValue: String

        public init(
            location: SpecifierLocation, type: String?, key: String?, suite: DomainName?, title: String?,
            value: CurrentValue?, defaultValue: PlistValue? = nil, control: Control, displayValue: String
        ) {
            self.defaultValue = defaultValue
            self.location = location
            self.type = type
            self.key = key
            self.suite = suite
            self.title = title
            self.value = value
            self.control = control
            self.displayValue = displayValue
        }
    }

    public enum Control: Sendable, Hashable {
        case textField(
            isSecure: Bool, keyboardType: KeyboardType,
            autocapitalization: AutocapitalizationType = .none, autocorrection: AutocorrectionType = .default)
        /// `trueValue` and `falseValue` are what the switch stores: its `TrueValue` and
        /// `FalseValue`, else `true` and `false`.
        case toggleSwitch(isOn: Bool, trueValue: PlistValue, falseValue: PlistValue)
        case slider(minimum: Double?, maximum: Double?, minimumImage: String?, maximumImage: String?)
        case multiValue(options: [Option])
        /// The choices are shown as rows of the radio group's section, the selected one checked.
        case radioGroup(options: [Option])
        case titleValue
        /// The page it opens (nil when missing or not a page), and that page described, where the
        /// description first reaches it (nil elsewhere, and for a cycle or when not expanded).
        indirect case childPane(file: String?, pane: PaneDescription?)
        /// A specifier Settings does not show; kept so nothing is lost.
        case unknown(raw: [String: PlistValue])
    }

    /// One choice of a multi-value or radio group, localised, in display order.
    public struct Option: Sendable, Hashable {
        public var title: String
        public var shortTitle: String?
        public var value: PlistValue
        public var isSelected: Bool

        public init(title: String, shortTitle: String?, value: PlistValue, isSelected: Bool) {
            self.title = title
            self.shortTitle = shortTitle
            self.value = value
            self.isSelected = isSelected
        }
    }
}

/// The value a row shows and where it comes from.
public struct CurrentValue: Sendable, Hashable {
    public enum Source: Sendable, Hashable {
        /// The lookup found it; `origin` is what the lookup said (a domain name, typically).
        case stored(origin: String)
        /// Forced by the administrator's managed preferences of `origin`: shown, never editable.
        case managed(origin: String)
        /// Not stored; the default the bundle registers for the key (``SettingsBundle/bundleDefault(of:)``).
        case bundleDefault
        /// Neither stored nor defaulted.
        case unset
    }

    /// The value; nil when unset, or when masked (a secure text field).
    public var value: PlistValue?
    public var source: Source
    /// True for a secure text field: the value is withheld and shown as `••••`.
    public var isMasked: Bool

    /// True when the administrator forces the value: the row cannot be changed.
    public var isLocked: Bool { if case .managed = source { true } else { false } }

    public init(value: PlistValue?, source: Source, isMasked: Bool = false) {
        self.value = value
        self.source = source
        self.isMasked = isMasked
    }
}

/// What a ``ValueLookup`` answers for a stored key: the value and where it was found.
public struct StoredValue: Sendable, Hashable {
    public var value: PlistValue
    public var origin: String
    /// True when the value is forced by the administrator's managed preferences.
    public var isForced: Bool

    public init(_ value: PlistValue, origin: String, isForced: Bool = false) {
        self.value = value
        self.origin = origin
        self.isForced = isForced
    }

    /// A lookup in fixed dictionaries: `app` for the app's own domain (reported as `origin`),
    /// `suites` for suite domains (reported by their name).
    ///
    /// ```swift
    /// let lookup = StoredValue.lookup(in: ["rank": "Captain"], origin: "com.example.bridge")
    /// ```
    public static func lookup(
        in app: [String: PlistValue], origin: String, suites: [DomainName: [String: PlistValue]] = [:]
    ) -> @Sendable (String, DomainName?) -> StoredValue? {
        { key, suite in
            if let suite { return suites[suite]?[key].map { StoredValue($0, origin: suite.rawValue) } }
            return app[key].map { StoredValue($0, origin: origin) }
        }
    }
}

/// Answers the stored value of a key in a domain (nil for the app's own), or nil when none is stored.
public typealias ValueLookup = (_ key: String, _ suite: DomainName?) -> StoredValue?
