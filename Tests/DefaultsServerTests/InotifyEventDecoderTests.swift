@testable import DefaultsServer
import Glibc
import NIOCore
import NIOEmbedded
import TestThreads
import Testing

/// The inotify record decoder, fed through an `EmbeddedChannel` as the pipe channel feeds it.
@Suite(.ownThreads) struct InotifyEventDecoderTests {
    /// One `struct inotify_event` as the kernel writes it: the name NUL-padded to `padded` bytes.
    func record(watch: Int32, mask: UInt32, cookie: UInt32 = 0, name: String = "", padded: Int = 0) -> [UInt8] {
        var buffer = ByteBuffer()
        buffer.writeInteger(watch, endianness: .host)
        buffer.writeInteger(mask, endianness: .host)
        buffer.writeInteger(cookie, endianness: .host)
        let length = name.isEmpty ? 0 : max(padded, name.utf8.count + 1)
        buffer.writeInteger(UInt32(length), endianness: .host)
        buffer.writeString(name)
        buffer.writeRepeatingByte(0, count: length - name.utf8.count)
        return Array(buffer.readableBytesView)
    }

    @Test func recordsSplitAcrossReadsBecomeWholeEventsInOrder() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(InotifyEventDecoder()))
        let bytes = record(watch: 1, mask: UInt32(IN_MOVED_TO), cookie: 7, name: "com.example.bridge.plist", padded: 32)
            + record(watch: 1, mask: UInt32(IN_DELETE_SELF))
            + record(watch: 2, mask: UInt32(IN_CLOSE_WRITE), name: ".GlobalPreferences.plist", padded: 48)
        // Cut inside the first header, inside the first name, and between the records.
        for piece in [bytes[0..<10], bytes[10..<30], bytes[30..<56], bytes[56...]] {
            try channel.writeInbound(ByteBuffer(bytes: piece))
        }
        #expect(try channel.readInbound(as: InotifyEvent.self)
            == InotifyEvent(watch: 1, mask: UInt32(IN_MOVED_TO), cookie: 7, name: "com.example.bridge.plist"))
        #expect(try channel.readInbound(as: InotifyEvent.self) == InotifyEvent(watch: 1, mask: UInt32(IN_DELETE_SELF), cookie: 0, name: ""))
        #expect(try channel.readInbound(as: InotifyEvent.self)
            == InotifyEvent(watch: 2, mask: UInt32(IN_CLOSE_WRITE), cookie: 0, name: ".GlobalPreferences.plist"))
        #expect(try channel.readInbound(as: InotifyEvent.self) == nil)
        #expect(try channel.finish().isClean)
    }

    @Test func anIncompleteRecordWaitsForTheRest() throws {
        let channel = EmbeddedChannel(handler: ByteToMessageHandler(InotifyEventDecoder()))
        let bytes = record(watch: 3, mask: UInt32(IN_Q_OVERFLOW), name: "x", padded: 16)
        try channel.writeInbound(ByteBuffer(bytes: bytes.dropLast()))
        #expect(try channel.readInbound(as: InotifyEvent.self) == nil)
        try channel.writeInbound(ByteBuffer(bytes: bytes.suffix(1)))
        let event = try #require(try channel.readInbound(as: InotifyEvent.self))
        #expect(event.isOverflow && !event.endsWatch && event.name == "x")
    }
}
