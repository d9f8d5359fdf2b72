@testable import DefaultsCore
@testable import DefaultsServer
import NIOCore
import TestThreads
import Testing

@Suite(.ownThreads) struct RequestDecoderTests {
    func decode(_ text: String) -> Incoming { decode(ByteBuffer(string: text)) }

    func decode(_ line: ByteBuffer) -> Incoming {
        var members = JSONMembers()
        return RequestDecoder.decode(line, reusing: &members)
    }

    @Test func parsesARequest() {
        guard case .request(let request) = decode(#"{"id":7,"op":"get","domain":"com.x"}"#) else {
            Issue.record("not a request")
            return
        }
        #expect(request.id == .integer(7))
        #expect(request.op == "get")
        #expect(request.parameters == JSONMembers(["id": .integer(7), "op": .string("get"), "domain": .string("com.x")]))
    }

    @Test(arguments: [
        ("not json", "bad_json", false), ("[1,2]", "bad_json", false), (#"{"id":3}"#, "missing_parameter", true),
        (#"{"id":3,"op":5}"#, "invalid_parameter", true), (#"{"op":"#, "bad_json", false),
    ])
    func refusesMalformedLines(text: String, code: String, keepsID: Bool) {
        guard case .invalid(let id, let error) = decode(text) else {
            Issue.record("accepted \(text)")
            return
        }
        #expect(error.code.rawValue == code)
        #expect((id == .integer(3)) == keepsID)
    }

    @Test func aReusedTableLeavesEarlierRequestsAlone() {
        var members = JSONMembers()
        guard case .request(let first) = RequestDecoder.decode(ByteBuffer(string: #"{"op":"get","domain":"com.a"}"#), reusing: &members),
              case .invalid(_, let error) = RequestDecoder.decode(ByteBuffer(string: #"{"op":"set","oops"}"#), reusing: &members),
              case .request(let third) = RequestDecoder.decode(ByteBuffer(string: #"{"op":"ping"}"#), reusing: &members)
        else {
            Issue.record("unexpected decoding")
            return
        }
        #expect(first.parameters == JSONMembers(["op": .string("get"), "domain": .string("com.a")]))
        #expect(error.code == .badJSON)
        // The failed line's members are not carried into the next request.
        #expect(third.parameters == JSONMembers(["op": .string("ping")]))
    }

    @Test func invalidUTF8IsNamed() {
        var buffer = ByteBuffer(string: #"{"op":""#)
        buffer.writeBytes([0xC3, 0x28])
        buffer.writeString(#""}"#)
        guard case .invalid(_, let error) = decode(buffer) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .invalidUTF8)
        var outside = ByteBuffer(bytes: [0xFF])
        outside.writeString("{}")
        guard case .invalid(_, let error2) = decode(outside) else {
            Issue.record("accepted a line starting with 0xFF")
            return
        }
        #expect(error2.code == .invalidUTF8)
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
