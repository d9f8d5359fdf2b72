/// How a bundle is read: for which device, in which language, and which localisation rule.
///
/// ```swift
/// let options = LoadOptions(idiom: .phone, LANGUAGE: env["LANGUAGE"], LANG: env["LANG"])
/// let bundle = try SettingsBundle.load(at: url, options: options)
/// ```
public struct LoadOptions: Sendable, Hashable {
    /// Chooses `Root~iphone.plist` / `Root~ipad.plist` and hides specifiers whose
    /// `SupportedUserInterfaceIdioms` exclude it (they then contribute no default either).
    public var idiom: Idiom
    /// Preferred languages, most wanted first (`fr-CA`, `zh_TW`, `en`).
    public var languages: [String]
    public var stringsTablePolicy: StringsTablePolicy

    public init(idiom: Idiom = .phone, languages: [String] = [], stringsTablePolicy: StringsTablePolicy = .apple) {
        self.idiom = idiom
        self.languages = languages
        self.stringsTablePolicy = stringsTablePolicy
    }

    /// Options whose languages come from the values of the `LANGUAGE` and `LANG` environment
    /// variables (see ``LanguageSelection/preferredLanguages(LANGUAGE:LANG:)``).
    public init(
        idiom: Idiom = .phone, LANGUAGE: String?, LANG: String?, stringsTablePolicy: StringsTablePolicy = .apple
    ) {
        self.init(
            idiom: idiom, languages: LanguageSelection.preferredLanguages(LANGUAGE: LANGUAGE, LANG: LANG),
            stringsTablePolicy: stringsTablePolicy)
    }
}

/// Which strings table a page without `StringsTable` uses.
public enum StringsTablePolicy: String, Sendable, Hashable, CaseIterable {
    /// Apple's documented rule: no `StringsTable`, no localisation.
    case apple
    /// InAppSettingsKit's rule: the page's file name without `.plist`, `.inApp` and `~device`
    /// (`Chat.plist` → `Chat`), or `Root` when no such table exists.
    case inAppSettingsKit
}
