import DefaultsCore
import Foundation
import SettingsBundles
import TestThreads
import Testing

/// Panes as Settings lays them out: the text rendering and the structured description.
@Suite(.ownThreads) struct RenderingTests {
    static let stored: [String: PlistValue] = [
        "officer": "Jean-Luc Picard", "authorizationCode": "1701", "rank": "Captain", "warp": false,
        "favoriteCaptain": "Kirk",
    ]
    static let lookup = StoredValue.lookup(in: stored, origin: "com.example.bridge")

    @Test func bridgeControlRootPane() throws {
        let bundle = try BridgeControlTests.load()
        #expect(
            bundle.renderText(lookup: Self.lookup) == """
                GENERAL INFO
                  Commanding Officer  Jean-Luc Picard
                  Authorization Code  ••••
                  Rank                Captain
                  Warp Drive          OFF

                WARP FACTOR
                                      5 (1–10)

                ADDITIONAL INFO
                  More Settings       >

                """)
    }

    @Test func bridgeControlInFrenchWithItsDefaults() throws {
        let bundle = try BridgeControlTests.load(LoadOptions(LANGUAGE: "fr", LANG: nil))
        #expect(
            bundle.renderText { _, _ in nil } == """
                INFORMATIONS GÉNÉRALES
                  Commandant
                  Code d’autorisation
                  Grade                Enseigne
                  Distorsion           ON

                FACTEUR DE DISTORSION
                                       5 (1–10)

                INFORMATIONS SUPPLÉMENTAIRES
                  Autres réglages      >

                """)
        #expect(
            bundle.renderText(pane: "More.plist", lookup: Self.lookup) == """
                FAVORIS
                  Thé préféré             Earl Grey
                  Capitaine préféré       James T. Kirk
                  Gadget préféré          Tricordeur
                  Extraterrestre préféré  Vulcain

                """)
    }

    @Test func bridgeControlDescription() throws {
        let bundle = try BridgeControlTests.load()
        let root = try #require(bundle.describe(lookup: Self.lookup))
        #expect(root.file == "Root.plist")
        #expect(root.title == nil)
        #expect(root.sections.map(\.title) == ["General Info", "Warp Factor", "Additional Info"])
        #expect(root.sections.map(\.location) == [0, 5, 7].map { SpecifierLocation(file: "Root.plist", index: $0) })
        let general = root.sections[0].rows
        #expect(general.map(\.key) == ["officer", "authorizationCode", "rank", "warp"])
        #expect(
            general[0].value == CurrentValue(value: "Jean-Luc Picard", source: .stored(origin: "com.example.bridge")))
        // The secure field: where the value comes from, but never the value.
        #expect(
            general[1].value == CurrentValue(value: nil, source: .stored(origin: "com.example.bridge"), isMasked: true))
        #expect(general[1].control == .textField(isSecure: true, keyboardType: .numberPad, autocorrection: .no))
        #expect(general[1].displayValue == "••••")
        #expect(general[3].control == .toggleSwitch(isOn: false, trueValue: true, falseValue: false))
        #expect(general[3].displayValue == "OFF")
        guard case .multiValue(let ranks) = general[2].control else {
            Issue.record("rank is not a multi-value")
            return
        }
        #expect(ranks.filter(\.isSelected).map(\.title) == ["Captain"])
        #expect(ranks.count == 6)

        let slider = try #require(root.sections[1].rows.first)
        #expect(slider.title == nil)
        #expect(slider.value == CurrentValue(value: .real(5), source: .bundleDefault))
        #expect(
            slider.control == .slider(minimum: 1, maximum: 10, minimumImage: "turtle.png", maximumImage: "rabbit.png"))
        #expect(slider.displayValue == "5 (1–10)")

        let child = try #require(root.sections[2].rows.first)
        #expect(child.value == nil)
        guard case .childPane("More.plist", let more?) = child.control else {
            Issue.record("More Settings does not open a pane")
            return
        }
        #expect(more.file == "More.plist")
        #expect(more.title == "More Settings")
        #expect(more.sections.map(\.title) == ["Favorites"])
        #expect(more.sections[0].rows.map(\.displayValue) == ["Earl Grey", "James T. Kirk", "Tricorder", "Vulcan"])
        #expect(
            more.sections[0].rows.map(\.value?.source) == [
                .bundleDefault, .stored(origin: "com.example.bridge"),
                .bundleDefault, .bundleDefault,
            ])
        #expect(
            bundle.describe(pane: "Root.plist", expandingChildren: false, lookup: Self.lookup)?
                .sections[2].rows[0].control == .childPane(file: "More.plist", pane: nil))

        let unset = try #require(bundle.describe { _, _ in nil })
        #expect(unset.sections[0].rows[0].value == CurrentValue(value: nil, source: .unset))
        #expect(unset.sections[0].rows[1].value == CurrentValue(value: nil, source: .unset, isMasked: true))
        #expect(unset.sections[0].rows[1].displayValue == "")
    }

    /// Radio groups, footers, gaps, short titles, title values, toggles by TrueValue and by
    /// boolValue, hidden idioms and unknown types.
    @Test func everyKindOfRow() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "before", "Title": "Before any group",
                    "DefaultValue": "YES",
                ],
                Spec.group("Display", footer: "Shown under the display rows."),
                [
                    "Type": "PSMultiValueSpecifier", "Key": "size", "Title": "Text Size", "DefaultValue": 2,
                    "Values": [1, 2, 3], "Titles": ["Small", "Medium", "Large"], "ShortTitles": ["S", "M", "L"],
                ],
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "engine", "Title": "Engine", "DefaultValue": "Disabled",
                    "TrueValue": "Engaged", "FalseValue": "Disabled",
                ],
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "padOnly", "Title": "Only on iPad", "DefaultValue": true,
                    "SupportedUserInterfaceIdioms": ["Pad"],
                ],
                ["Type": "IASKButtonSpecifier", "Key": "button", "Title": "A button"],
                [
                    "Type": "PSRadioGroupSpecifier", "Key": "theme", "Title": "Theme", "DefaultValue": "auto",
                    "Values": ["light", "dark", "auto"], "Titles": ["Light", "Dark", "Automatic"],
                    "FooterText": "Automatic follows the system.",
                ],
                [
                    "Type": "PSTitleValueSpecifier", "Key": "version", "Title": "Version", "DefaultValue": "1",
                    "Values": ["1"], "Titles": ["One"],
                ],
                ["Type": "PSTitleValueSpecifier", "Key": "build", "Title": "Build", "DefaultValue": 42],
                ["Type": "PSTextFieldSpecifier", "Key": "token", "Title": "Token", "IsSecure": true],
                Spec.group("", footer: "A gap with a footer\nover two lines."),
                [
                    "Type": "PSMultiValueSpecifier", "Key": "unknownValue", "Title": "Unmatched", "DefaultValue": 9,
                    "Values": [1], "Titles": ["One"],
                ],
            ])
        let loaded = try bundle.load()
        // Rows after a gap belong to it; its footer comes under them.
        #expect(
            loaded.renderText(lookup: StoredValue.lookup(in: ["engine": "Engaged"], origin: "app")) == """
                  Before any group  ON

                DISPLAY
                  Text Size         M
                  Engine            ON
                    Shown under the display rows.

                THEME
                    Light
                    Dark
                  ✓ Automatic
                    Automatic follows the system.

                  Version           One
                  Build             42
                  Token

                  Unmatched         9 (not one of the choices)
                    A gap with a footer
                    over two lines.

                """)
        let pane = try #require(loaded.describe { _, _ in nil })
        // The IASK button is kept in the description, as a row Settings does not show.
        #expect(
            pane.sections[1].rows.map(\.type) == [
                "PSMultiValueSpecifier", "PSToggleSwitchSpecifier", "IASKButtonSpecifier",
            ])
        guard case .unknown(let raw) = pane.sections[1].rows[2].control else {
            Issue.record("the IASK button is not an unknown row")
            return
        }
        #expect(raw["Title"] == "A button")
        #expect(pane.sections[2].rows[0].displayValue == "Automatic")

        let onPad = try bundle.load(LoadOptions(idiom: .pad)).renderText { _, _ in nil }
        #expect(onPad.contains("  Only on iPad      ON\n"))
    }

    @Test func sortedByTitleAndWideCharacters() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                [
                    "Type": "PSRadioGroupSpecifier", "Key": "fruit", "Title": "Fruit", "DefaultValue": "b",
                    "Values": ["c", "a", "b"], "Titles": ["cherry", "Apple", "banana"], "DisplaySortedByTitle": true,
                ],
                ["Type": "PSToggleSwitchSpecifier", "Key": "wide", "Title": "名字", "DefaultValue": true],
                ["Type": "PSToggleSwitchSpecifier", "Key": "narrow", "Title": "Name", "DefaultValue": false],
            ])
        let text = try bundle.load().renderText { _, _ in nil }
        #expect(
            text == """
                FRUIT
                    Apple
                  ✓ banana
                    cherry

                  名字  ON
                  Name  OFF

                """)
    }

    @Test func textColumns() {
        #expect(
            PaneDescription(
                file: "x", title: nil,
                sections: [
                    .init(
                        location: nil, title: nil, footer: nil,
                        rows: [
                            .init(
                                location: .init(file: "x", index: 0), type: nil, key: nil, suite: nil,
                                title: "\u{200B}Zero",
                                value: nil, control: .titleValue, displayValue: "a"),
                            .init(
                                location: .init(file: "x", index: 1), type: nil, key: nil, suite: nil, title: "Four",
                                value: nil, control: .titleValue, displayValue: "b"),
                        ])
                ]
            ).renderedText() == "  \u{200B}Zero  a\n  Four  b\n")
    }

    @Test func aRadioGroupsValueThatIsNoChoiceIsFlaggedUnderItsChoices() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                [
                    "Type": "PSRadioGroupSpecifier", "Key": "theme", "Title": "Theme", "DefaultValue": "sepia",
                    "Values": ["light", "dark"], "Titles": ["Light", "Dark"],
                ]
            ])
        #expect(
            try bundle.load().renderText { _, _ in nil } == """
                THEME
                    Light
                    Dark
                    "sepia" (not one of the choices)

                """)
        // A stored value that is one of them is checked as usual, with nothing flagged.
        #expect(
            try bundle.load().renderText(lookup: StoredValue.lookup(in: ["theme": "dark"], origin: "app"))
                == "THEME\n    Light\n  ✓ Dark\n")
    }

    /// A key declared twice has one bundle default, the later declaration's (what
    /// `BundleDefaults` registers and the app reads): every row of the key shows it and resets to it.
    @Test func everyRowOfAKeyDeclaredTwiceShowsTheDefaultTheBundleRegisters() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage("Root.plist", [Spec.toggle("warp", "Warp", default: false), Spec.child("More", file: "More")])
        try bundle.writePage("More.plist", [Spec.toggle("warp", "Warp again", default: true)])
        let loaded = try bundle.load()
        #expect(loaded.defaults.app == ["warp": true])
        #expect(loaded.defaults.location(of: "warp") == SpecifierLocation(file: "More.plist", index: 0))
        #expect(loaded.findings.contains("warning KEY_DUPLICATE More.plist[0]"))
        var rows: [PaneDescription.Row] = []
        for file in ["Root.plist", "More.plist"] {
            let pane = try #require(loaded.describe(pane: file, expandingChildren: false) { _, _ in nil })
            rows += pane.sections.flatMap(\.rows).filter { $0.key == "warp" }
        }
        #expect(rows.map(\.location) == [SpecifierLocation(file: "Root.plist", index: 0), SpecifierLocation(file: "More.plist", index: 0)])
        for row in rows {
            #expect(row.value == CurrentValue(value: true, source: .bundleDefault), "\(row.location)")
            #expect(row.defaultValue == true, "\(row.location)")
            #expect(row.displayValue == "ON", "\(row.location)")
        }
    }

    /// A key that a secure text field shows is masked in every row that shows it: a title value,
    /// a toggle or a multi-value of the same key says neither the value nor which choice it is.
    @Test func aSecureKeyIsMaskedInEveryRowThatShowsIt() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                ["Type": "PSTextFieldSpecifier", "Key": "pin", "Title": "PIN", "IsSecure": true],
                ["Type": "PSTitleValueSpecifier", "Key": "pin", "Title": "PIN again"],
                ["Type": "PSMultiValueSpecifier", "Key": "pin", "Title": "PIN choice", "Values": ["1234", "0000"], "Titles": ["A", "B"]],
                Spec.toggle("pin", "PIN toggle"),
                ["Type": "PSTitleValueSpecifier", "Key": "open", "Title": "Not secret"],
            ])
        let loaded = try bundle.load()
        let root = try #require(loaded.describe(lookup: StoredValue.lookup(in: ["pin": "1234", "open": "visible"], origin: "app")))
        let rows = root.sections.flatMap(\.rows)
        #expect(rows.count == 5)
        for row in rows where row.key == "pin" {
            #expect(row.value?.value == nil, "\(row.title ?? "")")
            #expect(row.value?.isMasked == true, "\(row.title ?? "")")
            #expect(row.displayValue == "••••", "\(row.title ?? "")")
        }
        if case .multiValue(let options) = rows[2].control {
            #expect(options.allSatisfy { !$0.isSelected })
        } else {
            Issue.record("not a multi-value: \(rows[2].control)")
        }
        #expect(rows[4].displayValue == "visible")
        #expect(rows[4].value?.isMasked == false)
    }
}
