import DefaultsCore
import Foundation
import SettingsBundles
import TestThreads
import Testing

/// The Bridge Control bundle of the classic iOS settings tutorial (Tests/SettingsBundleTests/Fixtures).
@Suite(.ownThreads) struct BridgeControlTests {
    static func load(_ options: LoadOptions = LoadOptions(languages: ["en"])) throws -> SettingsBundle {
        try SettingsBundle.load(at: Fixtures.bridgeControl, options: options)
    }

    @Test func pagesAndSpecifiers() throws {
        let bundle = try Self.load()
        #expect(bundle.diagnostics.isEmpty)
        #expect(bundle.availableLanguages == ["en", "fr"])
        #expect(bundle.language == "en")
        #expect(bundle.rootFile == "Root.plist")
        #expect(bundle.pages.keys.sorted() == ["More.plist", "Root.plist"])
        let root = try #require(bundle.root)
        #expect(root.stringsTable == "Root")
        #expect(
            root.specifiers.map(\.kind) == [
                .group(footerText: nil),
                .textField(
                    .init(
                        isSecure: false, keyboardType: .alphabet, autocapitalizationType: .words,
                        autocorrectionType: .no)),
                .textField(
                    .init(
                        isSecure: true, keyboardType: .numberPad, autocapitalizationType: .none,
                        autocorrectionType: .no)),
                .multiValue(
                    .init(
                        values: ["Ensign", "Lieutenant", "Lieutenant Commander", "Commander", "Captain", "Commodore"],
                        titles: ["Ensign", "Lieutenant", "Lieutenant Commander", "Commander", "Captain", "Commodore"])),
                .toggleSwitch(.init()),
                .group(footerText: nil),
                .slider(
                    .init(
                        minimumValue: 1, maximumValue: 10, minimumValueImage: "turtle.png",
                        maximumValueImage: "rabbit.png")),
                .group(footerText: nil),
                .childPane(.init(file: "More", page: "More.plist")),
            ])
        #expect(
            root.specifiers.map(\.title) == [
                "General Info", "Commanding Officer", "Authorization Code", "Rank", "Warp Drive", "Warp Factor", nil,
                "Additional Info", "More Settings",
            ])
        let more = try #require(bundle.pages["More.plist"])
        #expect(
            more.specifiers.map(\.key) == [nil, "favoriteTea", "favoriteCaptain", "favoriteGadget", "favoriteAlien"])
        #expect(bundle.specifiers.count == 14)
    }

    @Test func bundleDefaults() throws {
        let bundle = try Self.load()
        #expect(
            bundle.defaults.app == [
                "rank": "Ensign", "warp": true, "warpFactor": .real(5),
                "favoriteTea": "Earl Grey", "favoriteCaptain": "Picard", "favoriteGadget": "Tricorder",
                "favoriteAlien": "Vulcan",
            ])
        #expect(bundle.defaults.suites.isEmpty)
        #expect(bundle.defaults.domains == [nil])
        #expect(bundle.defaults.location(of: "warpFactor") == SpecifierLocation(file: "Root.plist", index: 6))
        #expect(bundle.defaults.location(of: "favoriteAlien") == SpecifierLocation(file: "More.plist", index: 4))
        #expect(bundle.defaults.location(of: "officer") == nil)
    }

    @Test func languageFromTheEnvironment() throws {
        let french = try Self.load(LoadOptions(LANGUAGE: nil, LANG: "fr_FR.UTF-8"))
        #expect(french.language == "fr")
        let root = try #require(french.root)
        #expect(french.localized("Warp Factor", in: root) == "Facteur de distorsion")
        // Not in the French table: the key itself, never the English table's text.
        #expect(french.localized("Darjeeling", in: root) == "Darjeeling")
        #expect(
            french.displayTitle(of: try #require(french.specifier(forKey: "warpFactor"))) == "Facteur de distorsion")
        #expect(try Self.load(LoadOptions(LANGUAGE: "de:fr", LANG: "en_US.UTF-8")).language == "fr")
        #expect(try Self.load(LoadOptions(LANGUAGE: "ja", LANG: "ko_KR.UTF-8")).language == "en")
        #expect(try Self.load(LoadOptions(LANGUAGE: nil, LANG: "C")).language == "en")
        #expect(try Self.load(LoadOptions(languages: ["fr-CA"])).language == "fr")
    }
}
