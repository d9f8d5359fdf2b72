import DefaultsCore
import Foundation
import LineSocket
import NIOCore
import NIOPosix
import TestThreads
import Testing

/// LineSocket against a canned server: a SwiftNIO Unix-socket server that answers each line it
/// reads with the lines the test chose, in one write, cut wherever the test says.
@Suite(.ownThreads) struct LineSocketTests {
    /// For every line read, writes the next of `replies` (a reply is any bytes, newlines included).
    final class Canned: ChannelInboundHandler, @unchecked Sendable {
        // @unchecked Sendable: one per connection, used on its channel's loop only.
        typealias InboundIn = ByteBuffer
        typealias OutboundOut = ByteBuffer
        private var replies: [String]
        init(_ replies: [String]) { self.replies = replies }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            var bytes = unwrapInboundIn(data)
            while let newline = bytes.readableBytesView.firstIndex(of: 10) {
                bytes.moveReaderIndex(to: newline + 1)
                guard !replies.isEmpty else { continue }
                context.writeAndFlush(wrapOutboundOut(ByteBuffer(string: replies.removeFirst())), promise: nil)
            }
        }
    }

    func withServer(_ replies: [String], _ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("linesocket-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let server = try ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(Canned(replies)) }
            }
            .bind(unixDomainSocketPath: folder + "/socket").wait()
        defer { try? server.close().wait() }
        try body(folder + "/socket")
    }

    @Test("an event that arrives before the answer is set aside, by the one rule, and read after")
    func eventsAreSetAside() throws {
        let event = #"{"event":"didChange","domain":"com.a","generation":2,"changes":{"k":1},"origin":{"source":"file"}}"#
        try withServer([event + "\n" + #"{"ok":true}"# + "\n"]) { path in
            let socket = try LineSocket(path: path)
            #expect(try socket.request(#"{"op":"ping"}"#, timeout: 2) == #"{"ok":true}"#)
            #expect(socket.pendingEvents == [event])
            #expect(try socket.readEvent(timeout: 1) == event)
        }
    }

    @Test("a line cut across writes, and a \\r before its newline, reads as one line")
    func linesAreFramedByTheProtocolsRule() throws {
        try withServer([#"{"ok":"#, #"true}"# + "\r\n"]) { path in
            let socket = try LineSocket(path: path)
            try socket.send(#"{"op":"ping"}"#)
            try socket.send(#"{"op":"ping"}"#)
            #expect(try socket.readResponse(timeout: 2) == #"{"ok":true}"#)
        }
    }

    @Test("each line starts after the newline of the one before, whether or not a \\r preceded it")
    func linesFollowOneAnother() throws {
        try withServer(["one\r\ntwo\n\r\nthree\r\r\nfour\n"]) { path in
            let socket = try LineSocket(path: path)
            try socket.send(#"{"op":"ping"}"#)
            #expect(try socket.readLine(timeout: 2) == "one")
            #expect(try socket.readLine(timeout: 2) == "two")
            #expect(try socket.readLine(timeout: 2) == "")
            #expect(try socket.readLine(timeout: 2) == "three\r")
            #expect(try socket.readLine(timeout: 2) == "four")
        }
    }

    @Test("no answer within the deadline is an error, not a wait without end")
    func aSilentServerTimesOut() throws {
        try withServer([]) { path in
            let socket = try LineSocket(path: path)
            let started = Date()
            #expect(throws: (any Error).self) { try socket.request(#"{"op":"ping"}"#, timeout: 0.3) }
            #expect(Date().timeIntervalSince(started) < 2)
        }
    }
}
