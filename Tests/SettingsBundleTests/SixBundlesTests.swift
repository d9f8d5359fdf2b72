import DefaultsCore
import Foundation
import SettingsBundles
import SharedCorpus
import TestThreads
import Testing

/// Exact specifiers, defaults, localisation and diagnostics of six corpus bundles
/// (the research notes' oracle, §5).
@Suite(.needsSharedCorpus, .ownThreads) struct SixBundlesTests {
    static func specifier(_ bundle: SettingsBundle, _ file: String, _ index: Int) throws -> Specifier {
        try #require(bundle.pages[file]?.specifiers.first { $0.location.index == index })
    }

    static func title(_ bundle: SettingsBundle, _ file: String, _ index: Int) throws -> String? {
        let specifier = try specifier(bundle, file, index)
        return try specifier.title.map { bundle.localized($0, in: try #require(bundle.pages[file])) }
    }

    // MARK: SBTranslator: a child pane, every standard type, zh-Hans

    @Test func sbTranslator() throws {
        let bundle = try Corpus.load("null09264__SBTranslator")
        let root = try #require(bundle.root)
        #expect(root.stringsTable == "Root")
        #expect(
            root.specifiers.map(\.type) == [
                "PSGroupSpecifier", "PSTextFieldSpecifier", "PSToggleSwitchSpecifier", "PSSliderSpecifier",
                "PSGroupSpecifier", "PSTextFieldSpecifier", "PSMultiValueSpecifier", "PSGroupSpecifier",
                "PSSliderSpecifier", "PSTitleValueSpecifier", "PSRadioGroupSpecifier", "PSGroupSpecifier",
                "PSChildPaneSpecifier",
            ])
        #expect(
            root.specifiers.map(\.key) == [
                nil, "name_preference", "enabled_preference", "slider_preference", nil, "name", "multi_value", nil,
                "slider_group_3", "ad", "radio", nil, nil,
            ])
        #expect(root.specifiers[0].kind == .group(footerText: "Hello"))
        #expect(
            root.specifiers[1].kind
                == .textField(
                    .init(
                        isSecure: true, keyboardType: .alphabet,
                        autocapitalizationType: .none, autocorrectionType: .no)))
        #expect(
            root.specifiers[3].kind
                == .slider(
                    .init(
                        minimumValue: 0, maximumValue: 1, minimumValueImage: "",
                        maximumValueImage: "")))
        #expect(
            root.specifiers[6].kind
                == .multiValue(
                    .init(
                        values: ["1", "2", "3"], titles: ["选项A", "选项B", "选项C"],
                        shortTitles: ["A", "B", "C"])))
        #expect(root.specifiers[9].kind == .titleValue(.init(values: ["1"], titles: ["Hello"])))
        #expect(
            root.specifiers[10].kind
                == .radioGroup(
                    .init(
                        values: ["1", "2"], titles: ["甲", "乙"],
                        displaySortedByTitle: true), footerText: "都说了只能选一个"))
        #expect(root.specifiers[12].kind == .childPane(.init(file: "Child", page: "Child.plist")))

        let child = try #require(bundle.pages["Child.plist"])
        #expect(child.specifiers.map(\.key) == [nil, "enabled_preference", "slider_preference"])
        #expect(child.specifiers[0].kind == .group(footerText: "原来的最后一组摇身一变，变成了第一组 = ="))
        // Walk order: the child's page follows its child pane.
        #expect(
            bundle.specifiers.map(\.location.description).suffix(4) == [
                "Root.plist[12]", "Child.plist[0]", "Child.plist[1]", "Child.plist[2]",
            ])

        #expect(
            bundle.defaults.app == [
                "name_preference": "我是第一组", "enabled_preference": true, "slider_preference": .real(0.5),
                "name": "我是第二组", "multi_value": "2", "slider_group_3": .integer(1), "ad": "1", "radio": "2",
            ])
        #expect(bundle.defaults.location(of: "enabled_preference") == SpecifierLocation(file: "Child.plist", index: 1))
        #expect(
            bundle.findings == [
                "info SLIDER_EMPTY_IMAGE Root.plist[3]", "info SLIDER_EMPTY_IMAGE Root.plist[3]",
                "info SLIDER_EMPTY_IMAGE Child.plist[2]", "info SLIDER_EMPTY_IMAGE Child.plist[2]",
                "warning KEY_DUPLICATE Child.plist[1]", "warning KEY_DUPLICATE Child.plist[2]",
            ])

        // Only "Group" is in the tables; every other title shows as written.
        #expect(try Self.title(bundle, "Root.plist", 0) == "Group")
        let chinese = try Corpus.load("null09264__SBTranslator", languages: ["zh-Hans"])
        #expect(try Self.title(chinese, "Root.plist", 0) == "群组")
        #expect(try Self.title(chinese, "Root.plist", 1) == "名字")
        #expect(chinese.stringsFiles["zh-Hans.lproj/Root.strings"]?.format == .text(.utf16LEWithBOM))
        #expect(
            chinese.stringsFiles["zh-Hans.lproj/Root.strings"]?.entries == [
                "Group": "群组", "Name": "名字", "none given": "啥都没有", "Enabled": "启用",
            ])
    }

    // MARK: MyFlightbook: symbolic titles, en/fr, a clean bundle

    @Test func myFlightbook() throws {
        let english = try Corpus.load("ericberman__MyFlightbookiOS")
        let french = try Corpus.load("ericberman__MyFlightbookiOS", languages: ["fr-FR"])
        #expect(english.diagnostics.isEmpty)
        #expect(french.language == "fr")
        let root = try #require(english.root)
        #expect(root.specifiers.count == 20)
        #expect(
            root.specifiers[2].kind
                == .textField(
                    .init(
                        isSecure: true, keyboardType: .alphabet,
                        autocapitalizationType: .none, autocorrectionType: .no)))
        #expect(root.specifiers[4].kind == .toggleSwitch(.init(trueValue: true, falseValue: false)))
        #expect(
            english.defaults.app == [
                "keyEmail": "", "keyPass": "", "keyIncludeHeliports": false, "prefKeyAutoHobbs": 0,
                "prefKeyAutoTotal": 0,
                "keyRoundNearestTenth": false, "keyUseHHMM": false, "keySuppressUTC": false,
                "keyAutoDetectTakeOffAndLanding": false, "keyAutoDetectRoute": false, "keyPrefTakeOffSpeed": 55,
                "keyNightFlightPref": 0, "keyNightLandingPref": 0, "keyMappingMode": 2,
            ])
        #expect(try Self.title(english, "Root.plist", 14) == "Record flight data")
        #expect(try Self.title(french, "Root.plist", 14) == "Enregistrer les données de vol")
        #expect(try Self.title(french, "Root.plist", 0) == "Réglages pour MyFlightbook")

        let rows = { (bundle: SettingsBundle) in
            try #require(bundle.describe { _, _ in nil }).sections.flatMap(\.rows)
        }
        let displayed = { (bundle: SettingsBundle, index: Int) in
            try rows(bundle).first { $0.location.index == index }?.displayValue
        }
        #expect(try displayed(english, 16) == "End of civil twilight")
        #expect(try displayed(french, 16) == "Fin du crépuscule civil")
        #expect(try displayed(english, 19) == "Satellite")
        #expect(try displayed(english, 15) == "55Kts")
        let totalTime = try #require(try rows(english).first { $0.key == "prefKeyAutoTotal" })
        guard case .multiValue(let options) = totalTime.control else {
            Issue.record("prefKeyAutoTotal is not a multi-value row")
            return
        }
        #expect(options[5].title == "Flight Start to Engine End")
        #expect(options[0].isSelected)
    }

    // MARK: InAppSettingsKit: IASK types, the device root, TrueValue/FalseValue

    @Test func inAppSettingsKit() throws {
        let bundle = try Corpus.load("futuretap__InAppSettingsKit")
        #expect(bundle.rootFile == "Root~iphone.plist")
        #expect(try Corpus.load("futuretap__InAppSettingsKit", idiom: .pad).rootFile == "Root~ipad.plist")
        let root = try #require(bundle.root)
        #expect(
            root.specifiers.map(\.type) == [
                "IASKButtonSpecifier", "IASKButtonSpecifier", "PSGroupSpecifier", "PSToggleSwitchSpecifier",
                "PSGroupSpecifier", "PSTextFieldSpecifier", "PSGroupSpecifier", "PSChildPaneSpecifier",
                "PSGroupSpecifier", "PSTitleValueSpecifier", "PSTitleValueSpecifier",
            ])
        // An unknown type keeps its whole dictionary.
        #expect(root.specifiers[0].kind == .unknown)
        #expect(root.specifiers[0].raw["IASKCellImage"] == "facebook")
        #expect(root.specifiers[0].key == "FacebookButton")

        let advanced = try #require(bundle.pages["Advanced.plist"])
        #expect(advanced.specifiers.count == 22)
        #expect(
            advanced.specifiers[1].kind
                == .slider(
                    .init(
                        minimumValue: 1, maximumValue: 5,
                        minimumValueImage: "slow.png", maximumValueImage: "fast.png")))
        #expect(advanced.specifiers[5].kind == .toggleSwitch(.init(trueValue: .integer(1), falseValue: .integer(2))))

        #expect(
            bundle.defaults.app == [
                "toggleSwitch": true, "sensitivity": .integer(2), "switchOther": true, "AutoConnect": "NO",
                "version": "1.0", "copyright": "Luc Vandal, Ortwin Gentz",
            ])
        let tree = bundle.diagnostics.filter { ["Root~iphone.plist", "Advanced.plist"].contains($0.file) }
            .atLeast(.warning)
        #expect(
            tree.map(\.description) == [
                "Advanced.plist[9]: warning DEFAULT_WRONG_TYPE: toggle DefaultValue string \"NO\" (expected a boolean; "
                    + "Settings shows it OFF)",
                "Advanced.plist[13]: error SPEC_MISSING_DEFAULTVALUE: PSToggleSwitchSpecifier without DefaultValue "
                    + "(Key \"rememberCredentials\")",
            ])
        let unknown = bundle.diagnostics.with(.specUnknownType).filter { $0.file != "Complete.plist" }
        #expect(
            unknown.prefix(10).map(\.place) == [
                "Root~iphone.plist[0]", "Root~iphone.plist[1]", "Advanced.plist[7]", "Advanced.plist[15]",
                "Advanced.plist[16]", "Advanced.plist[17]", "Advanced.plist[18]", "Advanced.plist[19]",
                "Advanced.plist[20]", "Advanced.plist[21]",
            ])
        #expect(unknown.prefix(10).allSatisfy { $0.severity == .info })

        // switchOther stores integer 1/2; its default true equals TrueValue 1, so it shows ON.
        let rows = try #require(bundle.describe { _, _ in nil }).sections.flatMap(\.rows)
        let advancedPane = try #require(
            rows.compactMap { row -> PaneDescription? in
                if case .childPane(_, let pane) = row.control { return pane }
                return nil
            }.first)
        let advancedRows = advancedPane.sections.flatMap(\.rows)
        #expect(advancedPane.title == "Advanced")
        #expect(advancedRows.first { $0.key == "switchOther" }?.control == .toggleSwitch(isOn: true, trueValue: .integer(1), falseValue: .integer(2)))
        #expect(advancedRows.first { $0.key == "AutoConnect" }?.control == .toggleSwitch(isOn: false, trueValue: true, falseValue: false))
        #expect(bundle.validate(.integer(2), forKey: "switchOther") == .ok)
        #expect(
            bundle.validate(false, forKey: "switchOther")
                == .refused(
                    "switchOther must be 1 or 2 (PSToggleSwitchSpecifier \"Keep Alive\")"))

        let german = try Corpus.load("futuretap__InAppSettingsKit", languages: ["de"])
        for (index, english, deutsch) in [
            (3, "Toggle Switch", "Toggle Schalter"), (7, "Advanced", "Erweitert"),
        ] {
            #expect(try Self.title(bundle, "Root~iphone.plist", index) == english)
            #expect(try Self.title(german, "Root~iphone.plist", index) == deutsch)
        }
        #expect(try Self.title(german, "Advanced.plist", 5) == "Boolscher Schalter")
        #expect(try Self.title(bundle, "Advanced.plist", 5) == "Keep Alive")
        #expect(try Self.title(german, "Advanced.plist", 0) == "Slider mit Icons")
        #expect(try Self.title(german, "Advanced.plist", 14) == "Date Picker")
    }

    // MARK: newsyc: a binary-plist strings table

    @Test func newsyc() throws {
        let bundle = try Corpus.load("grp__newsyc")
        #expect(bundle.diagnostics.isEmpty)
        #expect(
            bundle.stringsFiles["en.lproj/Root.strings"]
                == StringsFile(
                    path: "en.lproj/Root.strings", format: .binaryPlist,
                    entries: ["Group": "Group", "Name": "Name", "Enabled": "Enabled", "none given": "none given"]))
        let root = try #require(bundle.root)
        #expect(
            root.specifiers.map(\.title) == [
                "Interface", "Confirm Votes", "Less Orange", "Instapaper", "Logout on Launch", "",
            ])
        #expect(
            root.specifiers.map(\.key) == [
                nil, "interface-confirm-votes", "disable-orange", nil, "instapaper-logout", nil,
            ])
        #expect(
            root.specifiers[5].kind
                == .group(
                    footerText:
                        "news:yc © 2013 Xuzz Productions, LLC\nSource code is on GitHub. BSD licensed.\n            "))
        #expect(
            bundle.defaults.app == [
                "interface-confirm-votes": false, "disable-orange": false, "instapaper-logout": false,
            ])
        #expect(bundle.localized("Confirm Votes", in: root) == "Confirm Votes")
        #expect(bundle.localized("none given", in: root) == "none given")
    }

    // MARK: linphone InAppSettings.bundle: a broken strings table

    @Test func linphoneBrokenStringsTable() throws {
        let bundle = try Corpus.load("BelledonneCommunications__linphone-iphone--inappsettings")
        #expect(bundle.directory.lastPathComponent == "InAppSettings.bundle")
        let chat = try #require(bundle.pages["Chat.plist"])
        #expect(chat.stringsTable == nil)
        #expect(
            chat.specifiers.map(\.key) == [
                "auto_download_mode", "auto_write_to_gallery_mode", "auto_download_incoming_files_max_size", nil,
                "file_transfer_server_url_preference",
            ])
        #expect(
            chat.specifiers[0].kind
                == .multiValue(
                    .init(
                        values: ["Never", "Always", "Customize"],
                        titles: ["Never", "Always", "If lighter than max size"])))
        #expect(chat.specifiers[2].defaultValue == .integer(-1))
        #expect(
            chat.specifiers[4].kind
                == .textField(
                    .init(
                        keyboardType: .url, autocapitalizationType: .none,
                        autocorrectionType: .no)))

        let broken = try #require(bundle.diagnostics.with(.stringsUnparseable).first)
        #expect(
            broken.description == "en.lproj/Chat.strings:6: error STRINGS_UNPARSEABLE: missing ';' after the entry "
                + "\"Auto write to gallery\" (line 6); the whole table is ignored, as Apple's parser does")
        #expect(bundle.stringsFiles["en.lproj/Chat.strings"]?.entries == nil)
        #expect(bundle.stringsFiles["fr.lproj/Chat.strings"]?.entries?.count == 6)
        #expect(
            bundle.findings.filter { $0.hasPrefix("error") } == [
                "error STRINGS_UNPARSEABLE en.lproj/Chat.strings:6",
                "error SPEC_MISSING_DEFAULTVALUE Video.plist[2]", "error SPEC_MISSING_DEFAULTVALUE Video.plist[3]",
                "error SPEC_MISSING_TYPE Advanced.plist[13]",
            ])
        #expect(bundle.diagnostics.with(.defaultWrongType).count == 26)
        #expect(bundle.diagnostics.with(.defaultNotInValues).map(\.place) == ["LDAP.plist[8]"])
        // Account.plist is opened five times; the description nests it at the first and names it elsewhere.
        let accounts = try #require(bundle.describe { _, _ in nil }).sections.flatMap(\.rows).compactMap { row in
            if case .childPane("Account.plist", let pane) = row.control { return pane != nil }
            return nil
        }
        #expect(accounts == [true, false, false, false, false])
        #expect(
            bundle.diagnostics.with(.childReferencedMultiple).map(\.description) == [
                "Account.plist: info CHILD_REFERENCED_MULTIPLE: opened by 5 child panes",
                "LDAP.plist: info CHILD_REFERENCED_MULTIPLE: opened by 5 child panes",
            ])

        // Apple's rule: Chat.plist has no StringsTable, so it is not localised at all.
        let french = try Corpus.load("BelledonneCommunications__linphone-iphone--inappsettings", languages: ["fr"])
        #expect(try Self.title(french, "Chat.plist", 1) == "Auto write to gallery")
        // InAppSettingsKit's rule uses Chat.strings: French is translated, English is abandoned (keys show).
        let iask = { (language: String) in
            try Corpus.load(
                "BelledonneCommunications__linphone-iphone--inappsettings", languages: [language],
                policy: .inAppSettingsKit)
        }
        #expect(try Self.title(iask("fr"), "Chat.plist", 1) == "Sauvegarde auto dans la galerie")
        #expect(try Self.title(iask("fr"), "Chat.plist", 4) == "URL du serveur")
        #expect(try Self.title(iask("de"), "Chat.plist", 1) == "Auto write to gallery")
        #expect(try Self.title(iask("en"), "Chat.plist", 1) == "Auto write to gallery")
        #expect(try iask("fr").stringsTable(for: try #require(bundle.pages["Chat.plist"])) == "Chat")
    }

    // MARK: NavCogIOS and vitemadose: XML prologs Apple accepts and strict XML readers do not

    @Test func navCogCommentBeforeTheXMLDeclaration() throws {
        let bundle = try Corpus.load("hulop__NavCogIOS")
        #expect(
            bundle.diagnostics.map(\.description) == [
                "Root.plist: warning PLIST_NONSTANDARD_PROLOG: the XML declaration is preceded by a comment or whitespace; "
                    + "Apple's parser accepts the file, strict XML readers do not"
            ])
        let root = try #require(bundle.root)
        #expect(root.format == .xml)
        #expect(root.specifiers.map(\.key) == ["devmode_preference", "meter_preference"])
        #expect(bundle.defaults.app == ["devmode_preference": false, "meter_preference": false])
        #expect(try Self.title(bundle, "Root.plist", 0) == "Developer Mode")
        let japanese = try Corpus.load("hulop__NavCogIOS", languages: ["ja-JP"])
        #expect(try Self.title(japanese, "Root.plist", 0) == "開発者モード")
        #expect(try Self.title(japanese, "Root.plist", 1) == "メートルモード")
    }

    @Test func vitemadoseWithoutXMLDeclaration() throws {
        let bundle = try Corpus.load("CovidTrackerFr__vitemadose-ios")
        #expect(
            bundle.diagnostics.atLeast(.warning).map(\.description) == [
                "Root.plist: warning PLIST_NONSTANDARD_PROLOG: no XML declaration (<?xml ...?>); Apple's parser accepts "
                    + "the file, strict XML readers do not",
                "Root.plist: warning STRINGSTABLE_MISSING: StringsTable \"Root\": no Root.strings in any .lproj; titles "
                    + "show as written",
            ])
        #expect(bundle.diagnostics.with(.childFileForm).count == 27)
        #expect(bundle.pages.count == 29)
        #expect(bundle.defaults.isEmpty)
        let root = try #require(bundle.root)
        #expect(
            root.specifiers[0].kind
                == .childPane(
                    .init(
                        file: "com.mono0926.LicensePlist",
                        page: "com.mono0926.LicensePlist.plist")))
        #expect(root.specifiers[1].kind == .group(footerText: "Copyright (c) 2021 - CovidTracker (covidtracker.fr)"))
    }
}
