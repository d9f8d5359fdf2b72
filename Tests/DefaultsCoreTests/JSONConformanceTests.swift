import DaemonTestSupport
@testable import DefaultsCore
import Foundation
import SharedCorpus
import TestThreads
import Testing

/// The JSON parser against the conformance suite in `../shared/corpus/json-test-suite/test_parsing`:
/// every `y_` case accepted, every `n_` case refused, every `i_` case survived.
@Suite(.ownThreads) struct JSONConformanceTests {
    static let directory = SharedCorpus.jsonTestSuite

    static func cases(_ prefix: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(prefix) && $0.hasSuffix(".json") }.sorted()
    }

    static func contents(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: directory.appendingPathComponent(name)))
    }

    @Test(.needsSharedCorpus) func theSuiteIsPresent() {
        #expect(Self.cases("y_").count == 95)
        #expect(Self.cases("n_").count > 180)
        #expect(Self.cases("i_").count == 35)
    }

    @Test(.needsSharedCorpus, arguments: cases("y_"))
    func accepts(_ name: String) throws {
        let bytes = try Self.contents(name)
        let json = try JSONParser.parse(bytes)
        // The request path's reader agrees: the same members, or nil for a non-object.
        let members = try JSONParser.parseObjectMembers(bytes)
        if case .object(let object) = json {
            let asObject = members.map { found in
                Dictionary(found.members.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
            }
            #expect(asObject == object)
        } else {
            #expect(members == nil)
        }
    }

    @Test(.needsSharedCorpus, arguments: cases("n_"))
    func rejects(_ name: String) throws {
        let bytes = try Self.contents(name)
        #expect(throws: JSONParseError.self) { try JSONParser.parse(bytes) }
        #expect(throws: JSONParseError.self) { try JSONParser.parseObjectMembers(bytes) }
    }

    @Test(.needsSharedCorpus, arguments: cases("i_"))
    func survives(_ name: String) throws {
        _ = try? JSONParser.parse(try Self.contents(name))
        _ = try? JSONParser.parseObjectMembers(try Self.contents(name))
    }

    @Test func invalidUTF8InAStringIsReportedAsSuch() {
        #expect(throws: JSONParseError.invalidUTF8(offset: 1)) { try JSONParser.parse([0x22, 0xFF, 0x22]) }
        #expect(throws: JSONParseError.invalidUTF8(offset: 2)) { try JSONParser.parse([0x5B, 0x22, 0xC3, 0x22, 0x5D]) }
    }

    @Test func escapesAndSurrogatePairsDecode() throws {
        #expect(try JSONParser.parse(#""a\"\\\/\b\f\n\r\t\u00e9\ud83d\ude80""#) == .string("a\"\\/\u{8}\u{c}\n\r\té🚀"))
        #expect(try JSONParser.parse(#"{"a":1,"a":2}"#) == .object(["a": .integer(2)]))
    }

    @Test func objectMembersKeepTheirOrderAndTheLastOfARepeatedName() throws {
        let members = try #require(try JSONParser.parseObjectMembers(Array(#" {"op":"get","n":1.0,"op":"set"} "#.utf8)))
        #expect(members.members.map(\.name) == ["op", "n", "op"])
        #expect(members["op"] == .string("set"))
        #expect(members["n"] == .real(1))
        #expect(members["absent"] == nil)
        #expect(try JSONParser.parseObjectMembers(Array("[1]".utf8)) == nil)
        #expect(throws: JSONParseError.self) { try JSONParser.parseObjectMembers(Array("{} x".utf8)) }
    }
}
