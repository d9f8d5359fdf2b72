@testable import DefaultsCore
import TestThreads
import Testing

/// The request path's members: checked when read, decoded when asked for, with the same
/// values the full parser gives.
@Suite(.ownThreads) struct JSONMembersTests {
    func members(_ text: String) throws -> JSONMembers {
        try #require(try JSONParser.parseObjectMembers(Array(text.utf8)))
    }

    @Test func valuesDecodeWithTheirExactTypes() throws {
        let m = try members(#"{"i":7,"r":1.0,"e":1e2,"n":-0,"big":18446744073709551616,"t":true,"z":null,"s":"é\n","o":{"a":[1,"x"]}}"#)
        #expect(m["i"] == .integer(7))
        #expect(m["r"] == .real(1.0))
        #expect(m["e"] == .real(100))
        #expect(m["n"] == .integer(0))
        #expect(m["big"] == .unrepresentableNumber("18446744073709551616"))
        #expect(m["t"] == .bool(true))
        #expect(m["z"] == .null)
        #expect(m["s"] == .string("é\n"))
        #expect(m["o"] == .object(["a": .array([.integer(1), .string("x")])]))
        #expect(m["absent"] == nil)
        #expect(m.count == 9)
    }

    @Test func aNameWrittenWithEscapesIsFoundByItsText() throws {
        let m = try members(#"{"\u006fp":"get","k\"q":1}"#)
        #expect(m["op"] == .string("get"))
        #expect(m["k\"q"] == .integer(1))
        #expect(m.members.map(\.name) == ["op", "k\"q"])
    }

    @Test func hasValueTellsNullFromPresent() throws {
        let m = try members(#"{"a":null,"b":0,"c":"null"}"#)
        #expect(!m.hasValue("a"))
        #expect(m.hasValue("b"))
        #expect(m.hasValue("c"))
        #expect(!m.hasValue("absent"))
    }

    @Test func aPlainStringIsHandedOverAsItsBytes() throws {
        let m = try members(#"{"op":"set","escaped":"s\u0065t","n":5,"empty":"","op2":"get","u":"é","op":"ping"}"#)
        func text(_ name: StaticString) -> String? {
            m.withPlainString(name) { String(decoding: $0, as: UTF8.self) }
        }
        #expect(text("op") == "ping")  // the last of a repeated name
        #expect(text("empty") == "")
        #expect(text("escaped") == nil)  // written with escapes: decoded through the subscript
        #expect(m["escaped"] == .string("set"))
        #expect(text("n") == nil)
        #expect(text("u") == nil)  // not ASCII: decoded through the subscript
        #expect(text("absent") == nil)
        #expect(m.withPlainString("op2") { _ in Optional<Int>.none } == nil)
    }

    @Test func aReusedTableHoldsOnlyTheLastObject() throws {
        var m = JSONMembers()
        let first = Array(#"{"op":"set","key":"k","value":[1,2]}"#.utf8)
        let second = Array(#"{"op":"get"}"#.utf8)
        let kept = try first.withUnsafeBytes { raw in
            _ = try JSONParser.parseObjectMembers(raw, into: &m)
            return m
        }
        _ = try second.withUnsafeBytes { raw in try JSONParser.parseObjectMembers(raw, into: &m) }
        #expect(m == JSONMembers(["op": .string("get")]))
        #expect(kept["value"] == .array([.integer(1), .integer(2)]))
    }
}
