/// Every kind of finding, with a stable code (the raw value) that tools and tests can match.
/// docs/SETTINGS-BUNDLES.md lists them with their severities.
///
/// ```swift
/// bundle.diagnostics.with(.stringsUnparseable).map(\.place) // ["en.lproj/Chat.strings:6"]
/// DiagnosticCode.keyDuplicate.rawValue                        // "KEY_DUPLICATE"
/// ```
public enum DiagnosticCode: String, Sendable, Hashable, CaseIterable {
    // MARK: Files

    /// A `.plist` file is neither XML, binary nor old-style text (or is empty).
    case plistUnparseable = "PLIST_UNPARSEABLE"
    /// An XML page that only a lenient reader accepts: a comment before `<?xml?>`, or no declaration.
    case plistNonstandardProlog = "PLIST_NONSTANDARD_PROLOG"
    /// A `.plist` file no root page reaches (an orphan page, or a file that is not a page at all).
    case plistUnreferenced = "PLIST_UNREFERENCED"
    /// A file is a symbolic link that leads out of the bundle; it is not read.
    case fileOutsideBundle = "FILE_OUTSIDE_BUNDLE"
    /// A file is larger than any settings file should be; it is not read.
    case fileTooLarge = "FILE_TOO_LARGE"

    // MARK: Pages

    /// No `Root.plist` (nor an idiom variant) at the top level or in any `.lproj`.
    case noRoot = "NO_ROOT"
    /// `Root.plist` exists only inside `.lproj` folders; the chosen language's copy is used.
    case rootOnlyInLproj = "ROOT_ONLY_IN_LPROJ"
    /// A page file's root object is not a dictionary.
    case pageNotDict = "PAGE_NOT_DICT"
    /// A page file's root dictionary has no `PreferenceSpecifiers` array.
    case pageNoSpecifiers = "PAGE_NO_SPECIFIERS"
    /// A page's root has a key other than `PreferenceSpecifiers`, `StringsTable`,
    /// `ApplicationGroupContainerIdentifier` (a warning when it looks like a misspelling of one).
    case rootUnknownKey = "ROOT_UNKNOWN_KEY"
    case stringsTableNotString = "STRINGSTABLE_NOT_STRING"
    /// `StringsTable` names a table that exists in no `.lproj` (titles show unlocalised).
    case stringsTableMissing = "STRINGSTABLE_MISSING"
    /// `StringsTable` names a table that some `.lproj` folders lack.
    case stringsTablePartial = "STRINGSTABLE_PARTIAL"
    /// A page without `StringsTable` has a table named after its file; Settings does not use it.
    case noStringsTableButFileNamedTableExists = "NO_STRINGSTABLE_BUT_FILE_NAMED_TABLE_EXISTS"
    /// `ApplicationGroupContainerIdentifier` is not a usable domain name; the values it governs are ignored.
    case suiteInvalid = "SUITE_INVALID"

    // MARK: Specifiers

