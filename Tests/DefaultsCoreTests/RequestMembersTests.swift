@testable import DefaultsCore
import Foundation
import TestThreads
import Testing

/// How the request path reads a line: one grammar (JSONParser) that checks the whole line and
/// records where each top-level member lies, decoding a member only when asked.
@Suite(.ownThreads) struct RequestMembersTests {
    static let requestLines: [(line: String, op: String?)] = [
        (#"{"op":"set","domain":"com.example.bridge","key":"warpFactor","value":7}"#, "set"),
        (#"{"id":7,"op":"get","domain":"com.x","key":"k"}"#, "get"),
        (#" { "op" : "set" , "domain" : "d" , "key" : "r" , "value" : -1.5e+3 } "#, "set"),
        (#"{"op":"apply","domain":"d","set":{"a":[1,true,null],"b":{"$date":"2026-11-21T10:00:00Z"}},"remove":["c"]}"#, "apply"),
        (#"{"op":"subscribe","domains":["a","b"],"id":[1,"x"]}"#, "subscribe"),
        (#"{"op":"ping","id":null,"flag":false}"#, "ping"),
        ("{}", nil),
        ("{\"op\":\"ping\"}\r", "ping"),
        (#"{"n":0,"m":-0,"r":0.5,"e":1E9,"big":18446744073709551616}"#, nil),
        (#"{"op":"ping","op":"get"}"#, "get"),
        (#"{"\u006fp":"get"}"#, "get"),
        (#"{"op":"g\"et"}"#, "g\"et"),
        (#"{"op":"gét"}"#, "gét"),
    ]

    static let refusedLines = [
        #"{"n":01}"#, #"{"n":1.}"#, #"{"n":-}"#, #"{"n":1e}"#,
        #"{"op":"get"} x"#, #"{"op" "get"}"#, #"{"op":"get",}"#, #"{"op":"get""#, "", "   ",
        "{\"a\":\"\t\"}",               // control character in a string
        #"{"a":tru}"#, #"{"a":[1,]}"#,
    ]

    @Test(arguments: requestLines)
    func requestLinesAreReadWithTheirMembers(_ line: String, op: String?) throws {
        let members = try #require(try JSONParser.parseObjectMembers(Array(line.utf8)))
        #expect(members.stringValue("op") == op)
    }

    @Test(arguments: refusedLines)
    func linesThatAreNotJSONAreRefused(_ line: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parseObjectMembers(Array(line.utf8)) }
    }

    @Test func valuesThatAreNotObjectsAreNoRequest() throws {
        #expect(try JSONParser.parseObjectMembers(Array(#"["op"]"#.utf8)) == nil)
        #expect(try JSONParser.parseObjectMembers(Array(#""op""#.utf8)) == nil)
    }

    @Test func nestingIsLimited() throws {
        func line(depth: Int) -> [UInt8] {
            Array(("{\"a\":" + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}").utf8)
        }
        // The object is the first level, so its value may nest one level less than the limit.
        let deepest = line(depth: JSONParser.maximumDepth - 1)
        #expect(try JSONParser.parseObjectMembers(deepest) != nil)
        let tooDeep = line(depth: JSONParser.maximumDepth)
        #expect(throws: JSONParseError.self) { try JSONParser.parseObjectMembers(tooDeep) }
    }

    @Test func namesOfEveryLengthAreFoundAndTheLastOfARepeatedOneWins() throws {
        let line = Array(#"{"k":1,"domains":2,"defaults":3,"appDomain":4,"":5,"k":6,"domain":7}"#.utf8)
        let m = try #require(try JSONParser.parseObjectMembers(line))
        #expect(m["k"] == .integer(6))
        #expect(m["domains"] == .integer(2))    // seven bytes: packed into a word
        #expect(m["defaults"] == .integer(3))   // eight: compared byte by byte
        #expect(m["appDomain"] == .integer(4))
        #expect(m[""] == .integer(5))
        #expect(m["domain"] == .integer(7))
        #expect(m["domai"] == nil)
        #expect(m["domainss"] == nil)
        #expect(m["defaultsX"] == nil)
        // An escaped name is found by its text.
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
