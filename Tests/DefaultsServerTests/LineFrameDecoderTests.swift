import DefaultsCore
@testable import DefaultsServer
import NIOCore
import NIOEmbedded
import Testing

@Suite struct LineFrameDecoderTests {
    /// Records lines and over-long reports in the order they arrive.
    final class Recorder: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var frames: [String] = []
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            frames.append(String(buffer: unwrapInboundIn(data)))
        }
        func errorCaught(context: ChannelHandlerContext, error: Error) {
            frames.append((error as? LineTooLong).map { "<overlong \($0.limit)>" } ?? "<\(error)>")
        }
    }

    let recorder = Recorder()

    func channel(limit: Int = 16) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandlers([
            ByteToMessageHandler(LineFrameDecoder(maximumLineBytes: limit), maximumBufferSize: limit + 1), recorder,
        ])
        return channel
    }

    func frames(_ channel: EmbeddedChannel) throws -> [String] {
        defer { recorder.frames.removeAll() }
        return recorder.frames
    }

    @Test func splitsLinesAndStripsCarriageReturns() throws {
        let channel = try channel()
        try channel.writeInbound(ByteBuffer(string: "one\ntwo\r\nthr"))
        try channel.writeInbound(ByteBuffer(string: "ee\n\n"))
        #expect(try frames(channel) == ["one", "two", "three", ""])
    }

    @Test func anOverlongLineIsReportedOnceAndItsRestDiscarded() throws {
        let channel = try channel(limit: 8)
        try channel.writeInbound(ByteBuffer(string: "0123456789"))
        try channel.writeInbound(ByteBuffer(string: "abcdefghijklmnop"))
        try channel.writeInbound(ByteBuffer(string: "tail\nnext\n"))
        #expect(try frames(channel) == ["<overlong 8>", "next"])
    }

    @Test func anOverlongLineInOneChunkIsReported() throws {
        let channel = try channel(limit: 4)
        try channel.writeInbound(ByteBuffer(string: "123456\nok\n"))
        #expect(try frames(channel) == ["<overlong 4>", "ok"])
    }

    @Test func aLineOfExactlyTheLimitPasses() throws {
        let channel = try channel(limit: 4)
        try channel.writeInbound(ByteBuffer(string: "1234\n1234\r\n"))
        #expect(try frames(channel) == ["1234", "1234"])
    }

    @Test func theLastLineWithoutNewlineCountsAtEndOfInput() throws {
        let channel = try channel()
        try channel.writeInbound(ByteBuffer(string: "a\nlast"))
        #expect(try frames(channel) == ["a"])
        _ = try channel.finish()
        #expect(try frames(channel) == ["last"])
    }
}

@Suite struct RequestDecoderTests {
    func decode(_ text: String) -> Incoming { RequestDecoder.decode(ByteBuffer(string: text)) }

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

    @Test func invalidUTF8IsNamed() {
        var buffer = ByteBuffer(string: #"{"op":""#)
        buffer.writeBytes([0xC3, 0x28])
        buffer.writeString(#""}"#)
        guard case .invalid(_, let error) = RequestDecoder.decode(buffer) else {
            Issue.record("accepted")
            return
        }
        #expect(error.code == .invalidUTF8)
        var outside = ByteBuffer(bytes: [0xFF])
        outside.writeString("{}")
        guard case .invalid(_, let error2) = RequestDecoder.decode(outside) else {
            Issue.record("accepted a line starting with 0xFF")
            return
        }
        #expect(error2.code == .invalidUTF8)
    }
}
