import AsyncHTTPClient
import DefaultsCore
import EtcdWire
import FoundationEssentials
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOExtras
import NIOHTTP1
import NIOSSL

/// Which member answers: each request tried on the members in turn until one does, each try
/// within one deadline from its connection to the end of its answer.
extension EtcdClient {
    /// Posts to the given members in turn (by default the preferred one, then the others), and
    /// returns the answer's JSON, read whole within the try's deadline.
    func post(_ path: String, _ body: JSON, members: [Int]? = nil) async throws(EtcdError) -> JSON {
        let maximum = configuration.maximumMessageBytes
        do {
            return try await send(path, body, streaming: false, members: members) { (response, _) async throws -> JSON in
                let bytes: ByteBuffer
                do {
                    bytes = try await response.body.collect(upTo: maximum)
                } catch is NIOTooManyBytesError {
                    throw EtcdError.malformed("an answer longer than \(maximum) bytes")
                }
                guard let json = try? JSONParser.parse(Array(bytes.readableBytesView)) else {
                    throw EtcdError.malformed("a body that is not JSON")
                }
                return json
            }
        } catch let error as EtcdError {
            throw error
        } catch {
            throw .unreachable("\(error)")
        }
    }

    /// Sends to one member after another until one answers with success or a definite refusal:
    /// the given members, or else the preferred one and then the others in turn. `read` takes
    /// the successful answer. What it throws is the caller's when it is an ``EtcdError`` (a
    /// malformed answer) or the request is a stream; a request's answer that breaks off sends the
    /// request on to the next member.
    ///
    /// Each try has one deadline, ``Configuration/requestTimeout`` after it starts, over all of
    /// it: the token, the connection, the headers and `read`, until `read` calls its `setUp`
    /// (a stream, at its first line; a request never does). async-http-client's own deadline
    /// ends at the headers, so a member that sends them and then stalls would hold the body's
    /// reading for ever. Past the deadline the try is cancelled (its connection closed) and the
    /// next member is asked.
    func send<Answer: Sendable>(
        _ path: String, _ body: JSON, streaming: Bool, members: [Int]? = nil,
        read: @escaping @Sendable (_ response: HTTPClientResponse, _ setUp: @Sendable () -> Void) async throws -> Answer
    ) async throws -> Answer {
        let endpoints = configuration.endpoints
        let first = preferred.withLockedValue { $0 }
        let order = members ?? endpoints.indices.map { (first + $0) % endpoints.count }
        var lastProblem = "no endpoint"
        var askedForNewToken = false
        var attempt = 0
        while attempt < order.count {
            let index = order[attempt]
            let endpoint = endpoints[index]
            let deadline = NIODeadline.now() + configuration.requestTimeout
            do {
                let outcome = try await Self.within(deadline) { setUp in
                    try await self.ask(path, body, on: endpoint, streaming: streaming, by: deadline, setUp: setUp, read: read)
                }
                switch outcome {
                case .answered(let answer):
                    if members == nil { preferred.withLockedValue { $0 = index } }
                    return answer
                case .refused(let refusal):
                    if case .refused(let code, let message) = refusal {
                        // 16 Unauthenticated: the token expired; ask for a new one, once.
                        if code == 16 || message.contains("invalid auth token"), !askedForNewToken, configuration.user != nil {
                            token.withLockedValue { $0 = nil }
                            askedForNewToken = true
                            continue
                        }
                        // 14 Unavailable, 4 DeadlineExceeded: this member has no leader or no quorum; another may.
                        if code != 14 && code != 4 && !message.contains("no leader") && !message.contains("timed out") {
                            throw refusal
                        }
                        lastProblem = "\(endpoint): \(message)"
                    }
                }
            } catch let failure as AnswerFailure {
                if streaming || failure.error is EtcdError { throw failure.error }
                lastProblem = "\(endpoint): \(failure.error)"
            } catch let error as EtcdError {
                if case .refused = error { throw error }
                lastProblem = "\(endpoint): \(error)"
            } catch let error as HTTPClientError where error == .deadlineExceeded {
                lastProblem = "\(endpoint): no answer within \(configuration.requestTimeout.nanoseconds / 1_000_000) ms"
            } catch let error as HTTPClientError where error == .connectTimeout {
                lastProblem = "\(endpoint): no connection within \(configuration.connectTimeout.nanoseconds / 1_000_000) ms"
            } catch {
                lastProblem = "\(endpoint): \(error)"
            }
            attempt += 1
        }
        throw EtcdError.unreachable(lastProblem)
    }

