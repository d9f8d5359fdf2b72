import DefaultsCore
import EtcdGateway
import EtcdWire
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import TestThreads
import Testing

/// Every request of EtcdClient has one deadline over the whole of it, the answer's body
/// included, and a watch has it until its first line: a member that stalls is a timeout, never
/// a wait (docs/RELIABILITY.md, "Limits").
@Suite(.ownThreads) struct EtcdDeadlineTests {
    /// Each kind of request the client makes.
    enum Call: String, CaseIterable, Sendable {
        case range, transaction, status, latestWrite, watch

        func run(on client: EtcdClient) async throws {
            switch self {
            case .range: _ = try await client.range(prefix: "/p/")
            case .transaction: _ = try await client.transaction(comparing: [], success: [.put(key: "/p/k", value: "1")])
            case .status: _ = try await client.status(ofMember: 0)
            case .latestWrite: _ = try await client.latestWrite(prefix: "/p/", member: 0)
            case .watch: try await client.watch(prefix: "/p/", from: 1, member: 0) { _ in }
            }
        }
    }

    /// Where the member stops answering.
    enum Stall: String, CaseIterable, Sendable {
        case beforeHeaders, afterHeaders
    }

    static let requestTimeout = TimeAmount.milliseconds(200)
    /// Only a call that would wait for ever reaches it. The proof that the deadline ended a call
    /// is its error, which names the request timeout: elapsed time is not asserted, since the
    /// whole test run on two cores can delay any step by seconds.
    static let guardLimit = Duration.seconds(60)

    static func client(_ endpoints: [String], on group: EventLoopGroup) throws -> EtcdClient {
        var configuration = EtcdClient.Configuration(endpoints: endpoints)
        configuration.requestTimeout = requestTimeout
        return try EtcdClient(configuration: configuration, eventLoopGroup: group)
    }

    static func watchLine(revision: Int) -> String {
        #"{"result":{"header":{"revision":"\#(revision)"},"events":[{"kv":{"key":"L3Avaw==","mod_revision":"\#(revision)","value":"MQ=="}}]}}"#
    }

    @Test(
        "a member that stalls before or after its headers is unreachable within the request timeout: every request, and a watch until its first line",
        arguments: Call.allCases, Stall.allCases)
    func stalledMember(call: Call, stall: Stall) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // After the headers, part of a body (for the watch, a line without its end).
        let gateway = try await ScriptedGateway(on: group) { _, _, _ in
            stall == .afterHeaders ? ScriptedGateway.Reply.stall(after: #"{"header":"#) : .silent
        }
        let client = try Self.client([gateway.endpoint], on: group)
        let (result, _) = await timed(cancellingAfter: Self.guardLimit) { try await call.run(on: client) }
        if case .failure(let error as EtcdError) = result, case .unreachable(let reason) = error {
            #expect(reason.hasSuffix("no answer within 200 ms"), "\(reason)")
        } else {
            Issue.record("\(call) of a member that stalls \(stall): \(result)")
        }
        try await client.shutdown()
        try await gateway.close()
        try await group.shutdownGracefully()
    }

    @Test("a range goes on to the next member when the first sends its headers and stalls, and succeeds there")
    func stalledMemberIsPassedOver() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let stalled = try await ScriptedGateway(on: group) { _, _, _ in .stall(after: #"{"header":"#) }
        let answering = try await ScriptedGateway(on: group) { _, _, _ in
            .body(#"{"header":{"revision":"7"},"kvs":[{"key":"L3Avaw==","mod_revision":"7","value":"MQ=="}]}"#)
        }
        // Long enough for the answering member on a busy test run; the stalled one takes all of it.
        var configuration = EtcdClient.Configuration(endpoints: [stalled.endpoint, answering.endpoint])
        configuration.requestTimeout = .seconds(5)
        let client = try EtcdClient(configuration: configuration, eventLoopGroup: group)
        let (result, _) = await timed(cancellingAfter: Self.guardLimit) { try await client.range(prefix: "/p/") }
        // Shut down before anything can throw: a client left running traps at its deinit.
        try await client.shutdown()
        for gateway in [stalled, answering] { try await gateway.close() }
        try await group.shutdownGracefully()
        let range = try result.get()
        #expect(range.revision == 7)
        #expect(range.keyValues == [EtcdKeyValue(key: "/p/k", value: "1", modRevision: 7)])
        #expect(stalled.requests.withLockedValue { $0.count } == 1)
    }

    @Test("a watch's stream outlives the deadline of its setup: a line three request timeouts after the first still arrives")
    func watchOutlivesItsSetup() async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // A setup deadline no busy test run reaches before the first line is read.
        let gateway = try await ScriptedGateway(on: group) { _, _, _ in
            .quietStream(first: Self.watchLine(revision: 10) + "\n", delay: .seconds(9), then: Self.watchLine(revision: 11) + "\n")
        }
        var configuration = EtcdClient.Configuration(endpoints: [gateway.endpoint])
        configuration.requestTimeout = .seconds(3)
        let client = try EtcdClient(configuration: configuration, eventLoopGroup: group)
        let received = NIOLockedValueBox<[Int64]>([])
        let (result, _) = await timed(cancellingAfter: Self.guardLimit) {
            try await client.watch(prefix: "/p/", from: 1, member: 0) { message in received.withLockedValue { $0.append(message.revision) } }
        }
        if case .failure(let error) = result { Issue.record("the watch failed: \(error)") }
        #expect(received.withLockedValue { $0 } == [10, 11])
        try await client.shutdown()
        try await gateway.close()
        try await group.shutdownGracefully()
    }
}
