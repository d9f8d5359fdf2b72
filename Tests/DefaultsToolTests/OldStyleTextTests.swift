import DefaultsCore
@testable import DefaultsTool
import Foundation
import TestThreads
import Testing

/// The text of `defaults read`, character for character as macOS prints it.
@Suite(.ownThreads) struct OldStyleTextTests {
    func printed(_ value: PlistValue) -> String { NonLossyASCII.encode(OldStyleText.describe(value)) }

    @Test func theWorkedExampleOfADomain() throws {
        let domain: PlistValue = [
            "s": "hello world", "i": -3, "f": 2.5, "b": true,
            "d": .date(RFC3339.parse("2026-11-21T10:00:00Z")!), "x": .data(Data([1, 2, 3, 4])),
            "a": ["one", "two words", 3], "n": ["k": "v"],
        ]
        #expect(printed(domain) == """
            {
                a =     (
                    one,
                    "two words",
                    3
                );
                b = 1;
                d = "2026-11-21 10:00:00 +0000";
                f = "2.5";
                i = "-3";
                n =     {
                    k = v;
                };
                s = "hello world";
                x = {length = 4, bytes = 0x01020304};
            }
            """)
    }

    @Test func dictionariesInsideArraysKeepTheirIndent() {
        let dock: PlistValue = [
            "persistent-apps": [
                ["GUID": 568757455, "tile-data": ["bundle-identifier": "com.apple.launchpad.launcher", "dock-extra": false],
                 "tile-type": "file-tile"],
                ["GUID": 4010545205],
            ],
            "orientation": "left",
        ]
        #expect(printed(dock) == """
            {
                orientation = left;
                "persistent-apps" =     (
                            {
                        GUID = 568757455;
                        "tile-data" =             {
                            "bundle-identifier" = "com.apple.launchpad.launcher";
                            "dock-extra" = 0;
                        };
                        "tile-type" = "file-tile";
                    },
                            {
                        GUID = 4010545205;
                    }
                );
            }
            """)
    }

    @Test func emptyContainers() {
        #expect(printed([:]) == "{\n}")
        #expect(printed([]) == "(\n)")
        #expect(printed(["map": [:], "list": []]) == "{\n    list =     (\n    );\n    map =     {\n    };\n}")
    }

    @Test func keysSortByCodeUnit() {
        let value: PlistValue = ["zeta": 1, "alpha": 1, "B": 1, "_": 1, "10": 1, "9": 1, "hello world": 1]
        #expect(printed(value) == "{\n    10 = 1;\n    9 = 1;\n    B = 1;\n    \"_\" = 1;\n    alpha = 1;\n    \"hello world\" = 1;\n    zeta = 1;\n}")
    }

    @Test(arguments: [
        ("Dark", "Dark"), ("TRUE", "TRUE"), ("10", "10"), ("", "\"\""), ("en_US", "\"en_US\""), ("mod-count", "\"mod-count\""),
        ("0.5", "\"0.5\""), ("file:///Users/case/", "\"file:///Users/case/\""), ("{976, 334}", "\"{976, 334}\""),
        ("say \"hi\"", "\"say \\\\\"hi\\\\\"\""), ("a\\b", "\"a\\\\\\\\b\""), ("line\nbreak", "\"line\\\\nbreak\""),
        ("Siân", "\"Si\\\\U00e2n\""), ("浏览器", "\"\\\\U6d4f\\\\U89c8\\\\U5668\""), ("🚀", "\"\\\\Ud83d\\\\Ude80\""),
    ])
    func stringsAreQuotedAndEscapedAsOnMacOS(string: String, expected: String) {
        #expect(NonLossyASCII.encode(OldStyleText.quoted(string)) == expected)
    }

    @Test func scalarsInsideContainers() {
        #expect(printed(["n": -1]) == "{\n    n = \"-1\";\n}")
        #expect(printed(["r": 52.0]) == "{\n    r = 52;\n}")
        #expect(printed(["r": 9348.31]) == "{\n    r = \"9348.309999999999\";\n}")  // %.16g
        #expect(printed(["r": 0.03333333299999999]) == "{\n    r = \"0.03333333299999999\";\n}")
        #expect(printed(["t": true, "f": false]) == "{\n    f = 0;\n    t = 1;\n}")
    }

    @Test func datesAreUTCWithoutFraction() {
        #expect(OldStyleText.date(RFC3339.parse("2019-10-12T17:28:40.999Z")!) == "2019-10-12 17:28:40 +0000")
        #expect(OldStyleText.date(Date(timeIntervalSince1970: -0.5)) == "1969-12-31 23:59:59 +0000")
    }

    @Test func dataUpTo24BytesIsWholeAndLongerIsAbbreviated() {
        #expect(OldStyleText.data(Data()) == "{length = 0, bytes = 0x}")
        #expect(OldStyleText.data(Data(repeating: 0xab, count: 24)) == "{length = 24, bytes = 0x" + String(repeating: "ab", count: 24) + "}")
        let long = Data("book".utf8) + Data([0x98, 0x03, 0, 0, 0, 0, 4, 0x10, 0x30, 0, 0, 0]) + Data(repeating: 0x11, count: 896)
            + Data([0x38, 0x02, 0, 0, 0, 0, 0, 0])
        #expect(OldStyleText.data(long) == "{length = 920, bytes = 0x626f6f6b 98030000 00000410 30000000 ... 38020000 00000000 }")
    }

    @Test func aScalarReadOnItsOwnIsPlain() {
        #expect(NonLossyASCII.encode(OldStyleText.plain("hello world")) == "hello world")
        #expect(NonLossyASCII.encode(OldStyleText.plain("Mise à jour")) == "Mise \\340 jour")
        #expect(NonLossyASCII.encode(OldStyleText.plain("日本")) == "\\u65e5\\u672c")
        #expect(OldStyleText.plain(-3) == "-3")
        #expect(OldStyleText.plain(2.5) == "2.5")
        #expect(OldStyleText.plain(true) == "1")
        #expect(OldStyleText.plain(.data(Data([1, 2, 3, 4]))) == "{length = 4, bytes = 0x01020304}")
    }

    @Test("defaults watch prints data as read does, unquoted")
    func watchPrintsDataAsReadDoes() throws {
        #expect(OldStyleText.describe(.data(Data([1, 2, 3, 4]))) == "{length = 4, bytes = 0x01020304}")
        let line = #"{"event":"didChange","domain":"com.example.a","generation":2,"changes":{"blob":{"$data":"AQIDBA=="}},"origin":{"source":"file"}}"#
        let text = try Command.describeEvent(line, at: Date(timeIntervalSince1970: 0))
        #expect(text.hasSuffix(" com.example.a blob = {length = 4, bytes = 0x01020304}  (file)\n"), "\(text)")
    }
}
