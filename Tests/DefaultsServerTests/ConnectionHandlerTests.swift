import DefaultsCore
@testable import DefaultsServer
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import NIOPosix
import TestThreads
import Testing

/// A ServerContext on an EmbeddedEventLoop: the real store, notifier and handler, a writer whose
/// writes complete when the test says, and connections that are `EmbeddedChannel`s.
final class EmbeddedServer {
    let loop = EmbeddedEventLoop()
    let writer: WriteBehindTests.ControlledWriter
    let server: ServerContext
    let directory: String
    let scanner = NIOThreadPool(numberOfThreads: 1)

    init(maximumLineBytes: Int = 1 << 20, maximumConnections: Int = 100) {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("embedded-\(UUID().uuidString)").path
        var configuration = DaemonConfiguration(socketPath: directory + "/socket", storageDirectory: directory)
        configuration.maximumLineBytes = maximumLineBytes
        configuration.maximumConnections = maximumConnections
        configuration.coalesceDelay = .milliseconds(50)
        configuration.maximumCoalesceDelay = .seconds(1)
        configuration.maximumDomainBytes = 1 << 20
        writer = WriteBehindTests.ControlledWriter(loop: loop)
        server = DaemonAssembly.server(
            on: loop, configuration: configuration, files: DomainFiles(directory: directory, format: .xml), writer: writer,
            scannerThread: scanner, daemonUID: 1000, logger: Logger(label: "test"))
    }

    /// A connected client whose peer is `uid`.
    func connect(uid: UInt32 = 1000) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(
            handlers: DaemonAssembly.connectionHandlers(for: server) { channel in
                channel.eventLoop.makeSucceededFuture(PeerCredentials(pid: 4242, uid: uid, gid: 0))
            }, loop: loop)
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/defaultsd-test")).wait()
        return channel
    }

    deinit { try? FileManager.default.removeItem(atPath: directory) }
}

extension EmbeddedChannel {
    /// Sends request lines as one read.
    func send(_ lines: String...) throws {
        try writeInbound(ByteBuffer(string: lines.map { $0 + "\n" }.joined()))
    }

    /// Every line written to the peer so far.
    func received() throws -> [String] {
        var text = ""
        while let buffer = try readOutbound(as: ByteBuffer.self) { text += String(buffer: buffer) }
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }
}