    case specNotDict = "SPEC_NOT_DICT"
    case specMissingType = "SPEC_MISSING_TYPE"
    /// A `Type` Settings does not know (an `IASK*` type is an info, any other a warning); kept, not shown.
    case specUnknownType = "SPEC_UNKNOWN_TYPE"
    case specMissingKey = "SPEC_MISSING_KEY"
    case specMissingTitle = "SPEC_MISSING_TITLE"
    case specMissingDefaultValue = "SPEC_MISSING_DEFAULTVALUE"
    case specMissingValues = "SPEC_MISSING_VALUES"
    case specMissingTitles = "SPEC_MISSING_TITLES"
    case specMissingFile = "SPEC_MISSING_FILE"
    case specMissingMinimumValue = "SPEC_MISSING_MINIMUMVALUE"
    case specMissingMaximumValue = "SPEC_MISSING_MAXIMUMVALUE"
    /// An unknown key that looks like a known one (`DefaultVaule`, `Tilte`, `AutoCorrectionType`).
    case specMisspeltKey = "SPEC_MISSPELT_KEY"
    /// A documented key on a type that does not use it (`Key` on a group, ...).
    case specKeyNotForType = "SPEC_KEY_NOT_FOR_TYPE"
    case specUndocumentedKey = "SPEC_UNDOCUMENTED_KEY"
    /// An InAppSettingsKit key on a standard specifier; Settings ignores it.
    case specIASKKey = "SPEC_IASK_KEY"
    /// A documented key holds the wrong property-list type (`IsSecure` as a string, ...).
    case keyWrongType = "KEY_WRONG_TYPE"
    case keyNotString = "KEY_NOT_STRING"
    case keyEmpty = "KEY_EMPTY"
    case keyWhitespace = "KEY_WHITESPACE"
    /// A key longer than the daemon accepts (1 KiB of UTF-8).
    case keyTooLong = "KEY_TOO_LONG"
    /// The same key (in the same domain) is declared twice in one pane tree; the later default wins.
    case keyDuplicate = "KEY_DUPLICATE"
    /// `KeyboardType`, `AutocapitalizationType` or `AutocorrectionType` outside its documented values.
    case enumInvalid = "ENUM_INVALID"
    /// `SupportedUserInterfaceIdioms` is not an array of `Phone` / `Pad`.
    case idiomInvalid = "IDIOM_INVALID"
    /// A `DefaultValue` of a type the specifier does not store (`"YES"` for a toggle, `0` for a text field,
    /// `"0"` where the Values are numbers).
    case defaultWrongType = "DEFAULT_WRONG_TYPE"
    case toggleDefaultNotTrueOrFalseValue = "TOGGLE_DEFAULT_NOT_TRUE_OR_FALSE_VALUE"
    case defaultNotInValues = "DEFAULT_NOT_IN_VALUES"
    /// The default equals a Value only numerically (`0` vs `0.0`).
    case defaultTypeDiffers = "DEFAULT_TYPE_DIFFERS"
    case valuesNotArray = "VALUES_NOT_ARRAY"
    case titlesNotArray = "TITLES_NOT_ARRAY"
    case valuesTitlesLength = "VALUES_TITLES_LENGTH"
    case shortTitlesLength = "SHORTTITLES_LENGTH"
    case valuesMixedTypes = "VALUES_MIXED_TYPES"
    case valuesDuplicate = "VALUES_DUPLICATE"
    case valuesEmpty = "VALUES_EMPTY"
    case sliderNotNumber = "SLIDER_NOT_NUMBER"
    case sliderRange = "SLIDER_RANGE"
    case sliderDefaultOutOfRange = "SLIDER_DEFAULT_OUT_OF_RANGE"
    case sliderEmptyImage = "SLIDER_EMPTY_IMAGE"

    // MARK: Child panes

    /// The child pane's `File` names no page in the bundle.
    case childFileMissing = "CHILD_FILE_MISSING"
    case childFileNotString = "CHILD_FILE_NOT_STRING"
    /// `File` has a directory, a `.plist` suffix or is a URL: accepted, but not what Apple documents.
    case childFileForm = "CHILD_FILE_FORM"
    /// `File` is absolute or climbs out of the bundle with `..`; it is not followed.
    case childFileOutsideBundle = "CHILD_FILE_OUTSIDE_BUNDLE"
    /// An InAppSettingsKit child pane without `File` (a view controller or segue opens it).
    case childNoFileIASK = "CHILD_NO_FILE_IASK"
    /// An InAppSettingsKit child pane whose `File` is not a page (an HTML file, a URL).
    case childFileNotPlistIASK = "CHILD_FILE_NOT_PLIST_IASK"
    /// A child pane leads back to a page above it; that pane is not expanded again.
    case childCycle = "CHILD_CYCLE"
    case childReferencedMultiple = "CHILD_REFERENCED_MULTIPLE"

    // MARK: Strings files

    /// A `.strings` file with a syntax error: the whole table is ignored, as Apple's parser does.
    case stringsUnparseable = "STRINGS_UNPARSEABLE"
    /// A `.strings` file whose top level is not a dictionary; ignored.
    case stringsNotDict = "STRINGS_NOT_DICT"
    /// The same key twice in one table; the last one wins.
    case stringsDuplicateKey = "STRINGS_DUPLICATE_KEY"
    case stringsEmptyKey = "STRINGS_EMPTY_KEY"
    /// An entry whose value is not a string (an array, a dictionary, data); lookups skip it.
    case stringsValueNotString = "STRINGS_VALUE_NOT_STRING"
    /// Text after the last complete entry that Apple's parser silently drops.
    case stringsTrailingText = "STRINGS_TRAILING_TEXT"
}
