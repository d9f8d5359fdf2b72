import DefaultsCore
import FoundationEssentials

/// A Settings bundle (`Settings.bundle`, `InAppSettings.bundle`, ...) as the Settings app would
/// show it: the pages reached from the root, in one language, for one idiom, with every finding.
/// An immutable value; load it again to see changes on disk.
///
/// ```swift
/// let bundle = try SettingsBundle.load(
///     at: URL(fileURLWithPath: "BridgeControl/Settings.bundle"),
///     options: LoadOptions(LANGUAGE: nil, LANG: "fr_FR.UTF-8"))
/// bundle.defaults.app["warpFactor"]                   // .real(5)
/// bundle.validate(.integer(11), forKey: "warpFactor")  // .refused("warpFactor must be a number from 1 to 10 (...)")
/// print(bundle.renderText { _, _ in nil })            // the root pane, showing the default values
/// ```
public struct SettingsBundle: Sendable {
    /// The bundle directory.
    public let directory: URL
    public let options: LoadOptions
    /// The `.lproj` folders, by name without the extension (`en`, `zh_CN`), sorted.
    public let availableLanguages: [String]
    /// The `.lproj` folder every table is read from; nil when the bundle has none.
    public let language: String?
    /// The root page's file (`Root.plist`, `Root~iphone.plist`, `cs.lproj/Root.plist`); nil when none was found.
    public let rootFile: String?
    /// The pages reached from the root, by file.
    public let pages: [String: Page]
    /// Every specifier of every reached page, in the order Settings walks them: a child pane's
    /// page follows its `PSChildPaneSpecifier` (each page once).
    public let specifiers: [Specifier]
    /// Every `.strings` file in the bundle, by path, whether or not a page uses it.
    public let stringsFiles: [String: StringsFile]
    public let diagnostics: [Diagnostic]
    public let defaults: BundleDefaults
    let localizer: Localizer
    /// Where in ``specifiers`` each key is described: a write's check looks at those only, so it
    /// costs the same in a bundle of ten specifiers and of ten thousand.
    let specifierIndicesByKey: [String: [Int]]
    /// The keys (with their suites) that a secure text field shows: their values are masked in
    /// every row that shows them, not only in that field.
    let secureKeys: Set<SuiteKey>

    struct SuiteKey: Hashable {
        let suite: DomainName?
        let key: String
    }

    init(
        directory: URL, options: LoadOptions, availableLanguages: [String], language: String?, rootFile: String?,
        pages: [String: Page], specifiers: [Specifier], stringsFiles: [String: StringsFile],
        diagnostics: [Diagnostic], defaults: BundleDefaults, localizer: Localizer
    ) {
        self.directory = directory
        self.options = options
        self.availableLanguages = availableLanguages
        self.language = language
        self.rootFile = rootFile
        self.pages = pages
        self.specifiers = specifiers
        self.stringsFiles = stringsFiles
        self.diagnostics = diagnostics
        self.defaults = defaults
        self.localizer = localizer
        var indices: [String: [Int]] = [:]
        for (index, specifier) in specifiers.enumerated() {
            if let key = specifier.key { indices[key, default: []].append(index) }
        }
        self.specifierIndicesByKey = indices
        self.secureKeys = Set(specifiers.compactMap { specifier in
            guard case .textField(let field) = specifier.kind, field.isSecure, let key = specifier.key else { return nil }
            return SuiteKey(suite: specifier.suite, key: key)
        })
    }

    /// Reads the bundle at `directory`. Only a directory that cannot be listed is an error;
    /// everything inside it that is wrong becomes a ``Diagnostic`` and the rest is still read.
    public static func load(at directory: URL, options: LoadOptions = LoadOptions()) throws(SettingsBundleError)
        -> SettingsBundle
    {
        var loader = try BundleLoader(directory: directory, options: options)
        return loader.load()
    }

    public var root: Page? { rootFile.flatMap { pages[$0] } }

    /// The root page's `Title`, localised; nil when it has none (a list then shows the domain).
    public var title: String? {
        guard let root, let title = root.title, !title.isEmpty else { return nil }
        return localized(title, in: root)
    }

    /// The strings table a page's titles are looked up in, under the bundle's ``StringsTablePolicy``.
    public func stringsTable(for page: Page) -> String? {
        if let table = page.stringsTable { return table }
        guard options.stringsTablePolicy == .inAppSettingsKit else { return nil }
        let name = BundleLoader.tableName(forPage: page.file)
        return localizer.hasTable(name) ? name : "Root"
    }

    /// `text` looked up in the strings table of `page`, in the chosen language; `text` itself when
    /// the page is not localised or the table lacks it.
    public func localized(_ text: String, in page: Page) -> String {
        localizer.string(text, table: stringsTable(for: page))
    }

    /// The page a specifier is on.
    public func page(of specifier: Specifier) -> Page? { pages[specifier.location.file] }

    /// Whether `key` (in `suite`; nil: the bundle's own domain) is shown by a secure text field:
    /// its values are secret, so they are masked wherever they are shown and never recorded.
    public func isSecure(_ key: String, suite: DomainName?) -> Bool {
        secureKeys.contains(SuiteKey(suite: suite, key: key))
    }

    /// Every key ``isSecure(_:suite:)`` holds secret in `suite` (nil: the bundle's own domain).
    public func secureKeys(suite: DomainName?) -> Set<String> {
        Set(secureKeys.lazy.filter { $0.suite == suite }.map(\.key))
    }

    /// The first specifier (in walk order) that stores a value under `key` in `suite`.
    public func specifier(forKey key: String, suite: DomainName? = nil) -> Specifier? {
        specifiers.first { $0.storesValue && $0.key == key && $0.hasUsableDomain && $0.suite == suite }
    }

    /// The localised title a person sees for a specifier: its own `Title`, else (for a slider,
    /// which has none) the title of the group it sits in.
    public func displayTitle(of specifier: Specifier) -> String? {
        guard let page = page(of: specifier) else { return specifier.title }
        if let title = specifier.title, !title.isEmpty { return localized(title, in: page) }
        guard case .slider = specifier.kind,
            let position = page.specifiers.firstIndex(where: { $0.location == specifier.location })
        else { return nil }
        for candidate in page.specifiers[..<position].reversed() {
            if case .group = candidate.kind {
                return candidate.title.flatMap { $0.isEmpty ? nil : localized($0, in: page) }
            }
        }
        return nil
    }
}

/// The one failure of ``SettingsBundle/load(at:options:)``: there is no directory to read.
public struct SettingsBundleError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String

    public var description: String { "cannot read the settings bundle \(path): \(reason)" }
}
