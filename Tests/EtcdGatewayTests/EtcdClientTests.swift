import DefaultsCore
import EtcdGateway
import EtcdWire
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import TestThreads
import Testing

/// EtcdClient against a canned gateway: a SwiftNIO HTTP/1.1 server on loopback that answers each
/// path with bytes the test chose, as etcd's gateway would (or as a broken one might).
@Suite(.ownThreads) struct EtcdClientTests {
    /// Answers every request for a path with that path's body, written in the given chunks.
    final class CannedGateway: ChannelInboundHandler, @unchecked Sendable {
        // @unchecked Sendable: one instance per connection, used on its channel's loop only.
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let answers: [String: [String]]
        private var path = ""

        init(answers: [String: [String]]) { self.answers = answers }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): path = head.uri
            case .body: break
            case .end:
                let chunks = answers[path] ?? []
                var head = HTTPResponseHead(version: .http1_1, status: answers[path] == nil ? .notFound : .ok)
                head.headers.add(name: "Content-Type", value: "application/json")
                head.headers.add(name: "Transfer-Encoding", value: "chunked")
                context.write(wrapOutboundOut(.head(head)), promise: nil)
                for chunk in chunks {
                    context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: chunk)))), promise: nil)
                }
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }

    static func serve(_ answers: [String: [String]], on group: EventLoopGroup) async throws -> Channel {
        try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(CannedGateway(answers: answers))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    static let message = #"{"result":{"header":{"revision":"10"},"events":[{"kv":{"key":"a2V5","mod_revision":"10","value":"dHJ1ZQ=="}}]}}"#

    /// A request timeout no busy test run reaches, since what these tests test is what the
    /// answers hold (the timeouts are `EtcdDeadlineTests`').
    static let requestTimeout = TimeAmount.seconds(300)

    /// The client of these tests, for the canned gateway `server`.
    static func configuration(_ server: Channel) -> EtcdClient.Configuration {
        var configuration = EtcdClient.Configuration(endpoints: ["http://127.0.0.1:\(server.localAddress!.port!)"])
        configuration.requestTimeout = requestTimeout
        return configuration
    }

    /// Runs `body` with a client of `configuration` and shuts the client down whatever `body`
    /// does: a client left running traps at its deinit, which would end the whole test run
    /// instead of failing one test.
    static func withClient<Outcome>(
        _ configuration: EtcdClient.Configuration, on group: EventLoopGroup, _ body: (EtcdClient) async throws -> Outcome
    ) async throws -> Outcome {
        let client = try EtcdClient(configuration: configuration, eventLoopGroup: group)
        let outcome: Result<Outcome, Error>
        do { outcome = .success(try await body(client)) } catch { outcome = .failure(error) }
        try await client.shutdown()
        return try outcome.get()
    }

    @Test("watch lines are cut whatever the chunks: a line split across chunks, two in one, a \\r before the newline")
    func watchLinesAreCutByTheOneFramer() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let split = Self.message.index(Self.message.startIndex, offsetBy: 20)
        let server = try await Self.serve(
            ["/v3/watch": [String(Self.message[..<split]), String(Self.message[split...]) + "\r\n" + Self.message + "\n\n", Self.message + "\n"]],
            on: group)
        let received = NIOLockedValueBox<[EtcdWatchMessage]>([])
        try await Self.withClient(Self.configuration(server), on: group) { client in
            try await client.watch(prefix: "/p/", from: 1, member: 0) { message in received.withLockedValue { $0.append(message) } }
        }
        #expect(received.withLockedValue { $0 }.map(\.revision) == [10, 10, 10])
        #expect(received.withLockedValue { $0 }.first?.events.first?.keyValue == EtcdKeyValue(key: "key", value: "true", modRevision: 10))
        try await server.close()
        try await group.shutdownGracefully()
    }

    @Test("a watch line longer than the limit is malformed, after the messages before it")
    func aLineOverTheLimitIsMalformed() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let server = try await Self.serve(
            ["/v3/watch": [Self.message + "\n", String(repeating: "x", count: 3_000), String(repeating: "x", count: 3_000) + "\n"]],
            on: group)
        var configuration = Self.configuration(server)
        configuration.maximumMessageBytes = 4_096
        let received = NIOLockedValueBox<[EtcdWatchMessage]>([])
        try await Self.withClient(configuration, on: group) { client in
            await #expect(throws: EtcdError.malformed("a watch line longer than 4096 bytes")) {
                try await client.watch(prefix: "/p/", from: 1, member: 0) { message in received.withLockedValue { $0.append(message) } }
            }
        }
        #expect(received.withLockedValue { $0 }.count == 1)
        try await server.close()
        try await group.shutdownGracefully()
    }

    @Test("a member's status: its leader in etcd's hex form, or none with the member's own error; a silent member is unreachable by its own reason")
    func memberStatus() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let withLeader = #"{"header":{"member_id":"185828541645115251","revision":"7"},"leader":"185828541645115251"}"#
        let noLeader = #"{"header":{"member_id":"185828541645115251","revision":"3"},"errors":["etcdserver: no leader"]}"#
        let first = try await Self.serve(["/v3/maintenance/status": [withLeader]], on: group)
        let second = try await Self.serve(["/v3/maintenance/status": [noLeader]], on: group)
        let closed = try await Self.serve([:], on: group)
        let closedPort = closed.localAddress!.port!
        try await closed.close()
        var configuration = EtcdClient.Configuration(
            endpoints: [first, second].map { "http://127.0.0.1:\($0.localAddress!.port!)" } + ["http://127.0.0.1:\(closedPort)"])
        configuration.requestTimeout = Self.requestTimeout
        try await Self.withClient(configuration, on: group) { client async throws -> Void in
            #expect(try await client.status(ofMember: 0) == EtcdMemberStatus(memberID: "2943212f5e2cf73", leader: "2943212f5e2cf73", revision: 7))
            #expect(try await client.status(ofMember: 1) == EtcdMemberStatus(memberID: "2943212f5e2cf73", leader: nil, revision: 3, errors: ["etcdserver: no leader"]))
            do throws(EtcdError) {
                _ = try await client.status(ofMember: 2)
                Issue.record("a closed port answered")
            } catch {
                guard case .unreachable(let reason) = error else { Issue.record("\(error)"); return }
                #expect(!reason.hasPrefix("http://"), "the reason names no endpoint: \(reason)")
            }
        }
        for server in [first, second] { try await server.close() }
        try await group.shutdownGracefully()
    }
}
