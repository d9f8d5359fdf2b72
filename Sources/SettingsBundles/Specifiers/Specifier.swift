import DefaultsCore

/// Where a specifier is: its page file (relative to the bundle) and its index in that page's
/// `PreferenceSpecifiers`.
///
/// ```swift
/// SpecifierLocation(file: "Root.plist", index: 3).description // "Root.plist[3]"
/// ```
public struct SpecifierLocation: Sendable, Hashable, Comparable, CustomStringConvertible {
    public var file: String
    public var index: Int

    public init(file: String, index: Int) {
        self.file = file
        self.index = index
    }

    public var description: String { "\(file)[\(index)]" }

    public static func < (lhs: SpecifierLocation, rhs: SpecifierLocation) -> Bool {
        (lhs.file, lhs.index) < (rhs.file, rhs.index)
    }
}

/// One entry of a page's `PreferenceSpecifiers`, as read: its typed properties, and the raw
/// dictionary (so an unknown or InAppSettingsKit specifier loses nothing).
///
/// Titles here are the raw strings of the file; ``SettingsBundle/localized(_:in:)`` localises them.
///
/// ```swift
/// let rank = bundle.specifier(forKey: "rank")!
/// if case .multiValue(let choices) = rank.kind { print(choices.titles) } // ["Ensign", ...]
/// ```
public struct Specifier: Sendable, Hashable {
    public var location: SpecifierLocation
    /// The `Type` string (`PSToggleSwitchSpecifier`, `IASKButtonSpecifier`, ...); nil when absent.
    public var type: String?
    public var kind: Kind
    /// `Key`, when it is a string (possibly empty; see ``isUsableKey``).
    public var key: String?
    /// `Title`, unlocalised.
    public var title: String?
    public var defaultValue: PlistValue?
    /// `SupportedUserInterfaceIdioms` (`Phone`, `Pad`); nil means every idiom.
    public var supportedIdioms: [String]?
    /// The `ApplicationGroupContainerIdentifier` that governs this specifier: its own, else its page's.
    public var applicationGroup: String?
    /// The whole dictionary as written.
    public var raw: [String: PlistValue]

    public init(
        location: SpecifierLocation, type: String?, kind: Kind, key: String?, title: String?,
        defaultValue: PlistValue?, supportedIdioms: [String]?, applicationGroup: String?, raw: [String: PlistValue]
    ) {
        self.location = location
        self.type = type
        self.kind = kind
        self.key = key
        self.title = title
        self.defaultValue = defaultValue
        self.supportedIdioms = supportedIdioms
        self.applicationGroup = applicationGroup
        self.raw = raw
    }

    /// The suite domain the value lives in, or nil for the app's own domain. Also nil when
    /// `applicationGroup` is not a valid domain name; ``hasUsableDomain`` tells the two apart.
    public var suite: DomainName? { applicationGroup.flatMap { try? DomainName($0) } }

    /// False when an `ApplicationGroupContainerIdentifier` is given but is no valid domain name:
    /// such a specifier contributes no default and constrains no write.
    public var hasUsableDomain: Bool { applicationGroup == nil || suite != nil }

    /// A key the daemon can store: a non-empty string of at most 1 KiB.
    public var isUsableKey: Bool {
        guard let key else { return false }
        return (try? DefaultsKey.validate(key)) != nil
    }

    /// Whether Settings shows this specifier on `idiom`.
    public func isVisible(on idiom: Idiom) -> Bool {
        supportedIdioms.map { $0.contains(idiom.rawValue) } ?? true
    }

    /// True for the types whose value Settings stores under `Key`: text field, toggle, slider,
    /// multi-value, radio group and (read-only) title value.
    public var storesValue: Bool {
        switch kind {
        case .textField, .toggleSwitch, .slider, .multiValue, .radioGroup, .titleValue: true
        case .group, .childPane, .unknown: false
        }
    }
}

/// The interface idiom a pane is shown on, as `SupportedUserInterfaceIdioms` names it.
public enum Idiom: String, Sendable, Hashable, CaseIterable {
    case phone = "Phone"
    case pad = "Pad"

    /// The file-name suffix of idiom-specific pages (`Root~iphone.plist`).
    var fileSuffix: String {
        switch self {
        case .phone: "~iphone"
        case .pad: "~ipad"
        }
    }
}
