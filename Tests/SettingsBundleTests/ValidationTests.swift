import DefaultsCore
import Foundation
import SettingsBundles
import TestThreads
import Testing

/// Write validation against the specifiers that describe a key, with the exact refusals.
@Suite(.ownThreads) struct ValidationTests {
    static let bridge = Result { try BridgeControlTests.load() }

    @Test(arguments: [
        ("officer", PlistValue.string("Jean-Luc Picard")),
        ("officer", ""),
        ("authorizationCode", "1701"),
        ("rank", "Captain"),
        ("warp", false),
        ("warpFactor", .real(7.5)),
        ("warpFactor", .integer(1)),
        ("warpFactor", .real(10)),
        ("favoriteCaptain", "Kirk"),
        ("favoriteAlien", "Borg"),
        ("shieldsUp", .integer(42)),
    ])
    func allowed(_ key: String, _ value: PlistValue) throws {
        #expect(try Self.bridge.get().validate(value, forKey: key) == .ok)
    }

    @Test(arguments: [
        ("officer", PlistValue.integer(42), "officer must be a string (PSTextFieldSpecifier \"Commanding Officer\")"),
        (
            "authorizationCode", .integer(1701),
            "authorizationCode must be a string (PSTextFieldSpecifier \"Authorization Code\")"
        ),
        (
            "rank", "Admiral",
            "rank must be one of \"Ensign\", \"Lieutenant\", \"Lieutenant Commander\", \"Commander\", \"Captain\", "
                + "\"Commodore\" (PSMultiValueSpecifier \"Rank\")"
        ),
        ("warp", "YES", "warp must be true or false (PSToggleSwitchSpecifier \"Warp Drive\")"),
        ("warp", .integer(1), "warp must be true or false (PSToggleSwitchSpecifier \"Warp Drive\")"),
        ("warpFactor", .integer(11), "warpFactor must be a number from 1 to 10 (PSSliderSpecifier \"Warp Factor\")"),
        ("warpFactor", .real(0.5), "warpFactor must be a number from 1 to 10 (PSSliderSpecifier \"Warp Factor\")"),
        ("warpFactor", "5", "warpFactor must be a number from 1 to 10 (PSSliderSpecifier \"Warp Factor\")"),
        ("warpFactor", true, "warpFactor must be a number from 1 to 10 (PSSliderSpecifier \"Warp Factor\")"),
        (
            "favoriteCaptain", "James T. Kirk",
            "favoriteCaptain must be one of \"Kirk\", \"Picard\", \"Sisko\", \"Janeway\", \"Archer\" "
                + "(PSMultiValueSpecifier \"Favorite Captain\")"
        ),
    ])
    func refused(_ key: String, _ value: PlistValue, _ message: String) throws {
        let check = try Self.bridge.get().validate(value, forKey: key)
        #expect(check == .refused(message))
        #expect(!check.isAllowed)
        #expect(check.message == message)
    }

    @Test func refusalsNameTheLocalisedTitle() throws {
        let french = try BridgeControlTests.load(LoadOptions(languages: ["fr"]))
        #expect(
            french.validate(.integer(0), forKey: "warpFactor")
                == .refused(
                    "warpFactor must be a number from 1 to 10 (PSSliderSpecifier \"Facteur de distorsion\")"))
    }

    @Test func togglesRadioGroupsTitleValuesAndOpenSliders() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "engine", "Title": "Engine", "DefaultValue": "Engaged",
                    "TrueValue": "Engaged", "FalseValue": "Disabled",
                ],
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "lights", "Title": "Lights", "DefaultValue": 1,
                    "TrueValue": 1,
                ],
                [
                    "Type": "PSRadioGroupSpecifier", "Key": "theme", "Title": "Theme", "DefaultValue": 0,
                    "Values": [0, 1, 2], "Titles": ["Light", "Dark", "Automatic"],
                ],
                ["Type": "PSTitleValueSpecifier", "Key": "version", "Title": "Version", "DefaultValue": "1.0"],
                ["Type": "PSSliderSpecifier", "Key": "volume", "DefaultValue": 1, "MinimumValue": 0],
                ["Type": "PSMultiValueSpecifier", "Key": "country", "Title": "Country"],
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "padOnly", "Title": "Pad only", "DefaultValue": false,
                    "SupportedUserInterfaceIdioms": ["Pad"],
                ],
                ["Type": "IASKButtonSpecifier", "Key": "button", "Title": "Button"],
            ])
        let loaded = try bundle.load()
        #expect(loaded.validate("Disabled", forKey: "engine") == .ok)
        #expect(
            loaded.validate(false, forKey: "engine")
                == .refused(
                    "engine must be \"Engaged\" or \"Disabled\" (PSToggleSwitchSpecifier \"Engine\")"))
        #expect(loaded.validate(.integer(1), forKey: "lights") == .ok)
        #expect(loaded.validate(false, forKey: "lights") == .ok)
        #expect(
            loaded.validate(true, forKey: "lights")
                == .refused(
                    "lights must be 1 or false (PSToggleSwitchSpecifier \"Lights\")"))
        #expect(loaded.validate(.integer(2), forKey: "theme") == .ok)
        #expect(loaded.validate(.real(2), forKey: "theme") == .ok)
        #expect(
            loaded.validate("2", forKey: "theme")
                == .refused(
                    "theme must be one of 0, 1, 2 (PSRadioGroupSpecifier \"Theme\")"))
        #expect(loaded.validate(.integer(3), forKey: "version") == .ok)
        #expect(loaded.validate(.real(1e9), forKey: "volume") == .ok)
        #expect(
            loaded.validate(.integer(-1), forKey: "volume")
                == .refused(
                    "volume must be a number of at least 0 (PSSliderSpecifier)"))
        #expect(loaded.validate("FR", forKey: "country") == .ok)
        #expect(loaded.validate("x", forKey: "padOnly") == .ok)
        #expect(loaded.validate("x", forKey: "button") == .ok)
        let pad = try bundle.load(LoadOptions(idiom: .pad))
        #expect(
            pad.validate("x", forKey: "padOnly")
                == .refused(
                    "padOnly must be true or false (PSToggleSwitchSpecifier \"Pad only\")"))
    }

    /// When two specifiers describe one key, either one accepting is enough.
    @Test func duplicateKeysAcceptWhatEitherAccepts() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                [
                    "Type": "PSMultiValueSpecifier", "Key": "mode", "Title": "Mode", "DefaultValue": 0,
                    "Values": [0, 1],
                    "Titles": ["Off", "On"],
                ],
                [
                    "Type": "PSMultiValueSpecifier", "Key": "mode", "Title": "Mode (new)", "DefaultValue": 2,
                    "Values": [2, 3],
                    "Titles": ["Fast", "Slow"],
                ],
            ])
        let loaded = try bundle.load()
        #expect(loaded.validate(.integer(1), forKey: "mode") == .ok)
        #expect(loaded.validate(.integer(3), forKey: "mode") == .ok)
        #expect(
            loaded.validate(.integer(4), forKey: "mode")
                == .refused(
                    "mode must be one of 0, 1 (PSMultiValueSpecifier \"Mode\")"))
    }
}
