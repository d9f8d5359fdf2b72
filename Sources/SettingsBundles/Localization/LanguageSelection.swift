import FoundationEssentials

/// Chooses the one `.lproj` folder a bundle is shown in, from the user's preferred languages.
///
/// Like NSBundle, one language is chosen per bundle and every table is read from it: a key
/// missing from that language's table shows the key itself, never another language's text.
///
/// ```swift
/// let preferred = LanguageSelection.preferredLanguages(LANGUAGE: "fr:de", LANG: "en_GB.UTF-8")
/// // ["fr", "de", "en-GB"]
/// LanguageSelection.choose(preferred: preferred, available: ["Base", "de", "en"]) // "de"
/// ```
public enum LanguageSelection {
    /// The preferred languages the way gettext reads the environment: the colon-separated
    /// `LANGUAGE` list first, then `LANG`. Codesets and modifiers (`.UTF-8`, `@euro`) are dropped,
    /// `_` becomes `-`, and `C` / `POSIX` (no language) are skipped. The values are parameters,
    /// not read from the process environment, so callers and tests decide.
    public static func preferredLanguages(LANGUAGE: String?, LANG: String?) -> [String] {
        let candidates = (LANGUAGE ?? "").split(separator: ":").map(String.init) + [LANG ?? ""]
        var result: [String] = []
        for candidate in candidates {
            var name = Substring(candidate)
            if let cut = name.firstIndex(where: { $0 == "." || $0 == "@" }) { name = name[..<cut] }
            let tag = String(name.replacing("_", with: "-"))
            guard !tag.isEmpty, tag != "C", tag != "POSIX", !result.contains(tag) else { continue }
            result.append(tag)
        }
        return result
    }

    /// The `.lproj` name (without the extension) to use, or nil when there is none.
    ///
    /// For each preferred language in turn: the exact tag, its script form (`zh-TW` → `zh-Hant`),
    /// then shorter tags (`zh-Hant-TW` → `zh-Hant` → `zh`), then any region of the same language.
    /// Folder names are compared case-insensitively with `_` as `-`, and legacy names are understood
    /// (`English`, `zh_CN`). Failing all that: `Base`, then `en`, then the first folder by name.
    public static func choose(preferred: [String], available: [String]) -> String? {
        let sorted = available.sorted()
        var byTag: [String: String] = [:]
        for name in sorted where byTag[canonical(name)] == nil { byTag[canonical(name)] = name }
        for language in preferred {
            let tag = canonical(language)
            for candidate in expansions(of: tag) {
                if let name = byTag[candidate] { return name }
            }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            if let name = sorted.first(where: { canonical($0).split(separator: "-").first.map(String.init) == primary })
            {
                return name
            }
        }
        return byTag["base"] ?? byTag["en"] ?? sorted.first
    }

    /// Lower-case BCP 47-like form of a language or folder name.
    static func canonical(_ name: String) -> String {
        let tag = name.replacing("_", with: "-").lowercased()
        return legacyNames[tag] ?? tag
    }

    /// Folder names from before BCP 47 tags, and Chinese region names that mean a script.
    private static let legacyNames: [String: String] = [
        "english": "en", "french": "fr", "german": "de", "japanese": "ja", "spanish": "es", "italian": "it",
        "dutch": "nl", "portuguese": "pt", "swedish": "sv", "danish": "da", "finnish": "fi", "norwegian": "nb",
        "korean": "ko", "russian": "ru", "polish": "pl", "chinese": "zh",
        "zh-cn": "zh-hans", "zh-sg": "zh-hans", "zh-tw": "zh-hant",
    ]

    /// Chinese regions whose script is tried after the exact tag. `zh-tw`, `zh-cn` and `zh-sg` are
    /// not here: `canonical` has already turned them into their script.
    private static let scriptForm: [String: String] = ["zh-hk": "zh-hant", "zh-mo": "zh-hant"]

    /// The tags to try for one preferred language, most specific first.
    private static func expansions(of tag: String) -> [String] {
        var result = [tag]
        if let script = scriptForm[tag] { result.append(script) }
        var parts = tag.split(separator: "-")
        while parts.count > 1 {
            parts.removeLast()
            result.append(parts.joined(separator: "-"))
        }
        return result
    }
}
