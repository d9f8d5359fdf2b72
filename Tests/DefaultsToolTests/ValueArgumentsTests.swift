import DefaultsCore
@testable import DefaultsTool
import Foundation
import TestThreads
import Testing
import ValueSyntaxCases

@Suite(.ownThreads) struct ValueArgumentsTests {
    @Test("-bool and -data read ValueSyntax's words and hex, as every other user does")
    func theSharedValueSyntax() throws {
        for (word, typeFlag, setting) in ValueSyntaxCases.booleanWords {
            let meaning = typeFlag
            _ = (typeFlag, setting)
            if let meaning {
                #expect(try ValueArguments.parse(["-bool", word]) == .set(.bool(meaning)), "\(word.debugDescription)")
            } else {
                #expect(throws: ToolError.self, "\(word.debugDescription)") { try ValueArguments.parse(["-bool", word]) }
            }
        }
        for (text, bytes) in ValueSyntaxCases.hexData {
            if let bytes {
                #expect(try ValueArguments.parse(["-data", text]) == .set(.data(Data(bytes))), "\(text.debugDescription)")
            } else {
                #expect(throws: ToolError.self, "\(text.debugDescription)") { try ValueArguments.parse(["-data", text]) }
            }
        }
    }

    static let typed: [([String], PlistValue)] = [
        (["-string", "5"], .string("5")), (["-int", "5"], .integer(5)), (["-integer", "-12abc"], .integer(-12)),
        (["-int", "99999999999999999999"], .integer(.max)), (["-float", "2.5"], .real(2.5)),
        (["-float", "-.5e1x"], .real(-5)), (["-float", " 7"], .real(7)), (["-bool", "YES"], .bool(true)), (["-boolean", "false"], .bool(false)),
        (["-data", "0102ff"], .data(Data([1, 2, 255]))), (["-data", "<0a bc>"], .data(Data([0x0a, 0xbc]))),
    ]
    static let dates: [([String], PlistValue)] = [
        (["-date", "2026-11-21 10:00:00 +0000"], .date(RFC3339.parse("2026-11-21T10:00:00Z")!)),
        (["-date", "2026-11-21 12:00:00 +0200"], .date(RFC3339.parse("2026-11-21T10:00:00Z")!)),
        (["-date", "2026-11-21T10:00:00Z"], .date(RFC3339.parse("2026-11-21T10:00:00Z")!)),
        (["-date", "2026-11-21"], .date(RFC3339.parse("2026-11-21T00:00:00Z")!)),
    ]
    static let untyped: [([String], PlistValue)] = [
        (["1"], .string("1")), (["true"], .string("true")), (["5.3"], .string("5.3")),
        (["hello world"], .string("hello world")), (["a\\nb"], .string("a\nb")),
        (["(a, b)"], .array([.string("a"), .string("b")])),
        (["{a = 1; b = (x);}"], .dictionary(["a": .string("1"), "b": .array([.string("x")])])),
        (["<01020304>"], .data(Data([1, 2, 3, 4]))), (["\"quoted\""], .string("quoted")),
        (["<integer>1</integer>"], .integer(1)), (["<true/>"], .bool(true)), (["<real>1</real>"], .real(1)),
    ]
    static let composite: [([String], PlistValue)] = [
        (["-array", "one", "-int", "2", "(x)"], .array([.string("one"), .integer(2), .array([.string("x")])])),
        (["-array"], .array([])),
        (["-dict", "k", "v", "n", "-int", "1"], .dictionary(["k": .string("v"), "n": .integer(1)])),
        (["-dict"], .dictionary([:])),
    ]

    @Test(arguments: typed + dates + untyped + composite)
    func parsesLikeMacOS(arguments: [String], expected: PlistValue) throws {
        #expect(try ValueArguments.parse(arguments) == .set(expected))
    }

    @Test func addsAppendAndMerge() throws {
        #expect(try ValueArguments.parse(["-array-add", "x", "-int", "1"]) == .arrayAdd(["x", 1]))
        #expect(try ValueArguments.parse(["-dict-add", "k", "v"]) == .dictionaryAdd(["k": "v"]))
    }

    @Test(arguments: [
        // macOS prints only the usage for these; this port adds a line that names the problem.
        (["-bool", "1"], ToolError.misuse(#"-bool takes yes/no, true/false, not "1""#)),
        (["-bool"], .misuse("-bool needs a value after it")), (["-int"], .misuse("-int needs a value after it")),
        (["-data", "0x01"], .misuse(#"-data takes hexadecimal digits without 0x, not "0x01""#)),
        (["-data", "abc"], .misuse(#"-data takes an even number of hexadecimal digits, not "abc""#)),
        (["-date", "yesterday"], .misuse(#"-date takes 2026-11-21 10:00:00 +0000, 2026-11-21T10:00:00Z or 2026-11-21, not "yesterday""#)),
        // macOS stores 0 for these; a script that meant a number is better told.
        (["-float", "abc"], .failure(#"-float needs a number, not "abc"; leaving defaults unchanged."#)),
        (["-int", "abc"], .failure(#"-int needs an integer, not "abc"; leaving defaults unchanged."#)),
        (["-float", ""], .failure(#"-float needs a number, not ""; leaving defaults unchanged."#)),
        (["-int", "1", "2"], .failure("Unexpected argument 2; leaving defaults unchanged.")),
        // macOS blames the word after an unknown flag; the second line names the flag.
        (["-strng", "foo"], .failure("""
            Unexpected argument foo; leaving defaults unchanged.
            -strng is not a type; the types are -string, -data, -int[eger], -float, -bool[ean], -date, -array, -array-add, -dict, -dict-add
            """)),
        (["-array", "-array", "x"], .failure("Cannot nest composite types (arrays and dictionaries); exiting")),
        (["-dict", "-int", "1", "v"], .failure("Dictionary keys must be strings")),
        (["-dict", "k"], .failure("Key k lacks a corresponding value")),
        (["{\"name\": \"x\"}"], .failure("Could not parse: {\"name\": \"x\"}.  Try single-quoting it.")),
    ])
    func refusesLikeMacOS(arguments: [String], error: ToolError) {
        #expect(throws: error) { try ValueArguments.parse(arguments) }
    }
}
