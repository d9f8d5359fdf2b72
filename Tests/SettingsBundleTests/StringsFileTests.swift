import DefaultsCore
import Foundation
import SettingsBundles
import SharedCorpus
import TestThreads
import Testing

/// `.strings` files: encodings, the old-style syntax, abandonment on a syntax error, plist tables.
@Suite(.ownThreads) struct StringsFileTests {
    static let sample = "/* Greetings */\n\"greeting\" = \"Grüß dich\";\n// emoji\n\"rocket\" = \"🚀\";\n"
    static let sampleEntries = ["greeting": "Grüß dich", "rocket": "🚀"]

    static func encode(_ text: String, _ encoding: TextEncoding) -> [UInt8] {
        let utf16 = Array(text.utf16)
        let le = utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        let be = utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }
        let scalars = text.unicodeScalars.map(\.value)
        switch encoding {
        case .utf8: return Array(text.utf8)
        case .utf8WithBOM: return [0xEF, 0xBB, 0xBF] + Array(text.utf8)
        case .utf16LEWithBOM: return [0xFF, 0xFE] + le
        case .utf16BEWithBOM: return [0xFE, 0xFF] + be
        case .utf16LE: return le
        case .utf16BE: return be
        case .utf32LEWithBOM:
            return [0xFF, 0xFE, 0, 0] + scalars.flatMap { v in (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
        case .utf32BEWithBOM:
            return [0, 0, 0xFE, 0xFF]
                + scalars.flatMap { v in (0..<4).reversed().map { UInt8((v >> (8 * $0)) & 0xFF) } }
        }
    }

    static func read(_ text: String) -> (file: StringsFile, diagnostics: [Diagnostic]) {
        StringsFile.read(Data(text.utf8), path: "en.lproj/Root.strings")
    }

    @Test(arguments: TextEncoding.allCases)
    func everyEncodingReadsTheSameTable(_ encoding: TextEncoding) {
        let (file, diagnostics) = StringsFile.read(Data(Self.encode(Self.sample, encoding)), path: "x.strings")
        #expect(file.format == .text(encoding))
        #expect(file.entries == Self.sampleEntries)
        #expect(diagnostics.isEmpty)
    }

    @Test func binaryAndXMLPlistTables() throws {
        let values: [String: PlistValue] = ["Rank": "Grade", "Warp Drive": "Distorsion"]
        for (format, expected) in [(PropertyListFile.Format.binary, StringsFile.Format.binaryPlist), (.xml, .xmlPlist)]
        {
            let (file, diagnostics) = StringsFile.read(
                try PropertyListFile.encode(values, format: format), path: "t.strings")
            #expect(file.format == expected)
            #expect(file.entries == ["Rank": "Grade", "Warp Drive": "Distorsion"])
            #expect(diagnostics.isEmpty)
        }
    }

    /// Whether a table is XML is told as DefaultsCore tells it for every property list: text
    /// that starts with `<` may still be old-style (its data is written `<0fbd>`).
    @Test func oldStyleDataIsNotTakenForXML() {
        let (file, diagnostics) = Self.read("<0fbd>")
        #expect(file.format == .text(.utf8))
        #expect(file.entries == nil)
        #expect(
            diagnostics.map(\.description) == [
                "en.lproj/Root.strings: error STRINGS_NOT_DICT: the top level is data, not a dictionary; the whole table is ignored"
            ])
    }

