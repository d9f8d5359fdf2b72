import DefaultsCore

/// One page file of a bundle (`Root.plist`, a child pane's file): its specifiers in order.
///
/// ```swift
/// let root = bundle.root!
/// root.stringsTable // "Root"
/// root.specifiers.map(\.type) // ["PSGroupSpecifier", "PSTextFieldSpecifier", ...]
/// ```
public struct Page: Sendable, Hashable {
    /// How the file was written.
    public enum Format: String, Sendable, Hashable {
        case xml, binary
        /// Old-style (OpenStep) text.
        case openStep
    }

    /// The file, relative to the bundle directory.
    public var file: String
    public var format: Format
    /// `StringsTable`; nil when absent (see ``StringsTablePolicy`` for what that means).
    public var stringsTable: String?
    /// The page's `ApplicationGroupContainerIdentifier`, inherited by its specifiers.
    public var applicationGroup: String?
    /// The page's top-level `Title` as written, when it is a string. Apple's Settings ignores it;
    /// InAppSettingsKit and defaultsd show a root page's as the bundle's title.
    public var title: String?
    /// The specifiers that are dictionaries, in file order. Their ``Specifier/location`` keeps the
    /// index in the file, so it skips the entries that are not dictionaries.
    public var specifiers: [Specifier]

    public init(
        file: String, format: Format, stringsTable: String?, applicationGroup: String?, title: String? = nil,
        specifiers: [Specifier]
    ) {
        self.file = file
        self.title = title
        self.format = format
        self.stringsTable = stringsTable
        self.applicationGroup = applicationGroup
        self.specifiers = specifiers
    }
}
