import DaemonTestSupport
import DefaultsCore
import Foundation
import SettingsBundles
import TestThreads
import Testing

/// Reading a Settings bundle is work linear in the bundle: a `.strings` table of about n and 8n
/// bytes, and a whole bundle of n and 8n specifiers, pages, tables or languages, take CPU time
/// that grows by at most ``WorkGrowth/bound``, and what they give (the entries, the specifiers,
/// the findings, or the table abandoned at a syntax error) is checked too.
@Suite(.ownThreads) struct BundleWorkTests {
    // MARK: .strings tables

    /// The size of the small table, in bytes: one reading of most shapes takes milliseconds in a
    /// debug build, and 8 times it is far below the 16 MiB every table is held to.
    static let n = 32 << 10

    /// `StringsFile.read`: the entries of the table, or the abandoned table's error.
    static func readStrings(_ bytes: [UInt8]) -> ReadOutcome {
        let (file, diagnostics) = StringsFile.read(Data(bytes), path: "en.lproj/Root.strings")
        guard let entries = file.entries else { return .refused(diagnostics.map(\.message).joined(separator: "; ")) }
        return .read(entries.count)
    }

    struct StringsShape: Sendable, CustomTestStringConvertible {
        let name: String
        /// The table of about the given size in bytes.
        let input: @Sendable (Int) -> WorkInput
        /// What reading it gives, for the count of its input.
        let expected: @Sendable (Int) -> ReadOutcome

        init(_ name: String, _ input: @escaping @Sendable (Int) -> WorkInput, _ expected: @escaping @Sendable (Int) -> ReadOutcome) {
            self.name = name
            self.input = input
            self.expected = expected
        }

        var testDescription: String { name }
    }

