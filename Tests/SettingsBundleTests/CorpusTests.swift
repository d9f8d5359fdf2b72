import DefaultsCore
import Foundation
import SettingsBundles
import SharedCorpus
import TestThreads
import Testing

/// Every bundle of the corpus loads (phone, English) and stays the same: how many findings of
/// each severity, pages, specifiers and defaults. A change here is a behaviour change to explain.
@Suite(.needsSharedCorpus, .ownThreads) struct CorpusTests {
    struct Expected: Sendable {
        var errors: Int, warnings: Int, infos: Int, pages: Int, specifiers: Int, defaults: Int
    }

    static let expected: [String: Expected] = [
        "0xe1f__Spark360-iOS": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 2, defaults: 0),
        "ARISGames__iOSClient": .init(errors: 0, warnings: 0, infos: 1, pages: 1, specifiers: 6, defaults: 4),
        "Artificial-Pancreas__iAPS": .init(errors: 0, warnings: 0, infos: 1, pages: 1, specifiers: 1, defaults: 1),
        "BelledonneCommunications__linphone-iphone": .init(
            errors: 0, warnings: 4, infos: 12, pages: 1, specifiers: 13, defaults: 9),
        "BelledonneCommunications__linphone-iphone--inappsettings": .init(
            errors: 4, warnings: 27, infos: 86, pages: 12, specifiers: 172, defaults: 116),
        "CovidTrackerFr__vitemadose-ios": .init(
            errors: 0, warnings: 2, infos: 27, pages: 29, specifiers: 59, defaults: 0),
        "Esri__geoprocessing-map-ipad": .init(errors: 0, warnings: 1, infos: 2, pages: 1, specifiers: 21, defaults: 16),
        "GarrettAlbright__wptrans": .init(errors: 0, warnings: 0, infos: 0, pages: 3, specifiers: 4, defaults: 0),
        "OneBusAway__onebusaway-iphone": .init(errors: 0, warnings: 1, infos: 0, pages: 1, specifiers: 7, defaults: 3),
        "OpenNMS-Archives__iphone": .init(errors: 0, warnings: 0, infos: 7, pages: 1, specifiers: 7, defaults: 6),
        "Sophiestication__Groceries": .init(errors: 0, warnings: 0, infos: 0, pages: 2, specifiers: 11, defaults: 4),
        "WireGuard__wireguard-apple": .init(errors: 1, warnings: 0, infos: 1, pages: 1, specifiers: 5, defaults: 2),
        "XXTouchNG__XXTExplorer": .init(errors: 0, warnings: 0, infos: 13, pages: 13, specifiers: 26, defaults: 1),
        "apsoftwaredev__psytrack": .init(errors: 0, warnings: 0, infos: 13, pages: 1, specifiers: 1, defaults: 1),
        "criticalmaps__criticalmaps-ios": .init(
            errors: 0, warnings: 0, infos: 4, pages: 6, specifiers: 11, defaults: 1),
        "ebsoftjp__SettingsBundleViewController": .init(
            errors: 1, warnings: 12, infos: 5, pages: 4, specifiers: 34, defaults: 11),
        "ericberman__MyFlightbookiOS": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 20, defaults: 14),
        "futuretap__InAppSettingsKit": .init(
            errors: 8, warnings: 12, infos: 308, pages: 2, specifiers: 33, defaults: 6),
        "futuretap__InAppSettingsKit--2016": .init(
            errors: 2, warnings: 9, infos: 116, pages: 3, specifiers: 81, defaults: 49),
        "futuretap__InAppSettingsKit--tests": .init(
            errors: 6, warnings: 9, infos: 206, pages: 3, specifiers: 86, defaults: 51),
        "grp__newsyc": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 6, defaults: 3),
        "holzschu__a-shell": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 10, defaults: 10),
        "hulop__NavCogIOS": .init(errors: 0, warnings: 1, infos: 0, pages: 1, specifiers: 2, defaults: 2),
        "litchie__dospad": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 22, defaults: 17),
        "meshtastic__Meshtastic-Apple": .init(errors: 0, warnings: 1, infos: 0, pages: 2, specifiers: 21, defaults: 7),
        "mono0926__LicensePlist": .init(errors: 1, warnings: 0, infos: 0, pages: 1, specifiers: 3, defaults: 1),
        "mpiannucci__HackWinds-iOS": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 1, defaults: 0),
        "null09264__SBTranslator": .init(errors: 0, warnings: 2, infos: 4, pages: 2, specifiers: 16, defaults: 8),
        "ooper-shlab__AppPrefs5.1-Swift": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 5, defaults: 3),
        "pguyot__Einstein": .init(errors: 1, warnings: 0, infos: 1, pages: 1, specifiers: 9, defaults: 4),
        "pizza-studio__GenshinPizzaHelper": .init(
            errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 4, defaults: 0),
        "threema-ch__threema-ios": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 3, defaults: 2),
        "utmapp__UTM": .init(errors: 0, warnings: 6, infos: 20, pages: 2, specifiers: 52, defaults: 37),
        "vdhamer__Photo-Club-Hub": .init(errors: 0, warnings: 2, infos: 0, pages: 1, specifiers: 10, defaults: 7),
        "videolan__vlc-ios": .init(errors: 2, warnings: 4, infos: 30, pages: 1, specifiers: 59, defaults: 50),
        "videolan__vlc-ios--tvos": .init(errors: 0, warnings: 0, infos: 4, pages: 1, specifiers: 34, defaults: 27),
        "vkucera__task-coach": .init(errors: 0, warnings: 1, infos: 10, pages: 1, specifiers: 8, defaults: 6),
        "wallabag__ios-app": .init(errors: 0, warnings: 0, infos: 0, pages: 1, specifiers: 6, defaults: 6),
    ]

    @Test func theCorpusIsPresent() {
        #expect(Corpus.folders.count == 38)
        #expect(Set(Corpus.folders) == Set(Self.expected.keys))
    }

    @Test(arguments: Corpus.folders)
    func loadsAndStaysTheSame(_ folder: String) throws {
        let bundle = try Corpus.load(folder)
        let expected = try #require(Self.expected[folder])
        let count = { (severity: Diagnostic.Severity) in bundle.diagnostics.filter { $0.severity == severity }.count }
        #expect(count(.error) == expected.errors)
        #expect(count(.warning) == expected.warnings)
        #expect(count(.info) == expected.infos)
        #expect(bundle.pages.count == expected.pages)
        #expect(bundle.specifiers.count == expected.specifiers)
        #expect(bundle.defaults.app.count == expected.defaults)
        #expect(bundle.root != nil)
        // Every finding points into the bundle, and every specifier into a reached page.
        for diagnostic in bundle.diagnostics {
            #expect(
                FileManager.default.fileExists(atPath: bundle.directory.appendingPathComponent(diagnostic.file).path))
        }
        #expect(bundle.specifiers.allSatisfy { bundle.pages[$0.location.file] != nil })
    }

    /// The other idiom and every preferred language load as well.
    @Test(arguments: Corpus.folders)
    func loadsForEveryIdiomAndLanguage(_ folder: String) throws {
        for idiom in Idiom.allCases {
            for language in ["zh-Hant-TW", "fr-CA", "ja", "nb-NO"] {
                let bundle = try Corpus.load(folder, languages: [language], idiom: idiom, policy: .inAppSettingsKit)
                #expect(bundle.root != nil)
                _ = bundle.describe { _, _ in nil }
            }
        }
    }

    @Test func selectedFindingsOfTheCorpus() throws {
        #expect(
            try Corpus.load("OneBusAway__onebusaway-iphone").findings == ["warning SPEC_MISSPELT_KEY Root.plist[4]"])
        #expect(
            try Corpus.load("pguyot__Einstein").findings == [
                "info ROOT_UNKNOWN_KEY Root.plist", "error KEY_EMPTY Root.plist[4]",
            ])
        #expect(
            try Corpus.load("WireGuard__wireguard-apple").findings == [
                "info ROOT_UNKNOWN_KEY Root.plist", "error PAGE_NOT_DICT Acknowledgements.plist",
            ])
        #expect(try Corpus.load("mono0926__LicensePlist").findings == ["error CHILD_FILE_MISSING Root.plist[1]"])
        #expect(
            try Corpus.load("meshtastic__Meshtastic-Apple").findings == ["warning DEFAULT_NOT_IN_VALUES Root.plist[2]"])
        #expect(
            try Corpus.load("Esri__geoprocessing-map-ipad").diagnostics.atLeast(.warning).map(\.description) == [
                "Root.plist[20]: warning ENUM_INVALID: AutocorrectionType \"None\" is not one of Default, No, Yes; "
                    + "Settings uses its default"
            ])
        let utm = try Corpus.load("utmapp__UTM").diagnostics.atLeast(.warning)
        #expect(
            utm.map { "\($0.code.rawValue) \($0.place)" } == [
                "STRINGS_DUPLICATE_KEY en.lproj/Root.strings:17", "STRINGS_DUPLICATE_KEY en.lproj/Root.strings:20",
                "STRINGS_DUPLICATE_KEY en.lproj/Root.strings:24", "VALUES_MIXED_TYPES Root.plist[12]",
                "DEFAULT_WRONG_TYPE Root.plist[13]", "KEY_DUPLICATE Root.plist[22]",
            ])
        #expect(utm[0].message == "\"Right Click\" is defined on lines 15 and 17; the last one wins")
        let photo = try Corpus.load("vdhamer__Photo-Club-Hub").diagnostics
        #expect(
            photo.map(\.description) == [
                "Root.plist[2]: warning KEY_DUPLICATE: \"github\" is also declared at Root.plist[1]; for other idioms "
                    + "(Pad there, Phone here)",
                "Root.plist[5]: warning KEY_DUPLICATE: \"license\" is also declared at Root.plist[4]; for other idioms "
                    + "(Pad there, Phone here)",
            ])
        let malformed = try Corpus.load("futuretap__InAppSettingsKit--tests").diagnostics.filter {
            $0.file == "Malformed.plist"
        }
        #expect(
            malformed.map { "\($0.severity.rawValue) \($0.code.rawValue)" } == [
                "info ROOT_UNKNOWN_KEY", "error VALUES_TITLES_LENGTH", "info DEFAULT_TYPE_DIFFERS",
                "info PLIST_UNREFERENCED",
            ])
        #expect(malformed[1].message == "1 Values but 2 Titles")
        #expect(malformed[3].message == "a page no child pane leads to")
    }

    /// The specifiers of a hidden idiom stay in the pages but give no default.
    @Test func idiomsFilterDefaults() throws {
        let phone = try Corpus.load("vdhamer__Photo-Club-Hub", idiom: .phone)
        let pad = try Corpus.load("vdhamer__Photo-Club-Hub", idiom: .pad)
        #expect(phone.defaults.location(of: "github") == SpecifierLocation(file: "Root.plist", index: 2))
        #expect(pad.defaults.location(of: "github") == SpecifierLocation(file: "Root.plist", index: 1))
        #expect(phone.specifiers.count == pad.specifiers.count)
    }

    @Test func taskCoachHasItsRootOnlyInLanguageFolders() throws {
        let french = try Corpus.load("vkucera__task-coach", languages: ["fr"])
        #expect(french.rootFile == "fr.lproj/Root.plist")
        #expect(french.findings.contains("warning ROOT_ONLY_IN_LPROJ fr.lproj/Root.plist"))
        let korean = try Corpus.load("vkucera__task-coach", languages: ["ko"])
        #expect(korean.language == "en")
        #expect(korean.rootFile == "en.lproj/Root.plist")
    }

    @Test func childPaneFilesWithDirectoriesSpacesAndDots() throws {
        let wptrans = try Corpus.load("GarrettAlbright__wptrans")
        #expect(wptrans.pages.keys.sorted() == ["Root.plist", "SVProgressHUDLicense.plist", "WPTrans license.plist"])
        let critical = try Corpus.load("criticalmaps__criticalmaps-ios")
        #expect(
            critical.pages.keys.sorted() == [
                "Root.plist", "com.mono0926.LicensePlist.plist", "com.mono0926.LicensePlist/Crypto.plist",
                "com.mono0926.LicensePlist/GrowingTextView.plist", "com.mono0926.LicensePlist/SDWebImage.plist",
                "com.mono0926.LicensePlist/swift-snapshot-testing.plist",
            ])
        let explorer = try Corpus.load("XXTouchNG__XXTExplorer", languages: ["zh-Hans"])
        #expect(explorer.pages.keys.contains("3rd/Lua.plist"))
        #expect(explorer.language == "zh-Hans")
    }

    @Test func applicationGroupSuite() throws {
        let watch = try Corpus.load("mpiannucci__HackWinds-iOS")
        let suite = try DomainName("group.com.mpiannucci.HackWinds")
        let field = try #require(watch.specifier(forKey: "DefaultBuoyLocation", suite: suite))
        #expect(field.applicationGroup == "group.com.mpiannucci.HackWinds")
        #expect(watch.specifier(forKey: "DefaultBuoyLocation") == nil)
        #expect(
            watch.validate(.integer(44097), forKey: "DefaultBuoyLocation", suite: suite)
                == .refused(
                    "DefaultBuoyLocation must be a string (PSTextFieldSpecifier \"Buoy Location\")"))
        #expect(watch.validate(.integer(44097), forKey: "DefaultBuoyLocation") == .ok)
    }

    /// Titles that differ only by a leading zero-width space stay apart.
    @Test func zeroWidthSpacesAreKept() throws {
        let pizza = try Corpus.load("pizza-studio__GenshinPizzaHelper")
        let titles = pizza.specifiers.compactMap(\.title)
        #expect(Set(titles).count == titles.count)
        #expect(titles.contains { $0.unicodeScalars.first == "\u{200B}" })
    }
}