/// ConnectionHandler and its parts on an EmbeddedChannel: no sockets, no sleeps.
@Suite(.ownThreads) struct ConnectionHandlerTests {
    @Test func answersKeepRequestOrderBehindOneThatWaits() throws {
        let server = EmbeddedServer()
        server.writer.completesAtOnce = false
        let client = try server.connect()
        try client.send(
            #"{"op":"set","domain":"com.a","key":"k","value":1}"#, #"{"id":1,"op":"synchronize"}"#, #"{"id":2,"op":"ping"}"#)
        // The ping is ready, but queued behind the synchronize, which waits for the disk.
        #expect(try client.received() == [#"{"ok":true,"generation":1}"#])
        server.writer.completeAll()
        server.loop.run()
        #expect(try client.received() == [#"{"id":1,"ok":true}"#, #"{"id":2,"ok":true}"#])
        try client.send(#"{"id":3,"op":"ping"}"#)
        #expect(try client.received() == [#"{"id":3,"ok":true}"#])
    }

    @Test func anOverlongLineIsAnsweredAndTheConnectionGoesOn() throws {
        let server = EmbeddedServer(maximumLineBytes: 64)
        let client = try server.connect()
        try client.send(#"{"op":"set","domain":"com.a","key":"k","value":""# + String(repeating: "x", count: 100) + #""}"#, #"{"op":"ping"}"#)
        #expect(
            try client.received() == [
                #"{"ok":false,"error":{"code":"line_too_long","message":"line longer than 64 bytes; it was discarded"}}"#,
                #"{"ok":true}"#,
            ])
        #expect(client.isActive)
    }

    @Test("a line left unfinished for the timeout ends the connection; lines that keep completing, and idleness, do not")
    func anUnfinishedLineTimesOut() throws {
        let server = EmbeddedServer()
        let stalled = try server.connect()
        let streaming = try server.connect()
        let subscriber = try server.connect()
        try subscriber.send(#"{"op":"subscribe","domain":"com.a"}"#)
        try stalled.writeInbound(ByteBuffer(string: #"{"op":"ping"}"# + "\n" + #"{"op":"#))
        try streaming.writeInbound(ByteBuffer(string: #"{"op":"ping"}"# + "\n" + #"{"op":"#))
        #expect(try stalled.received() == [#"{"ok":true}"#])
        server.loop.advanceTime(by: .seconds(6))
        // More of the same line is not progress; a completed line is.
        try stalled.writeInbound(ByteBuffer(string: #""pi"#))
        try streaming.writeInbound(ByteBuffer(string: #""ping"}"# + "\n" + #"{"op"#))
        server.loop.advanceTime(by: .milliseconds(3_999))
        #expect(try stalled.received().isEmpty && stalled.isActive)
        server.loop.advanceTime(by: .milliseconds(1))
        #expect(try stalled.received() == [
            #"{"ok":false,"error":{"code":"line_timed_out","message":"line left unfinished for 10000 ms; the connection is closed"}}"#])
        try stalled.writeInbound(ByteBuffer(string: #"ng"}"# + "\n"))
        #expect(try stalled.received().isEmpty, "nothing more is run")
        server.loop.advanceTime(by: .seconds(1))
        #expect(!stalled.isActive)

        server.loop.advanceTime(by: .seconds(60))
        #expect(streaming.isActive == false, "its own last partial line then stalled too")
        #expect(subscriber.isActive, "a connection with no partial line may stay idle")
        #expect(try streaming.received().count == 3, "two pings answered, then the timeout")
    }

    @Test func anotherUserIsRefusedWithOneLineAndTheConnectionEnds() throws {
        let server = EmbeddedServer()
        let stranger = try server.connect(uid: 4242)
        #expect(try stranger.received() == [#"{"ok":false,"error":{"code":"not_permitted","message":"this defaultsd serves uid 1000 only"}}"#])
        try stranger.send(#"{"op":"set","domain":"com.a","key":"k","value":1}"#)
        #expect(try stranger.received().isEmpty, "nothing it sends is run")
        server.loop.advanceTime(by: .seconds(1))
        #expect(!stranger.isActive)
        // Root is served.
        let root = try server.connect(uid: 0)
        try root.send(#"{"op":"ping"}"#)
        #expect(try root.received() == [#"{"ok":true}"#])
    }

    @Test func connectionsPastTheLimitAreRefused() throws {
        let server = EmbeddedServer(maximumConnections: 1)
        let first = try server.connect()
        let second = try server.connect()
        #expect(try second.received() == [#"{"ok":false,"error":{"code":"too_many_connections","message":"defaultsd serves at most 1 connections"}}"#])
        try first.send(#"{"op":"ping"}"#)
        #expect(try first.received() == [#"{"ok":true}"#])
    }

    @Test func aSubscriberThatCannotTakeEventsGetsThemMergedWhenItDrains() throws {
        let server = EmbeddedServer()
        let subscriber = try server.connect()
        let writer = try server.connect()
        try subscriber.send(#"{"op":"subscribe","domains":["com.a","com.b"]}"#)
        _ = try subscriber.received()
        subscriber.isWritable = false
        subscriber.pipeline.fireChannelWritabilityChanged()
        // Three batches from the writer: three events, none of which the subscriber can take now.
        try writer.send(#"{"op":"set","domain":"com.a","key":"x","value":1}"#)
        try writer.send(#"{"op":"set","domain":"com.b","key":"z","value":true}"#)
        try writer.send(#"{"op":"apply","domain":"com.a","set":{"x":2,"y":3}}"#)
        #expect(try writer.received().count == 3)
        #expect(try subscriber.received().isEmpty)
        subscriber.isWritable = true
        subscriber.pipeline.fireChannelWritabilityChanged()
        let events = try subscriber.received().map { try JSONParser.parse($0) }
        #expect(events.count == 2, "one event per domain")
        #expect(events[0]["domain"] == "com.a" && events[0]["generation"] == 2)
        #expect(events[0]["changes"] == .object(["x": 2, "y": 3]))
        #expect(events[1]["domain"] == "com.b" && events[1]["changes"] == .object(["z": true]))
        // Drained: the next event goes out at once.
        try writer.send(#"{"op":"set","domain":"com.b","key":"z","value":false}"#)
        #expect(try subscriber.received().count == 1)
    }

    /// Writes each connection's outbound lines, in the order they leave, to one shared log.
    final class WriteLog: ChannelOutboundHandler {
        typealias OutboundIn = ByteBuffer
        final class Lines { var all: [String] = [] }
        let name: String
        let lines: Lines
        init(_ name: String, _ lines: Lines) { (self.name, self.lines) = (name, lines) }
        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            let text = String(buffer: unwrapOutboundIn(data))
            lines.all += text.split(separator: "\n").map { name + " " + ($0.hasPrefix(#"{"event""#) ? "event" : "answer") }
            context.write(data, promise: promise)
        }
    }

    @Test("a batch's events leave before its answers, except on the writer's own connection, where its answer comes first")
    func eventsLeaveBeforeAnswers() throws {
        let server = EmbeddedServer()
        let subscriber = try server.connect()
        let writer = try server.connect()
        try subscriber.send(#"{"op":"subscribe","domains":["com.a"]}"#)
        let log = WriteLog.Lines()
        try subscriber.pipeline.syncOperations.addHandler(WriteLog("subscriber", log), position: .first)
        try writer.pipeline.syncOperations.addHandler(WriteLog("writer", log), position: .first)

        try writer.send(#"{"op":"set","domain":"com.a","key":"x","value":1}"#)
        #expect(log.all == ["subscriber event", "writer answer"])

        log.all = []
        try writer.send(#"{"op":"subscribe","domains":["com.a"]}"#, #"{"op":"set","domain":"com.a","key":"x","value":2}"#)
        #expect(log.all == ["subscriber event", "writer answer", "writer answer", "writer event"])
    }

    @Test("a client that does not read: its requests wait, unrun, and all are answered in order once it reads")
    func requestsWaitWhileTheClientDoesNotRead() throws {
        let server = EmbeddedServer()
        let client = try server.connect()
        let other = try server.connect()
        client.isWritable = false
        client.pipeline.fireChannelWritabilityChanged()
        try client.send(#"{"id":1,"op":"ping"}"#, #"{"id":2,"op":"set","domain":"com.a","key":"k","value":1}"#, #"{"id":3,"op":"ping"}"#)
        // The first request runs; the others wait until the client reads.
        #expect(try client.received() == [#"{"id":1,"ok":true}"#])
        try other.send(#"{"op":"get","domain":"com.a"}"#)
        #expect(try other.received() == [#"{"ok":true,"value":{},"generation":0}"#], "the waiting set has not run")
        client.isWritable = true
        client.pipeline.fireChannelWritabilityChanged()
        #expect(try client.received() == [#"{"id":2,"ok":true,"generation":1}"#, #"{"id":3,"ok":true}"#])
        // The end of its input while its requests wait: they are answered first, then it closes.
        client.isWritable = false
        client.pipeline.fireChannelWritabilityChanged()
        try client.send(#"{"id":4,"op":"ping"}"#, #"{"id":5,"op":"ping"}"#)
        client.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(try client.received() == [#"{"id":4,"ok":true}"#])
        client.isWritable = true
        client.pipeline.fireChannelWritabilityChanged()
        #expect(try client.received() == [#"{"id":5,"ok":true}"#])
    }

    @Test("answers held behind a synchronize are bounded: past the limit the requests wait for it")
    func heldAnswersAreBounded() throws {
        let server = EmbeddedServer()
        server.writer.completesAtOnce = false
        let client = try server.connect()
        let other = try server.connect()
        let sets = BufferSizes.mostHeldAnswers + 100
        // A change not yet on disk, so that the synchronize waits.
        try client.send(#"{"op":"set","domain":"com.a","key":"k","value":-1}"#)
        #expect(try client.received() == [#"{"ok":true,"generation":1}"#])
        try client.writeInbound(ByteBuffer(string: #"{"op":"synchronize"}"# + "\n"
            + (0..<sets).map { #"{"id":\#($0),"op":"set","domain":"com.a","key":"k","value":\#($0)}"# + "\n" }.joined()))
        #expect(try client.received().isEmpty)
        // The synchronize and the sets after it held up to the limit have run; the rest wait.
        let ran = BufferSizes.mostHeldAnswers - 1
        try other.send(#"{"op":"get","domain":"com.a","key":"k"}"#)
        #expect(try other.received() == [#"{"ok":true,"value":\#(ran - 1),"generation":\#(ran + 1)}"#])
        server.writer.completeAll()
        server.loop.run()
        let answers = try client.received()
        #expect(answers.first == #"{"ok":true}"#)
        #expect(Array(answers.dropFirst()) == (0..<sets).map { #"{"id":\#($0),"ok":true,"generation":\#($0 + 2)}"# })
        try other.send(#"{"op":"get","domain":"com.a","key":"k"}"#)
        #expect(try other.received() == [#"{"ok":true,"value":\#(sets - 1),"generation":\#(sets + 1)}"#])
    }

    @Test func theOutboxMergesPerDomainAndSendsNoticesFirst() throws {
        var outbox = EventOutbox()
        let a = try DomainName("com.a"), b = try DomainName("com.b")
        let origin = Origin(pid: 1, uid: 1, connection: 1)
        outbox.keep(ChangeEvent(changeset: Changeset(domain: a, changes: ["x": 1]), generation: 1, origin: origin))
        outbox.keep(ChangeEvent(changeset: Changeset(domain: b, changes: ["y": 1]), generation: 1, origin: origin))
        outbox.keep(ChangeEvent(changeset: Changeset(domain: a, changes: ["x": nil, "w": 2]), generation: 2, origin: origin))
        outbox.keep(notice: ByteBuffer(string: "notice-a-1\n"), domain: a)
        outbox.keep(notice: ByteBuffer(string: "notice-a-2\n"), domain: a)
        var lines: [String] = []
        while let line = outbox.next() { lines.append(String(buffer: line)) }
        #expect(lines.count == 3)
        #expect(lines[0] == "notice-a-2\n")
        let first = try JSONParser.parse(lines[1])
        #expect(first["domain"] == "com.a" && first["generation"] == 2 && first["changes"] == .object(["x": .null, "w": 2]))
        #expect(try JSONParser.parse(lines[2])["domain"] == "com.b")
        #expect(outbox.isEmpty)
    }

    @Test func theAdmissionRules() {
        let admission = ConnectionAdmission(daemonUID: 1000, maximumConnections: 2)
        let own = PeerCredentials(pid: 1, uid: 1000, gid: 0)
        #expect(admission.refusal(peer: own, openConnections: 2, isStopping: false) == nil)
        #expect(admission.refusal(peer: PeerCredentials(pid: 1, uid: 0, gid: 0), openConnections: 1, isStopping: false) == nil)
        #expect(admission.refusal(peer: nil, openConnections: 1, isStopping: false)?.code == .notPermitted)
        #expect(admission.refusal(peer: PeerCredentials(pid: 1, uid: 7, gid: 0), openConnections: 1, isStopping: false)?.code == .notPermitted)
        #expect(admission.refusal(peer: own, openConnections: 3, isStopping: false)?.code == .tooManyConnections)
        #expect(admission.refusal(peer: own, openConnections: 1, isStopping: true)?.code == .shuttingDown)
    }
}
