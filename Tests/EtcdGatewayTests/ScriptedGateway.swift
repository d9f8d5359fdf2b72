import DefaultsCore
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix

/// A gateway on loopback whose every answer a script decides, from the request's path, its JSON
/// body and how many requests came before it: written whole, or held back before or after its
/// headers, as a member that stalls would. It records every request it was sent.
final class ScriptedGateway: Sendable {
    enum Reply: Sendable {
        /// A 200 answer with this body, ended.
        case body(String)
        /// The headers and `part` of the body (not empty), then nothing; the connection stays open.
        case stall(after: String)
        /// Nothing at all, not even the headers.
        case silent
        /// `first`, then `second` once `delay` has passed, then the end: a stream quiet for a while.
        case quietStream(first: String, delay: TimeAmount, then: String)
    }

    typealias Script = @Sendable (_ path: String, _ body: JSON, _ number: Int) -> Reply

    let channel: any Channel
    /// Every request, in the order they arrived: its path and its JSON body.
    let requests: NIOLockedValueBox<[(path: String, body: JSON)]>

    var endpoint: String { "http://127.0.0.1:\(channel.localAddress!.port!)" }

    init(on group: EventLoopGroup, script: @escaping Script) async throws {
        let requests = NIOLockedValueBox<[(path: String, body: JSON)]>([])
        self.requests = requests
        channel = try await ServerBootstrap(group: group)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(script: script, requests: requests))
                }
            }
            .bind(host: "127.0.0.1", port: 0).get()
    }

    func close() async throws { try await channel.close() }

    final class Handler: ChannelInboundHandler, @unchecked Sendable {
        // @unchecked Sendable: one instance per connection, used on its channel's loop only.
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let script: Script
        let requests: NIOLockedValueBox<[(path: String, body: JSON)]>
        private var path = ""
        private var body = ByteBuffer()

        init(script: @escaping Script, requests: NIOLockedValueBox<[(path: String, body: JSON)]>) {
            self.script = script
            self.requests = requests
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                path = head.uri
                body.clear()
            case .body(var part):
                body.writeBuffer(&part)
            case .end:
                let json = (try? JSONParser.parse(Array(body.readableBytesView))) ?? .null
                let number = requests.withLockedValue { requests in
                    requests.append((path, json))
                    return requests.count - 1
                }
                answer(script(path, json, number), context: context)
            }
        }

        private func answer(_ reply: Reply, context: ChannelHandlerContext) {
            if case .silent = reply { return }
            var head = HTTPResponseHead(version: .http1_1, status: .ok)
            head.headers.add(name: "Content-Type", value: "application/json")
            head.headers.add(name: "Transfer-Encoding", value: "chunked")
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            switch reply {
            case .silent:
                break
            case .body(let text):
                context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            case .stall(let part):
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: part)))), promise: nil)
            case .quietStream(let first, let delay, let second):
                context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: first)))), promise: nil)
                context.eventLoop.assumeIsolated().scheduleTask(in: delay) {
                    context.write(self.wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: second)))), promise: nil)
                    context.writeAndFlush(self.wrapOutboundOut(.end(nil)), promise: nil)
                }
            }
        }
    }
}

/// Runs `call` and measures how long it took. A call still running after `limit` is cancelled,
/// so that a client that would wait for ever fails its test instead of hanging the suite.
func timed<T: Sendable>(
    cancellingAfter limit: Duration = .seconds(10), _ call: @escaping @Sendable () async throws -> T
) async -> (result: Result<T, any Error>, elapsed: Duration) {
    let clock = ContinuousClock()
    let start = clock.now
    let result = await withTaskGroup(of: Result<T, any Error>?.self, returning: Result<T, any Error>.self) { group in
        group.addTask {
            do { return .success(try await call()) } catch { return .failure(error) }
        }
        group.addTask {
            try? await Task.sleep(for: limit)
            return nil
        }
        while let finished = await group.next() {
            group.cancelAll()
            if let finished { return finished }
        }
        return .failure(CancellationError())
    }
    return (result, clock.now - start)
}