    static let tables: [StringsShape] = [
        StringsShape("many entries", { .filling($0, "", numbered: entry, "") }, { .read($0) }),
        StringsShape("many block comments", { .filling($0, "", "/* a comment */\n", #""k" = "v";"#) }, { _ in .read(1) }),
        StringsShape("many line comments", { .filling($0, "", "// a comment\n", #""k" = "v";"#) }, { _ in .read(1) }),
        StringsShape("one key repeated", { .filling($0, "", #""k" = "v";"# + "\n", "") }, { _ in .read(1) }),
        StringsShape("empty keys", { .filling($0, "", "\"\" = \"v\";" + "\n", "") }, { _ in .read(1) }),
        StringsShape("a long value of \\U escapes", { .filling($0, #""k" = ""#, #"\U0041"#, #"";"#) }, { _ in .read(1) }),
        StringsShape("a long key", { .filling($0, "\"", "k", #"" = "v";"#) }, { _ in .read(1) }),
        StringsShape("many entries in UTF-16", { WorkInput.filling($0, "", numbered: entry, "").utf16LittleEndianWithMark }, { .read($0) }),
        StringsShape("trailing text after many entries", { .filling($0, "", numbered: entry, "}") }, { .read($0) }),
        StringsShape("a syntax error after many entries", { .filling($0, "", numbered: entry, #""k" = "v"#) }, { _ in .refused("unterminated quoted string") }),
        StringsShape("nesting past the limit", { .filling($0, #""k" = "#, "(", "") }, { _ in .refused("nested more than 512 deep") }),
        StringsShape("long hexadecimal data as a value", { .filling($0, #""k" = <"#, "0f", ">;") }, { _ in .read(0) }),
        StringsShape("an XML table", { .filling($0, "<plist><dict>", numbered: { i in "<key>k\(i)</key><string>v</string>" }, "</dict></plist>") }, { .read($0) }),
        StringsShape("an XML table after many comments", { .filling($0, "", "<!-- c -->", "<plist><dict><key>k</key><string>v</string></dict></plist>") }, { _ in .read(1) }),
        StringsShape("an XML table of values that are not strings", { .filling($0, "<plist><dict>", numbered: { i in "<key>k\(i)</key><integer>1</integer>" }, "</dict></plist>") }, { _ in .read(0) }),
        StringsShape("a binary table", { binaryTable($0) }, { .read($0) }),
    ]

    @Test(arguments: Self.tables)
    func stringsTableReadsInLinearWork(_ shape: StringsShape) {
        let small = shape.input(Self.n)
        let large = shape.input(WorkGrowth.factor * Self.n)
        for input in [small, large] {
            let outcome = Self.readStrings(input.bytes)
            #expect(shape.expected(input.count).admits(outcome), "\(shape.name), \(input.bytes.count) bytes: \(outcome)")
        }
        let growth = WorkGrowth.measure(small: small.bytes, large: large.bytes) { Self.readStrings($0) }
        #expect(growth.ratio <= WorkGrowth.bound, "\(shape.name): \(growth)")
    }

    // MARK: Whole bundles

    struct BundleShape: Sendable, CustomTestStringConvertible {
        let name: String
        /// The small bundle's size, in the shape's own unit (specifiers, pages, tables, folders,
        /// bytes): enough that loading it takes milliseconds in a debug build, and 8 times it
        /// within the 10,000 files a bundle may hold.
        let n: Int
        /// Writes the bundle of the given size, and gives what `count` must find in it.
        let write: @Sendable (TemporaryBundle, Int) throws -> Int
        /// What of the loaded bundle shows it was read whole.
        let count: @Sendable (SettingsBundle) -> Int

        init(
            _ name: String, n: Int, _ write: @escaping @Sendable (TemporaryBundle, Int) throws -> Int,
            _ count: @escaping @Sendable (SettingsBundle) -> Int
        ) {
            self.name = name
            self.n = n
            self.write = write
            self.count = count
        }

        var testDescription: String { name }
    }

    static let bundles: [BundleShape] = [
        BundleShape("a root page of many specifiers", n: 250, { try Bundles.manySpecifiers($0, $1) }, { $0.specifiers.count }),
        BundleShape("a binary root page of many specifiers", n: 250, { try Bundles.manySpecifiersInBinary($0, $1) }, { $0.specifiers.count }),
        BundleShape("an old-style root page of many specifiers", n: 250, { try Bundles.manySpecifiersInOldStyle($0, $1) }, { $0.specifiers.count }),
        BundleShape("a root page after many prolog items", n: 3_000, { try Bundles.prologItems($0, $1) }, { $0.specifiers.count }),
        BundleShape("one key declared by every specifier", n: 250, { try Bundles.oneKeyRepeated($0, $1) }, { $0.diagnostics.with(.keyDuplicate).count }),
        BundleShape("a specifier of many undocumented keys", n: 250, { try Bundles.manyUnknownKeys($0, $1) }, { $0.diagnostics.with(.specUndocumentedKey).count }),
        BundleShape("a long undocumented key", n: 16 << 10, { try Bundles.longUnknownKey($0, $1) }, { $0.diagnostics.with(.specUndocumentedKey).count }),
        BundleShape("a multi-value specifier of many values", n: 2_000, { try Bundles.manyValues($0, $1) }, { Bundles.valueCount($0) }),
        BundleShape("many child panes", n: 100, { try Bundles.manyChildPanes($0, $1) }, { $0.specifiers.count }),
        BundleShape("a chain of child panes", n: 100, { try Bundles.chainOfPanes($0, $1) }, { $0.specifiers.count }),
        BundleShape("a chain whose every page leads back to the root", n: 100, { try Bundles.chainBackToRoot($0, $1) }, { $0.diagnostics.with(.childCycle).count }),
        BundleShape("long titles, localised", n: 2 << 10, { try Bundles.longTitles($0, $1) }, { Bundles.localizedBytes($0) }),
        BundleShape("a strings table of many entries", n: 250, { try Bundles.manyStringsEntries($0, $1) }, { Bundles.localizedCount($0) }),
        BundleShape("many strings tables", n: 100, { try Bundles.manyStringsTables($0, $1) }, { $0.stringsFiles.count }),
        BundleShape("many languages", n: 100, { try Bundles.manyLanguages($0, $1) }, { $0.availableLanguages.count }),
        BundleShape("many pages and many languages", n: 60, { try Bundles.manyPagesAndLanguages($0, $1) }, { $0.pages.count }),
    ]

    @Test(arguments: Self.bundles)
    func bundleLoadsInLinearWork(_ shape: BundleShape) throws {
        let small = try TemporaryBundle()
        let large = try TemporaryBundle()
        let expectedSmall = try shape.write(small, shape.n)
        let expectedLarge = try shape.write(large, WorkGrowth.factor * shape.n)
        let options = LoadOptions(languages: ["en"])
        for (bundle, expected) in [(small, expectedSmall), (large, expectedLarge)] {
            let loaded = try SettingsBundle.load(at: bundle.url, options: options)
            #expect(shape.count(loaded) == expected, "\(shape.name), \(bundle === small ? "n" : "8n")")
        }
        let growth = WorkGrowth.measure(small: small.url, large: large.url) { try? SettingsBundle.load(at: $0, options: options) }
        #expect(growth.ratio <= WorkGrowth.bound, "\(shape.name): \(growth)")
    }
}

extension BundleWorkTests {
    /// The daemon checks every value written to a domain against its bundle: that check looks only
    /// at the specifiers of the key written, so it takes the same time in a bundle of n and of 8n
    /// specifiers (a scan of all of them would take 8 times as long).
    @Test func aWriteCheckCostsTheSameInALargerBundle() throws {
        let small = try TemporaryBundle()
        let large = try TemporaryBundle()
        _ = try Bundles.manySpecifiers(small, 500)
        _ = try Bundles.manySpecifiers(large, WorkGrowth.factor * 500)
        let options = LoadOptions(languages: ["en"])
        let bundles = (try SettingsBundle.load(at: small.url, options: options), try SettingsBundle.load(at: large.url, options: options))
        #expect(bundles.0.validate(.string("yes"), forKey: "k7") == .refused(#"k7 must be true or false (PSToggleSwitchSpecifier "Title 7")"#))
        #expect(bundles.1.validate(.bool(true), forKey: "k3999") == .ok)
        let growth = WorkGrowth.measure(small: bundles.0, large: bundles.1) { $0.validate(.string("yes"), forKey: "k7") }
        // Constant work measures about 1; the bound leaves the same room for noise as the linear bound does.
        #expect(growth.ratio <= 2.5, "\(growth)")
    }
}

/// One line of a `.strings` table, its key numbered.
private func entry(_ index: Int) -> String { #""k\#(index)" = "v \#(index)";"# + "\n" }

/// A binary property-list table of about `size` bytes (about 16 bytes an entry).
private func binaryTable(_ size: Int) -> WorkInput {
    let count = size / 16
    let entries = Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", PlistValue.string("v")) })
    let bytes = (try? PropertyListFile.encode(entries, format: .binary)).map { [UInt8]($0) } ?? []
    return WorkInput(bytes: bytes, count: count)
}

/// The bundles of ``BundleWorkTests/bundles``: each writes a bundle of size `n` and returns what
/// its row's count must find.
private enum Bundles {
    static func manySpecifiers(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", (0..<n).map { Spec.toggle("k\($0)", "Title \($0)") })
        return n
    }

    static func manySpecifiersInBinary(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", (0..<n).map { Spec.toggle("k\($0)", "Title \($0)") }, format: .binary)
        return n
    }

    static func manySpecifiersInOldStyle(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        let groups = (0..<n).map { #"{Type = PSGroupSpecifier; Title = "Group \#($0)";}"# }
        try bundle.write("Root.plist", text: "{PreferenceSpecifiers = (\n" + groups.joined(separator: ",\n") + "\n);}\n")
        return n
    }

    /// `n` comments before an ordinary page of one specifier (before its XML declaration, so
    /// the prolog is also reported and rewritten).
    static func prologItems(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        let page = try PropertyListFile.encode(["PreferenceSpecifiers": [Spec.toggle("k", "T")]], format: .xml)
        try bundle.write("Root.plist", text: String(repeating: "<!-- c -->\n", count: n) + String(decoding: page, as: UTF8.self))
        return 1
    }

    static func oneKeyRepeated(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", (0..<n).map { Spec.toggle("k", "Title \($0)") })
        return n - 1
    }

    static func manyUnknownKeys(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        var specifier: [String: PlistValue] = ["Type": "PSToggleSwitchSpecifier", "Key": "k", "Title": "T", "DefaultValue": false]
        for index in 0..<n { specifier["Xyzzy\(index)"] = "v" }
        try bundle.writePage("Root.plist", [.dictionary(specifier)])
        return n
    }

    static func longUnknownKey(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        let specifier: [String: PlistValue] = [
            "Type": "PSToggleSwitchSpecifier", "Key": "k", "Title": "T", "DefaultValue": false,
            String(repeating: "X", count: n): "v",
        ]
        try bundle.writePage("Root.plist", [.dictionary(specifier)])
        return 1
    }

    static func manyValues(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        let specifier: PlistValue = [
            "Type": "PSMultiValueSpecifier", "Key": "m", "Title": "M", "DefaultValue": 0,
            "Values": .array((0..<n).map { .integer(Int64($0)) }), "Titles": .array((0..<n).map { .string("Choice \($0)") }),
        ]
        try bundle.writePage("Root.plist", [specifier])
        return n
    }

    static func valueCount(_ loaded: SettingsBundle) -> Int {
        guard case .array(let values)? = loaded.specifiers.first?.raw["Values"] else { return 0 }
        return values.count
    }

    /// The root opens `n` pages of one toggle each.
    static func manyChildPanes(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", (0..<n).map { Spec.child("Pane \($0)", file: "P\($0)") })
        for index in 0..<n { try bundle.writePage("P\(index).plist", [Spec.toggle("p\(index)", "P")]) }
        return 2 * n
    }

    /// `n` pages, each a toggle and a child pane opening the next; the last only the toggle.
    static func chainOfPanes(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        for index in 0..<n {
            let next = index < n - 1 ? [Spec.child("Next", file: "P\(index + 1)")] : []
            try bundle.writePage(index == 0 ? "Root.plist" : "P\(index).plist", [Spec.toggle("k\(index)", "T")] + next)
        }
        return 2 * n - 1
    }

    /// `n` pages, each opening the next and leading back to the root: `n` cycles, each found at
    /// the end of a longer path.
    static func chainBackToRoot(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        for index in 0..<n {
            let next = index < n - 1 ? [Spec.child("Next", file: "P\(index + 1)")] : []
            try bundle.writePage(index == 0 ? "Root.plist" : "P\(index).plist", next + [Spec.child("Home", file: "Root")])
        }
        return n
    }

    /// 16 toggles whose titles are `n` bytes long, each translated by a table into another of
    /// `n` bytes.
    static func longTitles(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        let titles = (0..<16).map { "T\($0)-" + String(repeating: "t", count: n) }
        let translations = (0..<16).map { "L\($0)-" + String(repeating: "l", count: n) }
        try bundle.writePage("Root.plist", titles.enumerated().map { Spec.toggle("k\($0.offset)", $0.element) }, stringsTable: "Root")
        try bundle.write(
            "en.lproj/Root.strings", text: zip(titles, translations).map { #""\#($0)" = "\#($1)";"# + "\n" }.joined())
        return translations.reduce(0) { $0 + $1.utf8.count }
    }

    /// The bytes of every title shown that came from a table (those start with `L`).
    static func localizedBytes(_ loaded: SettingsBundle) -> Int {
        loaded.specifiers.compactMap { loaded.displayTitle(of: $0) }.filter { $0.hasPrefix("L") }.reduce(0) { $0 + $1.utf8.count }
    }

    /// `n` toggles on a page whose table translates each title.
    static func manyStringsEntries(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", (0..<n).map { Spec.toggle("k\($0)", "T\($0)") }, stringsTable: "Root")
        try bundle.write("en.lproj/Root.strings", text: (0..<n).map { #""T\#($0)" = "Localized \#($0)";"# + "\n" }.joined())
        return n
    }

    static func localizedCount(_ loaded: SettingsBundle) -> Int {
        loaded.specifiers.filter { loaded.displayTitle(of: $0)?.hasPrefix("Localized") == true }.count
    }

    /// `n` tables no page uses, beside a page of one toggle.
    static func manyStringsTables(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", [Spec.toggle("k", "T")])
        for index in 0..<n { try bundle.write("en.lproj/T\(index).strings", text: #""a" = "b";"# + "\n") }
        return n
    }

    /// `n` languages, each with the root page's table.
    static func manyLanguages(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", [Spec.toggle("k", "T")], stringsTable: "Root")
        for index in 0..<n { try bundle.write("l\(index).lproj/Root.strings", text: #""T" = "L";"# + "\n") }
        return n
    }

    /// `n` pages using one table, and `n` languages that each have it: every page's table is
    /// looked for in every language.
    static func manyPagesAndLanguages(_ bundle: TemporaryBundle, _ n: Int) throws -> Int {
        try bundle.writePage("Root.plist", (0..<n).map { Spec.child("Pane \($0)", file: "P\($0)") }, stringsTable: "Root")
        for index in 0..<n {
            try bundle.writePage("P\(index).plist", [Spec.toggle("p\(index)", "T")], stringsTable: "Root")
            try bundle.write("l\(index).lproj/Root.strings", text: #""T" = "L";"# + "\n")
        }
        return n + 1
    }
}