    @Test func escapesQuotesAndUnquotedStrings() {
        let text = #"""
            "quote" = "say \"hi\"";
            "backslash" = "a\\b";
            "controls" = "1\n2\t3";
            "unicode" = "caf\U00e9 \UD83D\UDE80";
            "octal" = "\101\102";
            'single' = 'it\'s';
            unquoted_key.v2 = value/with:colons-and$;
            "shortcut";
            "continued" = "line\
            next";
            { "not" = "a key"; }
            """#
        let (file, diagnostics) = Self.read(text)
        #expect(
            file.entries == [
                "quote": "say \"hi\"", "backslash": "a\\b", "controls": "1\n2\t3", "unicode": "café 🚀", "octal": "AB",
                "single": "it's", "unquoted_key.v2": "value/with:colons-and$", "shortcut": "shortcut",
                "continued": "line\nnext",
            ])
        // The braces cannot start an entry: Apple's parser drops them silently; we say so.
        #expect(
            diagnostics.map(\.description) == [
                "en.lproj/Root.strings:11: warning STRINGS_TRAILING_TEXT: text after the last entry cannot start an entry "
                    + "and is ignored"
            ])
    }

    @Test func aTableInBracesAndNestedValues() {
        let (file, diagnostics) = Self.read("{ \"a\" = \"b\"; \"list\" = (\"x\", \"y\",); \"blob\" = <0fbd 77>; }")
        #expect(file.entries == ["a": "b"])
        #expect(
            diagnostics.map(\.description) == [
                "en.lproj/Root.strings: warning STRINGS_VALUE_NOT_STRING: the value of \"blob\" is data; lookups of it show the key",
                "en.lproj/Root.strings: warning STRINGS_VALUE_NOT_STRING: the value of \"list\" is an array; lookups of it show the key",
            ])
    }

    @Test func duplicateAndEmptyKeys() {
        let (file, diagnostics) = Self.read("\"\" = \"header\";\n\"a\" = \"first\";\n\n\"a\" = \"second\";\n")
        #expect(file.entries == ["": "header", "a": "second"])
        #expect(
            diagnostics.map(\.description) == [
                "en.lproj/Root.strings:4: warning STRINGS_DUPLICATE_KEY: \"a\" is defined on lines 2 and 4; the last one wins",
                "en.lproj/Root.strings:1: info STRINGS_EMPTY_KEY: an entry has the empty key \"\"",
            ])
    }

    /// One syntax error anywhere abandons the whole table, as Apple's parser does.
    @Test(arguments: [
        ("\"a\" = \"1\";\n\"b\" = \"2\"\n", 2, "missing ';' after the entry \"b\""),
        ("\"a\" = \"1\";\n\"b\" = \"2;\n", 2, "unterminated quoted string starting on line 2"),
        ("\"a\" = \"1\";\n\"b\" \"2\";\n", 2, "expected '=' or ';' after the key \"b\", found '\"'"),
        ("\"a\" = ;\n", 1, "unexpected character ';'"),
        ("\"a\" = \"1\";\n\"b\" =", 2, "unexpected end of file"),
        ("\"a\" = <0g>;", 1, "invalid character 'g' in data"),
    ])
    func aSyntaxErrorAbandonsTheTable(_ text: String, _ line: Int, _ message: String) {
        let (file, diagnostics) = Self.read(text)
        #expect(file.entries == nil)
        #expect(file.format == .text(.utf8))
        #expect(diagnostics.map(\.code) == [.stringsUnparseable])
        #expect(diagnostics.first?.line == line)
        #expect(
            diagnostics.first?.message
                == "\(message) (line \(line)); the whole table is ignored, as Apple's parser does")
    }

    @Test func topLevelsThatAreNotTables() {
        for text in ["(\"a\", \"b\")", "\"just a string\""] {
            let (file, diagnostics) = Self.read(text)
            #expect(file.entries == nil)
            #expect(diagnostics.map(\.code) == [.stringsNotDict])
        }
        let (file, diagnostics) = Self.read("\"a\" = \"b\"; (")
        #expect(file.entries == ["a": "b"])
        #expect(diagnostics.map(\.code) == [.stringsTrailingText])
    }

    @Test func emptyAndCommentOnlyFilesAreEmptyTables() {
        for bytes: [UInt8] in [[], [0xFF, 0xFE, 0x0A, 0x00], Array("/* nothing */\n// here\n".utf8)] {
            let (file, diagnostics) = StringsFile.read(Data(bytes), path: "e.strings")
            #expect(file.entries == [:])
            #expect(diagnostics.isEmpty)
        }
    }

    @Test func undecodableBytesAbandonTheTable() {
        let (file, diagnostics) = StringsFile.read(
            Data([0x22, 0x61, 0x22, 0x20, 0x3D, 0x20, 0x22, 0xC3, 0x28, 0x22, 0x3B]), path: "bad.strings")
        #expect(file.entries == nil)
        #expect(file.format == nil)
        #expect(
            diagnostics.map(\.description) == [
                "bad.strings: error STRINGS_UNPARSEABLE: not valid UTF-8 text; the whole table is ignored"
            ])
        let lone = StringsFile.read(Data([0xFF, 0xFE, 0x00, 0xD8, 0x22, 0x00]), path: "lone.strings")
        #expect(lone.file.entries == nil)
        #expect(lone.diagnostics.first?.message == "not valid UTF-16LE+BOM text; the whole table is ignored")
    }

    /// Corpus files in every encoding the corpus has.
    @Test(.needsSharedCorpus) func corpusEncodings() throws {
        let cases: [(String, StringsFile.Format, Int)] = [
            ("ARISGames__iOSClient/Settings.bundle/en.lproj/Root.strings", .text(.utf8WithBOM), 3),
            ("futuretap__InAppSettingsKit--2016/Settings.bundle/en.lproj/Root.strings", .text(.utf16BEWithBOM), 37),
            ("futuretap__InAppSettingsKit/Settings.bundle/de.lproj/Root.strings", .text(.utf8), 39),
            ("0xe1f__Spark360-iOS/Settings.bundle/en.lproj/Root.strings", .binaryPlist, 4),
            ("wallabag__ios-app/Settings.bundle/ar.lproj/Root.strings", .text(.utf16LEWithBOM), 0),
        ]
        for (path, format, count) in cases {
            let data = try Data(contentsOf: Corpus.directory.appendingPathComponent(path))
            let (file, _) = StringsFile.read(data, path: path)
            #expect(file.format == format, "\(path)")
            #expect(file.entries?.count == count, "\(path)")
        }
    }
}