    /// One try of a request on one member, all of it by `deadline`: the answer as `read` takes
    /// it, or the member's refusal.
    private func ask<Answer: Sendable>(
        _ path: String, _ body: JSON, on endpoint: String, streaming: Bool, by deadline: NIODeadline,
        setUp: @escaping @Sendable () -> Void, read: @Sendable (HTTPClientResponse, @Sendable () -> Void) async throws -> Answer
    ) async throws -> Attempt<Answer> {
        var request = HTTPClientRequest(url: endpoint + path)
        request.method = .POST
        request.headers.add(name: "Content-Type", value: "application/json")
        if let token = try await currentToken(endpoint: endpoint, by: deadline) { request.headers.add(name: "Authorization", value: token) }
        // etcd's `hasleader` metadata, which the gateway takes from this header: a member
        // without a leader ends the stream instead of serving history that has stopped.
        // Requests go without it, so that a status still describes a leaderless member.
        if streaming { request.headers.add(name: "Grpc-Metadata-hasleader", value: "true") }
        var writer = JSONWriter(capacity: 256)
        writer.json(body)
        request.body = .bytes(ByteBuffer(bytes: writer.bytes))
        let response = try await http.execute(request, deadline: deadline, logger: logger)
        guard response.status == .ok else { return .refused(try await Self.refusal(of: response)) }
        do { return .answered(try await read(response, setUp)) } catch { throw AnswerFailure(error: error) }
    }

    /// Runs `operation` until it returns, and cancels it with `HTTPClientError.deadlineExceeded`
    /// when `deadline` passes first, unless it has called its `setUp` by then: from that call on
    /// it runs without a deadline (a stream that has started).
    ///
    /// The operation and a timer race in a task group; whichever ends first decides, and the
    /// other is cancelled. Cancelling a request's task cancels it in async-http-client, which
    /// closes its connection, and ends a body's reading with an error.
    static func within<Outcome: Sendable>(
        _ deadline: NIODeadline, _ operation: @escaping @Sendable (_ setUp: @escaping @Sendable () -> Void) async throws -> Outcome
    ) async throws -> Outcome {
        let isSetUp = NIOLockedValueBox(false)
        return try await withThrowingTaskGroup(of: Finished<Outcome>.self, returning: Outcome.self) { group in
            group.addTask {
                let outcome = try await operation { isSetUp.withLockedValue { $0 = true } }
                return .operation(outcome)
            }
            group.addTask {
                let remaining = (deadline - NIODeadline.now()).nanoseconds
                if remaining > 0 { try await Task.sleep(nanoseconds: UInt64(remaining)) }
                if isSetUp.withLockedValue({ $0 }) { return .deadlineLifted }
                throw HTTPClientError.deadlineExceeded
            }
            defer { group.cancelAll() }
            while let finished = try await group.next() {
                if case .operation(let outcome) = finished { return outcome }
            }
            preconditionFailure("the operation's task ends with its outcome or its error")
        }
    }

    static func refusal(of response: HTTPClientResponse) async throws -> EtcdError {
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard let json = try? JSONParser.parse(Array(bytes.readableBytesView)) else {
            return .refused(code: Int(response.status.code), message: "HTTP \(response.status.code)")
        }
        return GatewayJSON.refusal(json)
    }

    /// The auth token for `endpoint`'s cluster, asked for once with the user and password, by
    /// the `deadline` of the try it is part of; nil when no user is configured.
    private func currentToken(endpoint: String, by deadline: NIODeadline) async throws -> String? {
        guard let user = configuration.user else { return nil }
        if let token = token.withLockedValue({ $0 }) { return token }
        var request = HTTPClientRequest(url: endpoint + "/v3/auth/authenticate")
        request.method = .POST
        var writer = JSONWriter(capacity: 128)
        writer.json(["name": .string(user), "password": .string(configuration.password ?? "")])
        request.body = .bytes(ByteBuffer(bytes: writer.bytes))
        let response = try await http.execute(request, deadline: deadline, logger: logger)
        if response.status != .ok { throw try await Self.refusal(of: response) }
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard case .string(let value)? = (try? JSONParser.parse(Array(bytes.readableBytesView)))?["token"] else {
            throw EtcdError.malformed("authenticate answered without a token")
        }
        token.withLockedValue { $0 = value }
        return value
    }
}

/// What one member did with a request: answered it, or refused it.
private enum Attempt<Answer: Sendable>: Sendable {
    case answered(Answer)
    case refused(EtcdError)
}

/// How one of the two tasks of ``EtcdClient/within(_:_:)`` ended.
private enum Finished<Outcome: Sendable>: Sendable {
    case operation(Outcome)
    /// The deadline passed after the operation had called `setUp`: it runs on without one.
    case deadlineLifted
}

/// What a request's `read` threw, told apart from the member's own failures before it (the
/// connection, the headers, a refusal), which send the request on to the next member.
private struct AnswerFailure: Error {
    let error: any Error
}
