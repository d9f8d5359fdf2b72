import NIOCore

/// One unit of input: a complete line, or the notice that a line was too long.
enum Frame {
    /// A line without its terminator (`\n`, or `\r\n`).
    case line(ByteBuffer)
    /// A line longer than the limit; its bytes were discarded up to and including its newline.
    case overlong(limit: Int)
}

/// Splits the byte stream into lines of at most `maximumLineBytes`.
///
/// NIOExtras' `LineBasedFrameDecoder` fails the channel on an over-long line; the protocol
/// instead answers `line_too_long`, discards the rest of that line and keeps the connection,
/// which needs the discarding state below. Memory stays bounded by the limit either way.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = Frame

    let maximumLineBytes: Int
    /// Bytes at the front of the buffer already searched for a newline.
    private var scanned = 0
    /// True while skipping the remainder of an over-long line.
    private var discarding = false

    init(maximumLineBytes: Int) { self.maximumLineBytes = maximumLineBytes }

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        let view = buffer.readableBytesView
        guard let newline = view[(view.startIndex + scanned)...].firstIndex(of: UInt8(ascii: "\n")) else {
            scanned = view.count
            if buffer.readableBytes > maximumLineBytes {
                if !discarding {
                    discarding = true
                    context.fireChannelRead(wrapInboundOut(.overlong(limit: maximumLineBytes)))
                }
                buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
                scanned = 0
            }
            return .needMoreData
        }
        let length = newline - view.startIndex
        scanned = 0
        if discarding {
            discarding = false
            buffer.moveReaderIndex(forwardBy: length + 1)
            return .continue
        }
        var line = buffer.readSlice(length: length)!
        buffer.moveReaderIndex(forwardBy: 1)
        if line.readableBytesView.last == UInt8(ascii: "\r") { line.moveWriterIndex(to: line.writerIndex - 1) }
        if line.readableBytes > maximumLineBytes {
            context.fireChannelRead(wrapInboundOut(.overlong(limit: maximumLineBytes)))
        } else {
            context.fireChannelRead(wrapInboundOut(.line(line)))
        }
        return .continue
    }

    /// At end of input a final line without a newline still counts (`printf '{"op":"ping"}' | socat ...`).
    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if seenEOF, buffer.readableBytes > 0 {
            if !discarding {
                let line = buffer.readSlice(length: buffer.readableBytes)!
                context.fireChannelRead(wrapInboundOut(.line(line)))
            }
            buffer.moveReaderIndex(to: buffer.writerIndex)
        }
        scanned = 0
        discarding = false
        return .needMoreData
    }
}
