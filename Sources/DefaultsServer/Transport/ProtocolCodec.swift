import DefaultsCore
import NIOCore

/// What the logic handler receives: a request, or a line that could not become one.
enum Incoming {
    case request(Request)
    case invalid(id: JSON?, DefaultsError)
}

/// Decodes lines into requests. One job: JSON and request shape; no knowledge of the ops.
final class RequestDecoder: ChannelInboundHandler {
    typealias InboundIn = Frame
    typealias InboundOut = Incoming

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .overlong(let limit):
            context.fireChannelRead(wrapInboundOut(.invalid(
                id: nil, DefaultsError(.lineTooLong, "line longer than \(limit) bytes; it was discarded"))))
        case .line(let line):
            if line.readableBytes == 0 || line.readableBytesView.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                return  // blank lines are ignored, so `nc -U` sessions may press Enter freely
            }
            context.fireChannelRead(wrapInboundOut(RequestDecoder.decode(line)))
        }
    }

    static func decode(_ line: ByteBuffer) -> Incoming {
        let parsed: Result<JSON, JSONParseError> = line.withUnsafeReadableBytes { raw in
            Result { () throws(JSONParseError) -> JSON in try JSONParser.parse(raw) }
        }
        switch parsed {
        case .failure(let error):
            // A syntax error caused by bytes that are not UTF-8 is reported as such.
            if case .syntax = error, String(validating: line.readableBytesView, as: UTF8.self) == nil {
                return .invalid(id: nil, DefaultsError(.invalidUTF8, "the line is not valid UTF-8"))
            }
            return .invalid(id: nil, error.defaultsError)
        case .success(let json):
            switch Request.parse(json) {
            case .success(let request): return .request(request)
            case .failure(let failure): return .invalid(id: failure.id, failure.error)
            }
        }
    }
}

/// Encodes responses and passes pre-encoded event lines through.
final class ResponseEncoder: ChannelOutboundHandler {
    typealias OutboundIn = Outgoing
    typealias OutboundOut = ByteBuffer

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .event(let line):
            context.write(wrapOutboundOut(line), promise: promise)
        case .response(let id, let result):
            let bytes = ResponseEncoding.encode(id: id, result)
            var buffer = context.channel.allocator.buffer(capacity: bytes.count)
            buffer.writeBytes(bytes)
            context.write(wrapOutboundOut(buffer), promise: promise)
        }
    }
}
