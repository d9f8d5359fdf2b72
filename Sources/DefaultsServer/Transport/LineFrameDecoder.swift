import NIOCore

/// Fired down the pipeline (as an error, in order with the lines) when a line is longer than
/// the limit; its bytes were discarded up to and including its newline. The connection
/// answers `line_too_long` and stays open.
struct LineTooLong: Error, Equatable {
    let limit: Int
}

/// Splits the byte stream into lines of at most `maximumLineBytes`, each without its
/// terminator (`\n`, or `\r\n`).
///
/// Lines go on as plain `ByteBuffer`s, which NIO passes between handlers without boxing;
/// an over-long line is reported with ``LineTooLong``.
///
/// NIOExtras' `LineBasedFrameDecoder` fails the channel on an over-long line; the protocol
/// instead answers `line_too_long`, discards the rest of that line and keeps the connection,
/// which needs the discarding state below. Memory stays bounded by the limit either way.
struct LineFrameDecoder: ByteToMessageDecoder {
    typealias InboundOut = ByteBuffer

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
                    context.fireErrorCaught(LineTooLong(limit: maximumLineBytes))
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
            context.fireErrorCaught(LineTooLong(limit: maximumLineBytes))
        } else {
            context.fireChannelRead(wrapInboundOut(line))
        }
        return .continue
    }

    /// At end of input a final line without a newline still counts (`printf '{"op":"ping"}' | socat ...`).
    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        while try decode(context: context, buffer: &buffer) == .continue {}
        if seenEOF, buffer.readableBytes > 0 {
            if !discarding {
                let line = buffer.readSlice(length: buffer.readableBytes)!
                context.fireChannelRead(wrapInboundOut(line))
            }
            buffer.moveReaderIndex(to: buffer.writerIndex)
        }
        scanned = 0
        discarding = false
        return .needMoreData
    }
}
