import DefaultsCore
@testable import DefaultsServer
import Testing

/// A request's `op` is matched once, by word for short names and by text for the others.
@Suite struct OperationNameTests {
    func operation(_ line: String) throws -> OperationName? {
        OperationName(of: try #require(try JSONParser.parseObjectMembers(Array(line.utf8))))
    }

    @Test(arguments: OperationName.allCases)
    func everyOperationIsFoundByItsName(_ name: OperationName) throws {
        #expect(try operation(#"{"op":"\#(name.rawValue)","domain":"com.x"}"#) == name)
    }

    @Test func unknownNamesAndOtherValuesAreNotOperations() throws {
        #expect(try operation(#"{"op":"fly"}"#) == nil)
        #expect(try operation(#"{"op":"sett"}"#) == nil)
        #expect(try operation(#"{"op":"Set"}"#) == nil)
        #expect(try operation(#"{"op":"synchronise"}"#) == nil)
        #expect(try operation(#"{"op":""}"#) == nil)
        #expect(try operation(#"{"op":7}"#) == nil)
        #expect(try operation(#"{"domain":"com.x"}"#) == nil)
    }

    @Test func aNameWrittenWithEscapesIsStillFound() throws {
        #expect(try operation(#"{"op":"s\u0065t"}"#) == .set)
        #expect(try operation(#"{"\u006fp":"get"}"#) == .get)
        #expect(try operation(#"{"op":"fly","op":"ping"}"#) == .ping)
    }

    @Test func theRequestKeepsTheTextOfAnUnknownOpForItsError() throws {
        let members = try #require(try JSONParser.parseObjectMembers(Array(#"{"id":3,"op":"fly"}"#.utf8)))
        guard case .success(let request) = Request.parse(members) else {
            Issue.record("an unknown op is still a request, answered with unknown_op")
            return
        }
        #expect(request.operation == nil)
        #expect(request.op == "fly")
        #expect(request.id == .integer(3))
    }
}
