import SettingsBundles
import TestThreads
import Testing

@Suite(.ownThreads) struct LanguageSelectionTests {
    @Test func preferredLanguagesFromTheEnvironment() {
        #expect(LanguageSelection.preferredLanguages(LANGUAGE: "fr:de", LANG: "en_GB.UTF-8") == ["fr", "de", "en-GB"])
        #expect(LanguageSelection.preferredLanguages(LANGUAGE: nil, LANG: "pt_BR.UTF-8@euro") == ["pt-BR"])
        #expect(LanguageSelection.preferredLanguages(LANGUAGE: "", LANG: "C.UTF-8") == [])
        #expect(LanguageSelection.preferredLanguages(LANGUAGE: "de::de_AT", LANG: "de") == ["de", "de-AT"])
        #expect(LanguageSelection.preferredLanguages(LANGUAGE: nil, LANG: "POSIX") == [])
    }

    @Test(arguments: [
        (["fr-FR"], ["de", "en", "fr"], "fr"),
        (["ja", "fr"], ["en", "fr"], "fr"),
        (["zh-Hans"], ["en", "zh_cn"], "zh_cn"),
        (["zh-TW"], ["zh-Hans", "zh-Hant"], "zh-Hant"),
        (["zh-HK"], ["zh-HK", "zh-Hant"], "zh-HK"),
        (["zh-HK"], ["zh-Hans", "zh-Hant"], "zh-Hant"),
        (["zh-Hant-TW"], ["en", "zh-Hant"], "zh-Hant"),
        (["zh-Hant"], ["zh_TW"], "zh_TW"),
        (["pt"], ["pt-PT", "pt-BR"], "pt-BR"),
        (["nb-NO"], ["nb", "nb_NO"], "nb_NO"),
        (["en-US"], ["English", "French"], "English"),
        (["es-MX"], ["es-419", "en"], "es-419"),
        (["ko"], ["Base", "de", "en"], "Base"),
        (["ko"], ["de", "en"], "en"),
        ([], ["fr", "de"], "de"),
    ])
    func choose(_ preferred: [String], _ available: [String], _ expected: String) {
        #expect(LanguageSelection.choose(preferred: preferred, available: available) == expected)
    }

    @Test func noFoldersNoLanguage() {
        #expect(LanguageSelection.choose(preferred: ["en"], available: []) == nil)
    }
}
