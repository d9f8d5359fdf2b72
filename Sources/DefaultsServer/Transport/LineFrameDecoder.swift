import DefaultsCore
import FoundationEssentials
import Glibc
import NIOCore

/// Splits the byte stream of one connection into lines of at most `maximumLineBytes`, each
/// without its terminator (`\n`, or `\r\n`).
///
/// Owned by one ``ConnectionHandler`` (so by the store's event loop). One job: framing. The
/// handler feeds it what the socket read and takes the lines out, in order:
///
/// ```swift
/// var lines = LineFrameDecoder(maximumLineBytes: 1 << 20)
/// lines.receive(ByteBuffer(string: "{\"op\":\"ping\"}\n{\"op\""))
/// while let frame = lines.next() { ... }   // .line(`{"op":"ping"}`); the rest waits for more bytes
/// ```
///
/// A plain type called by the handler rather than a `ByteToMessageHandler` of its own, so a
/// request makes no extra pipeline hop (docs/PERFORMANCE.md has the cost). Lines are slices of
/// the bytes read, not copies; only an unfinished line is kept between reads.
///
/// NIOExtras' `LineBasedFrameDecoder` fails the channel on an over-long line; the protocol
/// instead answers `line_too_long`, discards the rest of that line and keeps the connection,
/// which needs the discarding state below. Memory stays bounded by the limit either way.
struct LineFrameDecoder {
    enum Frame: Equatable {
        case line(ByteBuffer)
        /// A line longer than the limit; its bytes are discarded up to and including its newline.
        case tooLong
    }

    let maximumLineBytes: Int
    /// Bytes received and not yet handed out as lines.
    private var buffer: ByteBuffer?
    /// Bytes at the front of `buffer` already searched for a newline.
    private var scanned = 0
    /// True while skipping the remainder of an over-long line.
    private var discarding = false

    init(maximumLineBytes: Int) { self.maximumLineBytes = maximumLineBytes }

    /// Adds bytes read from the socket.
    mutating func receive(_ bytes: ByteBuffer) {
        if var unfinished = buffer, unfinished.readableBytes > 0 {
            buffer = nil  // unique again, so the unfinished line grows in place when it can
            unfinished.writeImmutableBuffer(bytes)
            buffer = unfinished
        } else {
            buffer = bytes
            scanned = 0
        }
    }

    /// The next complete line, or nil when the bytes received so far hold none.
    ///
    /// Works on `buffer` in place: a copy of it would cost a retain and a release per line.
    mutating func next() -> Frame? {
        // `buffer!` below: each use is inside `while buffer != nil`, before anything sets it to nil.
        while buffer != nil {
            guard let length = lengthOfNextLine() else {
                let readable = buffer!.readableBytes
                scanned = readable
                // One byte more than the limit may be the `\r` of a line that is just the limit.
                guard readable > maximumLineBytes + 1 else { return nil }
                buffer = nil
                scanned = 0
                if discarding { return nil }
                discarding = true
                return .tooLong
            }
            scanned = 0
            if discarding {
                discarding = false
                buffer!.moveReaderIndex(forwardBy: length + 1)
                if buffer!.readableBytes == 0 { buffer = nil }
                continue
            }
            // `length` bytes are readable: the newline was found past them.
            var line = buffer!.readSlice(length: length)!
            buffer!.moveReaderIndex(forwardBy: 1)
            if buffer!.readableBytes == 0 { buffer = nil }
            let content = line.withUnsafeReadableBytes { LineFraming.contentLength(of: $0, upTo: length) }
            line.moveWriterIndex(to: line.readerIndex + content)
            return line.readableBytes > maximumLineBytes ? .tooLong : .line(line)
        }
        return nil
    }

    /// The number of bytes before the next newline of `buffer`, searching only past the part
    /// already scanned; nil when there is none yet.
    private func lengthOfNextLine() -> Int? {
        // Called only from `next`, inside its `while buffer != nil`.
        buffer!.withUnsafeReadableBytes { LineFraming.newline(in: $0, from: scanned) }
    }

    /// True while part of a line has arrived and its newline has not: the bytes kept, or the
    /// rest of an over-long line being discarded.
    var holdsUnfinishedLine: Bool { discarding || (buffer?.readableBytes ?? 0) > 0 }

    /// At end of input: the last line when it has no newline
    /// (`printf '{"op":"ping"}' | socat ...`). Call after `next()` returned nil.
    mutating func finish() -> Frame? {
        defer {
            buffer = nil
            scanned = 0
            discarding = false
        }
        guard var rest = buffer, rest.readableBytes > 0, !discarding else { return nil }
        // The same line as `next` would give had the newline come: without a final `\r`.
        let content = rest.withUnsafeReadableBytes { LineFraming.contentLength(of: $0, upTo: $0.count) }
        rest.moveWriterIndex(to: rest.readerIndex + content)
        return rest.readableBytes > maximumLineBytes ? .tooLong : .line(rest)
    }
}
