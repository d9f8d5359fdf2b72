@testable import DefaultsCore
@testable import DefaultsServer
import NIOCore
import Testing

@Suite struct LineFrameDecoderTests {
    /// Feeds `chunks` one read at a time and takes out every frame after each, as the
    /// connection handler does; `finish` adds what end of input yields.
    func frames(_ chunks: [String], limit: Int = 16, finish: Bool = false) -> [String] {
        var decoder = LineFrameDecoder(maximumLineBytes: limit)
        var result: [String] = []
        func take(_ frame: LineFrameDecoder.Frame) {
            switch frame {
            case .line(let line): result.append(String(buffer: line))
            case .tooLong: result.append("<overlong>")
            }
        }
        for chunk in chunks {
            decoder.receive(ByteBuffer(string: chunk))
            while let frame = decoder.next() { take(frame) }
        }
        if finish, let last = decoder.finish() { take(last) }
        return result
    }

    @Test func splitsLinesAndStripsCarriageReturns() {
        #expect(frames(["one\ntwo\r\nthr", "ee\n\n"]) == ["one", "two", "three", ""])
    }

    @Test func aLineSplitAcrossManyReadsIsWhole() {
        #expect(frames(["a", "b", "c\r", "\nd", "\n"]) == ["abc", "d"])
    }

    @Test func anOverlongLineIsReportedOnceAndItsRestDiscarded() {
        #expect(frames(["0123456789", "abcdefghijklmnop", "tail\nnext\n"], limit: 8) == ["<overlong>", "next"])
    }

    @Test func anOverlongLineInOneChunkIsReported() {
        #expect(frames(["123456\nok\n"], limit: 4) == ["<overlong>", "ok"])
    }

    @Test func aLineOfExactlyTheLimitPasses() {
        #expect(frames(["1234\n1234\r\n"], limit: 4) == ["1234", "1234"])
        #expect(frames(["12", "34\n"], limit: 4) == ["1234"])
        // A read that ends between the line's `\r` and its `\n`.
        #expect(frames(["1234\r", "\n"], limit: 4) == ["1234"])
        #expect(frames(["12345", "\n"], limit: 4) == ["<overlong>"])
    }

    @Test func theLastLineWithoutNewlineCountsAtEndOfInput() {
        #expect(frames(["a\nlast"]) == ["a"])
        #expect(frames(["a\nlast"], finish: true) == ["a", "last"])
        #expect(frames(["a\n"], finish: true) == ["a"])
    }

    @Test func theRestOfAnOverlongLineIsNotALastLine() {
        #expect(frames(["0123456789", "abc"], limit: 8, finish: true) == ["<overlong>"])
    }
}

@Suite struct RequestDecoderTests {
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
}
