import DefaultsCore
import Foundation
import SettingsBundles
import TestThreads
import Testing

/// Loading bundles written by the tests: child-pane resolution and cycles, page formats and
/// prologs, and the specifier diagnostics the corpus does not exercise.
@Suite(.ownThreads) struct LoadingTests {
    @Test func childPaneCyclesStopAndAreReported() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage("Root.plist", [Spec.toggle("r", "R"), Spec.child("A", file: "A")])
        try bundle.writePage(
            "A.plist", [Spec.toggle("a", "A"), Spec.child("B", file: "B"), Spec.child("Self", file: "A")])
        try bundle.writePage(
            "B.plist", [Spec.child("Back to A", file: "A"), Spec.child("Home", file: "Root"), Spec.toggle("b", "B")])
        let loaded = try bundle.load()
        #expect(loaded.pages.keys.sorted() == ["A.plist", "B.plist", "Root.plist"])
        #expect(
            loaded.specifiers.map(\.location.description) == [
                "Root.plist[0]", "Root.plist[1]", "A.plist[0]", "A.plist[1]", "B.plist[0]", "B.plist[1]", "B.plist[2]",
                "A.plist[2]",
            ])
        #expect(
            loaded.diagnostics.map(\.description) == [
                "B.plist[0]: warning CHILD_CYCLE: File \"A\" leads back to A.plist: A.plist → B.plist → A.plist; not expanded again",
                "B.plist[1]: warning CHILD_CYCLE: File \"Root\" leads back to Root.plist: Root.plist → A.plist → B.plist → "
                    + "Root.plist; not expanded again",
                "A.plist[2]: warning CHILD_CYCLE: File \"A\" leads back to A.plist: A.plist → A.plist; not expanded again",
                "A.plist: info CHILD_REFERENCED_MULTIPLE: opened by 3 child panes",
            ])
        #expect(loaded.defaults.app == ["r": false, "a": false, "b": false])

        // The description nests each pane once; a cycle ends in a child pane that only names its file.
        let root = try #require(loaded.describe { _, _ in nil })
        let a = try #require(Self.childPane(root.sections[0].rows[1]))
        #expect(a.title == "A")
        let b = try #require(Self.childPane(a.sections[0].rows[1]))
        #expect(b.file == "B.plist")
        #expect(b.sections[0].rows[0].control == .childPane(file: "A.plist", pane: nil))
        #expect(b.sections[0].rows[1].control == .childPane(file: "Root.plist", pane: nil))
        #expect(a.sections[0].rows[2].control == .childPane(file: "A.plist", pane: nil))
        #expect(
            loaded.renderText(pane: "B.plist") { _, _ in nil } == "  Back to A  >\n  Home       >\n  B          OFF\n")
    }

    static func childPane(_ row: PaneDescription.Row) -> PaneDescription? {
        if case .childPane(_, let pane) = row.control { return pane }
        return nil
    }

    /// Twenty layers of two pages, each opening both pages of the next layer: a million paths,
    /// yet every page is walked and described once. A chain deeper than the nesting limit is
    /// walked whole and described to the limit.
    @Test func manyPathsAndDeepChainsStayBounded() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                Spec.child("L0a", file: "L0a"), Spec.child("L0b", file: "L0b"),
                Spec.child("Chain", file: "C0"),
            ])
        for layer in 0..<20 {
            for side in ["a", "b"] {
                let next =
                    layer < 19
                    ? [Spec.child("a", file: "L\(layer + 1)a"), Spec.child("b", file: "L\(layer + 1)b")] : []
                try bundle.writePage("L\(layer)\(side).plist", [Spec.toggle("k\(layer)\(side)", "K")] + next)
            }
        }
        for link in 0..<40 {
            try bundle.writePage(
                "C\(link).plist",
                [Spec.toggle("c\(link)", "C")] + (link < 39 ? [Spec.child("next", file: "C\(link + 1)")] : []))
        }
        let loaded = try bundle.load()
        #expect(loaded.pages.count == 81)
        #expect(loaded.defaults.app.count == 80)
        let root = try #require(loaded.describe { _, _ in nil })
        var files: [String] = []
        var depth = 0
        func collect(_ pane: PaneDescription, _ level: Int) {
            files.append(pane.file)
            depth = max(depth, level)
            for row in pane.sections.flatMap(\.rows) {
                if case .childPane(_, let child?) = row.control { collect(child, level + 1) }
            }
        }
        collect(root, 1)
        #expect(files.count == Set(files).count)
        #expect(Set(files).isSuperset(of: (0..<20).flatMap { ["L\($0)a.plist", "L\($0)b.plist"] }))
        #expect(depth == SettingsBundle.maximumNesting)
        #expect(!files.contains("C39.plist"))
    }

    @Test func childFileNames() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                Spec.child("Dots", file: "com.example.v2"),
                Spec.child("Suffix", file: "Other.plist"),
                Spec.child("Folder", file: "Licenses/Third Party"),
                Spec.child("Device", file: "Device"),
                Spec.child("Localized", file: "Localized"),
                Spec.child("Missing", file: "Nowhere"),
                Spec.child("Escape", file: "../../etc/passwd"),
                Spec.child("Absolute", file: "/etc/hosts"),
                Spec.child("Array", file: "NotADictionary"),
                Spec.child("Dictionary", file: "NoSpecifiers"),
                Spec.child("Broken", file: "Broken"),
            ])
        for name in [
            "com.example.v2", "Other", "Licenses/Third Party", "Device~iphone", "Device", "en.lproj/Localized",
        ] {
            try bundle.writePage("\(name).plist", [Spec.toggle(name, name)])
        }
        // Decoys: dots are never taken for an extension.
        try bundle.writePage("com.example.plist", [Spec.toggle("decoy", "Decoy")])
        try bundle.write(
            "NotADictionary.plist",
            text: "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<plist version=\"1.0\"><array/></plist>\n")
        try bundle.write("NoSpecifiers.plist", bytes: Array(try PropertyListFile.encode(["Title": "x"], format: .xml)))
        try bundle.write("Broken.plist", text: "<?xml version=\"1.0\"?><plist><dict><key>a</key></plist>")

        let phone = try bundle.load()
        let files = phone.root!.specifiers.map { specifier -> String? in
            if case .childPane(let child) = specifier.kind { return child.page }
            return nil
        }
        #expect(
            files == [
                "com.example.v2.plist", "Other.plist", "Licenses/Third Party.plist", "Device~iphone.plist",
                "en.lproj/Localized.plist", nil, nil, nil, nil, nil, nil,
            ])
        #expect(
            phone.findings == [
                "error PLIST_UNPARSEABLE Broken.plist",
                "info CHILD_FILE_FORM Root.plist[1]", "info CHILD_FILE_FORM Root.plist[2]",
                "error CHILD_FILE_MISSING Root.plist[5]",
                "info CHILD_FILE_FORM Root.plist[6]", "error CHILD_FILE_OUTSIDE_BUNDLE Root.plist[6]",
                "info CHILD_FILE_FORM Root.plist[7]", "error CHILD_FILE_OUTSIDE_BUNDLE Root.plist[7]",
                "error PAGE_NOT_DICT NotADictionary.plist", "error PAGE_NO_SPECIFIERS NoSpecifiers.plist",
                "info PLIST_UNREFERENCED Device.plist", "info PLIST_UNREFERENCED com.example.plist",
            ])
        #expect(
            phone.diagnostics.with(.childFileMissing).first?.message
                == "File \"Nowhere\": no Nowhere.plist in the bundle")
        #expect(
            phone.diagnostics.with(.pageNotDict).first?.message
                == "the root object is an array, not a dictionary (opened from Root.plist[8])")
        #expect(
            phone.defaults.app.keys.sorted() == [
                "Device~iphone", "Licenses/Third Party", "Other", "com.example.v2", "en.lproj/Localized",
            ])

        // In German (a folder without Localized.plist) and on iPad.
        try bundle.write("de.lproj/Root.strings", text: "")
        let pad = try bundle.load(LoadOptions(idiom: .pad, languages: ["de"]))
        #expect(pad.language == "de")
        #expect(pad.pages.keys.contains("Device.plist"))
        #expect(!pad.pages.keys.contains("en.lproj/Localized.plist"))
        #expect(pad.diagnostics.with(.childFileMissing).map(\.place) == ["Root.plist[4]", "Root.plist[5]"])
    }

    @Test func binaryOldStyleAndLenientXMLPages() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                Spec.child("Text", file: "Text"), Spec.child("Prolog", file: "Prolog"),
                Spec.toggle("binary", "Binary", default: true),
            ], format: .binary)
        try bundle.write(
            "Text.plist",
            text: """
                // An old-style page: every value is a string.
                {
                    StringsTable = Root;
                    PreferenceSpecifiers = (
                        { Type = PSToggleSwitchSpecifier; Key = old; Title = "Old style"; DefaultValue = YES; },
                    );
                }
                """)
        try bundle.write(
            "Prolog.plist",
            text: """
                <!-- A licence comment before the declaration, as Apple's parser allows. --->
                <?xml version="1.0" encoding="UTF-8"?>
                <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
                <plist version="1.0"><dict><key>PreferenceSpecifiers</key><array>
                <dict><key>Type</key><string>PSSliderSpecifier</string><key>Key</key><string>level</string>
                <key>DefaultValue</key><integer>3</integer><key>MinimumValue</key><integer>0</integer>
                <key>MaximumValue</key><integer>9</integer></dict></array></dict></plist>
                """)
        let loaded = try bundle.load()
        #expect(loaded.pages["Root.plist"]?.format == .binary)
        #expect(loaded.pages["Text.plist"]?.format == .openStep)
        #expect(loaded.pages["Text.plist"]?.stringsTable == "Root")
        #expect(loaded.pages["Prolog.plist"]?.format == .xml)
        #expect(loaded.defaults.app == ["old": "YES", "level": .integer(3), "binary": true])
        #expect(
            loaded.findings == [
                "warning PLIST_NONSTANDARD_PROLOG Prolog.plist", "warning DEFAULT_WRONG_TYPE Text.plist[0]",
                "warning STRINGSTABLE_MISSING Text.plist",
            ])
    }

    @Test func utf16XMLPage() throws {
        let bundle = try TemporaryBundle()
        let xml = String(
            decoding: try PropertyListFile.encode(
                ["PreferenceSpecifiers": [Spec.toggle("été", "Été")]], format: .xml), as: UTF8.self
        )
        .replacingOccurrences(of: "encoding=\"UTF-8\"", with: "encoding=\"UTF-16\"")
        try bundle.write("Root.plist", bytes: StringsFileTests.encode(xml, .utf16BEWithBOM))
        let loaded = try bundle.load()
        #expect(loaded.defaults.app == ["été": false])
        #expect(loaded.diagnostics.isEmpty)
    }

    /// Every specifier check on one page, with the exact findings.
    @Test func specifierDiagnostics() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                ["Type": "PSToggleSwitchSpecifier", "Key": "typo", "Tilte": "Typo", "DefaultVaule": true],
                [
                    "Type": "PSTextFieldSpecifier", "Key": "field", "AutoCorrectionType": "No",
                    "KeyboardType": "DecimalPad",
                ],
                ["Key": "untyped", "DefaultValue": 1],
                "not a dictionary",
                ["Type": "PSTextFieldSpecifier", "Key": "", "DefaultValue": 0],
                [
                    "Type": "PSMultiValueSpecifier", "Key": "choice", "Title": "Choice", "DefaultValue": "Two",
                    "Values": [1, 2, 3], "Titles": ["One", "Two"],
                ],
                [
                    "Type": "PSMultiValueSpecifier", "Key": "mixed", "Title": "Mixed", "DefaultValue": "0",
                    "Values": [0, 1, "2"], "Titles": ["a", "b", "c"],
                ],
                [
                    "Type": "PSSliderSpecifier", "Key": "slider", "DefaultValue": 20, "MinimumValue": 0,
                    "MaximumValue": 10,
                ],
                [
                    "Type": "PSSliderSpecifier", "Key": "inverted", "DefaultValue": "5", "MinimumValue": 10,
                    "MaximumValue": 1,
                ],
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "choice", "Title": "Again", "DefaultValue": "maybe",
                    "TrueValue": "yes", "FalseValue": "no",
                ],
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": " spaced", "Title": "Spaced", "DefaultValue": false,
                    "SupportedUserInterfaceIdioms": ["Phone", "Watch"], "IsSecure": true,
                ],
                ["Type": "PSGroupSpecifier", "Title": 7],
                ["Type": "CustomSpecifier", "Key": "custom"],
                ["Type": "IASKButtonSpecifier", "Key": "button"],
                ["Type": "PSRadioGroupSpecifier", "Key": "radio", "DefaultValue": 1, "Values": [], "Titles": []],
                ["Type": "PSChildPaneSpecifier", "Title": "No file"],
                ["Type": "PSTextFieldSpecifier", "Title": "No key", "DefaultValue": "x"],
            ], extra: ["StringTable": "Root", "Title": "Settings"])
        let loaded = try bundle.load()
        #expect(
            loaded.diagnostics.map(\.description) == [
                "Root.plist: warning ROOT_UNKNOWN_KEY: \"StringTable\" looks like a misspelling of \"StringsTable\"; "
                    + "Settings ignores it",
                "Root.plist: info ROOT_UNKNOWN_KEY: undocumented root key \"Title\"; Settings ignores it",
                "Root.plist[0]: warning SPEC_MISSPELT_KEY: \"DefaultVaule\" looks like a misspelling of \"DefaultValue\"; "
                    + "Settings ignores it",
                "Root.plist[0]: warning SPEC_MISSPELT_KEY: \"Tilte\" looks like a misspelling of \"Title\"; Settings ignores it",
                "Root.plist[1]: warning SPEC_MISSPELT_KEY: \"AutoCorrectionType\" looks like a misspelling of "
                    + "\"AutocorrectionType\"; Settings ignores it",
                "Root.plist[1]: warning ENUM_INVALID: KeyboardType \"DecimalPad\" is not one of Alphabet, NumbersAndPunctuation, "
                    + "NumberPad, URL, EmailAddress; Settings uses its default",
                "Root.plist[2]: error SPEC_MISSING_TYPE: no Type (keys DefaultValue, Key); not shown",
                "Root.plist[3]: error SPEC_NOT_DICT: a string, not a dictionary; skipped",
                "Root.plist[4]: error KEY_EMPTY: PSTextFieldSpecifier has an empty Key",
                "Root.plist[4]: warning DEFAULT_WRONG_TYPE: text field DefaultValue integer 0 (expected a string)",
                "Root.plist[5]: error VALUES_TITLES_LENGTH: 3 Values but 2 Titles",
                "Root.plist[5]: warning DEFAULT_NOT_IN_VALUES: DefaultValue string \"Two\" is not among Values (1, 2, 3) "
                    + "(it is one of the Titles)",
                "Root.plist[6]: warning VALUES_MIXED_TYPES: Values mix integer, string: (0, 1, \"2\")",
                "Root.plist[6]: warning DEFAULT_WRONG_TYPE: DefaultValue string \"0\" matches a Value only as text; "
                    + "Values (0, 1, \"2\")",
                "Root.plist[7]: warning SLIDER_DEFAULT_OUT_OF_RANGE: DefaultValue 20 is outside 0…10",
                "Root.plist[8]: warning SLIDER_NOT_NUMBER: DefaultValue string \"5\" is not a number",
                "Root.plist[8]: error SLIDER_RANGE: MinimumValue 10 is not below MaximumValue 1",
                "Root.plist[9]: warning TOGGLE_DEFAULT_NOT_TRUE_OR_FALSE_VALUE: DefaultValue string \"maybe\" is neither "
                    + "TrueValue string \"yes\" nor FalseValue string \"no\"",
                "Root.plist[10]: warning KEY_WHITESPACE: Key \" spaced\" begins or ends with white space",
                "Root.plist[10]: info SPEC_KEY_NOT_FOR_TYPE: \"IsSecure\" is not documented for PSToggleSwitchSpecifier",
                "Root.plist[10]: warning IDIOM_INVALID: SupportedUserInterfaceIdioms (\"Phone\", \"Watch\") is not a list of "
                    + "Phone and Pad",
                "Root.plist[11]: warning KEY_WRONG_TYPE: Title is an integer (7), not a string",
                "Root.plist[12]: warning SPEC_UNKNOWN_TYPE: \"CustomSpecifier\" is not a type Settings knows; kept, not shown",
                "Root.plist[13]: info SPEC_UNKNOWN_TYPE: \"IASKButtonSpecifier\" is not a type Settings knows; kept, not shown",
                "Root.plist[14]: warning VALUES_EMPTY: Values is empty",
                "Root.plist[15]: error SPEC_MISSING_FILE: PSChildPaneSpecifier without File",
                "Root.plist[16]: error SPEC_MISSING_KEY: PSTextFieldSpecifier without Key",
                "Root.plist[9]: warning KEY_DUPLICATE: \"choice\" is also declared at Root.plist[5]; the later DefaultValue wins",
            ])
        // Misspelt keys are ignored, as Settings ignores them: no default, no title.
        #expect(
            loaded.defaults.app == [
                "choice": "maybe", "mixed": "0", "slider": .integer(20), "inverted": "5", " spaced": false, "radio": 1,
            ])
        #expect(loaded.root?.specifiers.count == 16)
        #expect(loaded.root?.specifiers[3].location.index == 4)
        #expect(loaded.root?.specifiers[2].kind == .unknown)
        #expect(loaded.root?.specifiers[2].type == nil)
        #expect(loaded.root?.specifiers[0].title == nil)
    }

    @Test func suitesPerPageAndPerSpecifier() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                Spec.toggle("own", "Own"),
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "shared", "Title": "Shared", "DefaultValue": true,
                    "ApplicationGroupContainerIdentifier": "group.com.example.shared",
                ],
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "bad", "Title": "Bad", "DefaultValue": true,
                    "ApplicationGroupContainerIdentifier": "group/../etc",
                ],
                Spec.child("Watch", file: "Watch"),
            ])
        try bundle.writePage(
            "Watch.plist", [Spec.toggle("shared", "Watch shared", default: false)],
            extra: ["ApplicationGroupContainerIdentifier": "group.com.example.watch"])
        let loaded = try bundle.load()
        let shared = try DomainName("group.com.example.shared")
        let watch = try DomainName("group.com.example.watch")
        #expect(loaded.defaults.app == ["own": false])
        #expect(loaded.defaults.suites == [shared: ["shared": true], watch: ["shared": false]])
        #expect(loaded.defaults[suite: watch] == ["shared": false])
        #expect(loaded.defaults.domains == [nil, shared, watch])
        #expect(
            loaded.defaults.location(of: "shared", suite: watch) == SpecifierLocation(file: "Watch.plist", index: 0))
        #expect(loaded.findings == ["error SUITE_INVALID Root.plist[2]"])
        #expect(
            loaded.validate(.string("x"), forKey: "shared", suite: shared)
                == .refused(
                    "shared must be true or false (PSToggleSwitchSpecifier \"Shared\")"))
        #expect(loaded.validate(.string("x"), forKey: "shared") == .ok)
        #expect(loaded.validate(.string("x"), forKey: "bad") == .ok)
    }

    @Test func aDirectoryThatIsNotThereThrows() {
        #expect(throws: SettingsBundleError.self) {
            try SettingsBundle.load(at: URL(fileURLWithPath: "/nonexistent/Settings.bundle"))
        }
    }

    @Test func anEmptyBundleHasNoRoot() throws {
        let bundle = try TemporaryBundle()
        try bundle.write("Info.plist", bytes: Array(try PropertyListFile.encode(["CFBundleName": "x"], format: .xml)))
        let loaded = try bundle.load()
        #expect(loaded.root == nil)
        #expect(loaded.specifiers.isEmpty)
        #expect(loaded.findings == ["error NO_ROOT Root.plist", "info PLIST_UNREFERENCED Info.plist"])
        #expect(loaded.describe { _, _ in nil } == nil)
        #expect(loaded.renderText { _, _ in nil } == "")
    }

    @Test func symbolicLinksInsideTheBundleAndLoops() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Pages/Real.plist", [Spec.toggle("real", "Real"), Spec.child("Loop", file: "Loop/Pages/Real")])
        try FileManager.default.createSymbolicLink(
            at: bundle.url.appendingPathComponent("Root.plist"),
            withDestinationURL: bundle.url.appendingPathComponent("Pages/Real.plist"))
        try FileManager.default.createSymbolicLink(
            at: bundle.url.appendingPathComponent("Loop"), withDestinationURL: bundle.url)
        let loaded = try bundle.load()
        #expect(loaded.defaults.app == ["real": false])
        // The directory link is not entered, so "Loop/..." names nothing; the file link is read.
        #expect(
            loaded.findings == [
                "info CHILD_FILE_FORM Root.plist[1]", "error CHILD_FILE_MISSING Root.plist[1]",
                "info CHILD_FILE_FORM Pages/Real.plist[1]", "error CHILD_FILE_MISSING Pages/Real.plist[1]",
                "info PLIST_UNREFERENCED Pages/Real.plist",
            ])
    }

    @Test func aSymbolicLinkOutOfTheBundleIsNotRead() throws {
        let bundle = try TemporaryBundle()
        let outside = bundle.url.deletingLastPathComponent().appendingPathComponent("Secret.plist")
        try PropertyListFile.encode(["PreferenceSpecifiers": [Spec.toggle("secret", "Secret")]], format: .xml)
            .write(to: outside)
        try FileManager.default.createSymbolicLink(
            at: bundle.url.appendingPathComponent("Root.plist"), withDestinationURL: outside)
        let loaded = try bundle.load()
        #expect(loaded.root == nil)
        #expect(loaded.findings == ["warning FILE_OUTSIDE_BUNDLE Root.plist", "error NO_ROOT Root.plist"])
    }

    /// A bundle's files are held to the limit every property-list reader has
    /// (`PropertyListLimits.maximumFileBytes`): a table one byte larger is not read.
    @Test func aFileOverThePropertyListLimitIsNotRead() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage("Root.plist", [Spec.toggle("warp", "Warp")], stringsTable: "Root")
        try bundle.write("en.lproj/Root.strings", text: "")
        let handle = try #require(FileHandle(forWritingAtPath: bundle.url.appendingPathComponent("en.lproj/Root.strings").path))
        try handle.truncate(atOffset: UInt64(PropertyListLimits.maximumFileBytes + 1))
        try handle.close()
        let loaded = try bundle.load()
        let tooLarge = loaded.diagnostics.filter { $0.code == .fileTooLarge }
        #expect(
            tooLarge.map(\.description) == [
                "en.lproj/Root.strings: error FILE_TOO_LARGE: \(PropertyListLimits.maximumFileBytes + 1) bytes; "
                    + "files above \(PropertyListLimits.maximumFileBytes) are not read"
            ])
        #expect(loaded.stringsFiles["en.lproj/Root.strings"] == nil)
        #expect(loaded.defaults.app == ["warp": false])
    }

    /// A bundle's files are read for at most `BundleFiles.maximumTotalBytes` in all, each link to
    /// a file counted each time: one 9 MiB table that ten languages link to is read three times,
    /// and the other seven are refused with a finding, not parsed.
    @Test func aBundlesFilesAreReadForABoundedTotal() throws {
        let bundle = try TemporaryBundle()
        try bundle.writePage("Root.plist", [Spec.toggle("warp", "Warp")], stringsTable: "Root")
        // Abandoned at its first byte, so that what is measured is reading, not parsing.
        try bundle.write("table.strings.data", text: "@" + String(repeating: " ", count: 9 << 20))
        for language in 0..<10 {
            try FileManager.default.createDirectory(at: bundle.url.appendingPathComponent("l\(language).lproj"), withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                atPath: bundle.url.appendingPathComponent("l\(language).lproj/Root.strings").path,
                withDestinationPath: bundle.url.appendingPathComponent("table.strings.data").path)
        }
        let loaded = try bundle.load()
        let overBudget = loaded.diagnostics.filter { $0.code == .fileTooLarge }
        #expect(overBudget.count == 7)
        #expect(overBudget.allSatisfy { $0.message.hasSuffix("add up to more than \(2 * PropertyListLimits.maximumFileBytes) bytes") })
        #expect(loaded.diagnostics.filter { $0.code == .stringsUnparseable }.count == 3, "three were read")
        #expect(loaded.defaults.app == ["warp": false])
    }
}
