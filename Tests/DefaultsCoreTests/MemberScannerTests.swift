@testable import DefaultsCore
import Foundation
import Testing

/// The request path's first reader (`MemberScanner`) against the full grammar: whatever it
/// accepts, the full parser accepts with the same members; what it declines is read by the
/// full parser, so it must never accept a line the full parser refuses.
@Suite struct MemberScannerTests {
    static let requestLines = [
        #"{"op":"set","domain":"com.example.bridge","key":"warpFactor","value":7}"#,
        #"{"id":7,"op":"get","domain":"com.x","key":"k"}"#,
        #" { "op" : "set" , "domain" : "d" , "key" : "r" , "value" : -1.5e+3 } "#,
        #"{"op":"apply","domain":"d","set":{"a":[1,true,null],"b":{"$date":"2026-11-21T10:00:00Z"}},"remove":["c"]}"#,
        #"{"op":"subscribe","domains":["a","b"],"id":[1,"x"]}"#,
        #"{"op":"ping","id":null,"flag":false}"#,
        "{}",
        "{\"op\":\"ping\"}\r",
        #"{"n":0,"m":-0,"r":0.5,"e":1E9,"big":18446744073709551616}"#,
        #"{"op":"ping","op":"get"}"#,
    ]

    /// Lines the scanner hands to the full parser, valid or not.
    static let declinedLines = [
        #"{"\u006fp":"get"}"#,          // escaped name
        #"{"op":"g\"et"}"#,             // escaped value
        #"{"op":"gét"}"#,               // not ASCII
        #"{"n":01}"#, #"{"n":1.}"#, #"{"n":-}"#, #"{"n":1e}"#,
        #"{"op":"get"} x"#, #"{"op" "get"}"#, #"{"op":"get",}"#, #"{"op":"get""#,
        #"["op"]"#, #""op""#, "", "   ",
        "{\"a\":\"\t\"}",               // control character in a string
        #"{"a":tru}"#, #"{"a":[1,]}"#,
    ]

    func fullGrammar(_ bytes: [UInt8]) -> Result<JSONMembers?, JSONParseError> {
        bytes.withUnsafeBytes { raw in
            Result { () throws(JSONParseError) -> JSONMembers? in
                var members = JSONMembers()
                return try JSONParser.parseObjectMembersWithFullGrammar(raw, into: &members) ? members : nil
            }
        }
    }

    func scanned(_ bytes: [UInt8]) -> JSONMembers? {
        var members = JSONMembers()
        return bytes.withUnsafeBytes { MemberScanner.scan($0, into: &members) } ? members : nil
    }

    func expectAgreement(_ bytes: [UInt8], _ label: String) {
        guard let scanned = scanned(bytes) else { return }
        switch fullGrammar(bytes) {
        case .success(let full?):
            // The same ranges, kinds and name words, so every lookup finds the same member.
            #expect(scanned.spans == full.spans, "\(label)")
            #expect(scanned == full, "\(label)")
        case .success(nil):
            Issue.record("\(label): the scanner read members from a line that is not an object")
        case .failure(let error):
            Issue.record("\(label): the scanner accepted a line the full grammar refuses: \(error)")
        }
    }

    @Test func theConformanceSuiteReadsTheSameOrIsDeclined() throws {
        let names = JSONConformanceTests.cases("y_") + JSONConformanceTests.cases("n_") + JSONConformanceTests.cases("i_")
        #expect(names.count > 300)
        var scannedObjects = 0
        for name in names {
            let bytes = try JSONConformanceTests.contents(name)
            if scanned(bytes) != nil { scannedObjects += 1 }
            expectAgreement(bytes, name)
        }
        // The suite's plain objects are the scanner's: the comparison above is not empty.
        #expect(scannedObjects >= 5)
    }

    @Test(arguments: requestLines)
    func requestLinesAreReadByTheScannerAsByTheFullGrammar(_ line: String) throws {
        let bytes = Array(line.utf8)
        #expect(scanned(bytes) != nil, "the common shape of a request is the scanner's to read")
        expectAgreement(bytes, line)
    }

    @Test(arguments: declinedLines)
    func unusualLinesAreLeftToTheFullGrammar(_ line: String) {
        #expect(scanned(Array(line.utf8)) == nil)
    }

    @Test func nestingIsLimitedAsInTheFullGrammar() throws {
        func line(depth: Int) -> [UInt8] {
            Array(("{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)
        }
        // The object is the first level, so its value may nest one level less than the limit.
        let deepest = line(depth: JSONParser.maximumDepth - 1)
        #expect(scanned(deepest) != nil)
        expectAgreement(deepest, "deepest")
        let tooDeep = line(depth: JSONParser.maximumDepth)
        #expect(scanned(tooDeep) == nil)
        #expect(throws: JSONParseError.self) { try JSONParser.parseObjectMembers(tooDeep) }
    }

    @Test func namesOfEveryLengthAreFoundAndTheLastOfARepeatedOneWins() throws {
        let line = Array(#"{"k":1,"domains":2,"defaults":3,"appDomain":4,"":5,"k":6,"domain":7}"#.utf8)
        let m = try #require(scanned(line), "a line of plain names is the scanner's")
        expectAgreement(line, "plain names")
        #expect(m["k"] == .integer(6))
        #expect(m["domains"] == .integer(2))    // seven bytes: packed into a word
        #expect(m["defaults"] == .integer(3))   // eight: compared byte by byte
        #expect(m["appDomain"] == .integer(4))
        #expect(m[""] == .integer(5))
        #expect(m["domain"] == .integer(7))
        #expect(m["domai"] == nil)
        #expect(m["domainss"] == nil)
        #expect(m["defaultsX"] == nil)
        // An escaped name is left to the full grammar, and found by its text.
        let escaped = try #require(try JSONParser.parseObjectMembers(Array(#"{"x\u0079z":5,"op":"get"}"#.utf8)))
        #expect(escaped["xyz"] == .integer(5))
        #expect(escaped["op"] == .string("get"))
    }

    @Test func typedReadsGiveExactTypesOrNothing() throws {
        let m = try #require(try JSONParser.parseObjectMembers(Array(
            #"{"s":"text","e":"t\u00e9","i":-42,"r":2.0,"big":9223372036854775808,"b":true,"z":null,"o":{"a":1}}"#.utf8)))
        #expect(m.stringValue("s") == "text")
        #expect(m.stringValue("e") == "té")
        #expect(m.stringValue("i") == nil)
        #expect(m.stringValue("absent") == nil)
        #expect(m.scalarValue("s") == .string("text"))
        #expect(m.scalarValue("i") == .integer(-42))
        #expect(m.scalarValue("r") == .real(2.0))
        // Everything else is left to the full decoding, which words the error or builds the value.
        #expect(m.scalarValue("big") == nil)
        #expect(m.scalarValue("e") == nil)
        #expect(m.scalarValue("b") == nil)
        #expect(m.scalarValue("z") == nil)
        #expect(m.scalarValue("o") == nil)
        #expect(m.scalarValue("absent") == nil)
    }
}
