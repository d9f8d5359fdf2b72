import Glibc
import NIOCore

/// One inotify event: what happened (`mask`, the `IN_*` bits) to `name` inside the directory
/// that watch `watch` observes; `name` is empty when it happened to the directory itself.
struct InotifyEvent: Sendable, Equatable {
    var watch: Int32
    var mask: UInt32
    var cookie: UInt32
    var name: String

    /// The kernel dropped events (its queue was full): whatever was watched must be looked at again.
    var isOverflow: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }
    /// The watch ended: its directory was removed or unmounted, or the watch was removed.
    var endsWatch: Bool { mask & UInt32(IN_IGNORED) != 0 }
}

/// Cuts the bytes read from an inotify descriptor into events.
///
/// A read from inotify returns whole `struct inotify_event` records in the machine's byte
/// order: `wd`, `mask`, `cookie`, `len`, then `len` bytes of NUL-padded name. SwiftNIO has no
/// inotify support, so this small decoder is ours; the descriptor itself is read by NIO.
struct InotifyEventDecoder: ByteToMessageDecoder {
    typealias InboundOut = InotifyEvent

    static let headerSize = 16

    mutating func decode(context: ChannelHandlerContext, buffer: inout ByteBuffer) throws -> DecodingState {
        guard let event = Self.next(from: &buffer) else { return .needMoreData }
        context.fireChannelRead(wrapInboundOut(event))
        return .continue
    }

    mutating func decodeLast(context: ChannelHandlerContext, buffer: inout ByteBuffer, seenEOF: Bool) throws -> DecodingState {
        try decode(context: context, buffer: &buffer)
    }

    /// The next whole event in `buffer`, consumed; nil when it holds less than one.
    static func next(from buffer: inout ByteBuffer) -> InotifyEvent? {
        let start = buffer.readerIndex
        guard buffer.readableBytes >= headerSize,
            let length = buffer.getInteger(at: start + 12, endianness: .host, as: UInt32.self),
            buffer.readableBytes >= headerSize + Int(length),
            let watch = buffer.readInteger(endianness: .host, as: Int32.self),
            let mask = buffer.readInteger(endianness: .host, as: UInt32.self),
            let cookie = buffer.readInteger(endianness: .host, as: UInt32.self),
            buffer.readInteger(endianness: .host, as: UInt32.self) != nil,
            let padded = buffer.readBytes(length: Int(length))
        else { return nil }
        let name = String(decoding: padded.prefix { $0 != 0 }, as: UTF8.self)
        return InotifyEvent(watch: watch, mask: mask, cookie: cookie, name: name)
    }
}
