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

/// Which member answers: each request tried on the members in turn until one does.
extension EtcdClient {
    /// Posts to the given members in turn (by default the preferred one, then the others), and
    /// returns the answer's JSON.
    func post(_ path: String, _ body: JSON, members: [Int]? = nil) async throws(EtcdError) -> JSON {
        let response: HTTPClientResponse
        do {
            response = try await send(path, body, streaming: false, members: members)
        } catch let error as EtcdError {
            throw error
        } catch {
            throw .unreachable("\(error)")
        }
        let bytes: ByteBuffer
        do {
            bytes = try await response.body.collect(upTo: configuration.maximumMessageBytes)
        } catch is NIOTooManyBytesError {
            throw .malformed("an answer longer than \(configuration.maximumMessageBytes) bytes")
        } catch {
            throw .unreachable("\(error)")
        }
        do { return try JSONParser.parse(Array(bytes.readableBytesView)) } catch { throw .malformed("a body that is not JSON") }
    }

    /// Sends to one member after another until one answers with success or a definite refusal:
    /// the given members, or else the preferred one and then the others in turn. Each attempt
    /// has ``Configuration/requestTimeout``; a stream (the watch) has no deadline.
    func send(_ path: String, _ body: JSON, streaming: Bool, members: [Int]? = nil) async throws -> HTTPClientResponse {
        let endpoints = configuration.endpoints
        let first = preferred.withLockedValue { $0 }
        let order = members ?? endpoints.indices.map { (first + $0) % endpoints.count }
        var lastProblem = "no endpoint"
        var askedForNewToken = false
        var attempt = 0
        while attempt < order.count {
            let index = order[attempt]
            let endpoint = endpoints[index]
            do {
                var request = HTTPClientRequest(url: endpoint + path)
                request.method = .POST
                request.headers.add(name: "Content-Type", value: "application/json")
                if let token = try await currentToken(endpoint: endpoint) { request.headers.add(name: "Authorization", value: token) }
                // etcd's `hasleader` metadata, which the gateway takes from this header: a member
                // without a leader ends the stream instead of serving history that has stopped.
                // Requests go without it, so that a status still describes a leaderless member.
                if streaming { request.headers.add(name: "Grpc-Metadata-hasleader", value: "true") }
                var writer = JSONWriter(capacity: 256)
                writer.json(body)
                request.body = .bytes(ByteBuffer(bytes: writer.bytes))
                let deadline: NIODeadline = streaming ? .distantFuture : .now() + configuration.requestTimeout
                let response = try await http.execute(request, deadline: deadline, logger: logger)
                if response.status == .ok {
                    if members == nil { preferred.withLockedValue { $0 = index } }
                    return response
                }
                let refusal = try await Self.refusal(of: response)
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

    static func refusal(of response: HTTPClientResponse) async throws -> EtcdError {
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard let json = try? JSONParser.parse(Array(bytes.readableBytesView)) else {
            return .refused(code: Int(response.status.code), message: "HTTP \(response.status.code)")
        }
        return GatewayJSON.refusal(json)
    }

    /// The auth token for `endpoint`'s cluster, asked for once with the user and password; nil
    /// when no user is configured.
    private func currentToken(endpoint: String) async throws -> String? {
        guard let user = configuration.user else { return nil }
        if let token = token.withLockedValue({ $0 }) { return token }
        var request = HTTPClientRequest(url: endpoint + "/v3/auth/authenticate")
        request.method = .POST
        var writer = JSONWriter(capacity: 128)
        writer.json(["name": .string(user), "password": .string(configuration.password ?? "")])
        request.body = .bytes(ByteBuffer(bytes: writer.bytes))
        let response = try await http.execute(request, deadline: .now() + configuration.requestTimeout, logger: logger)
        if response.status != .ok { throw try await Self.refusal(of: response) }
        let bytes = try await response.body.collect(upTo: 1 << 20)
        guard case .string(let value)? = (try? JSONParser.parse(Array(bytes.readableBytesView)))?["token"] else {
            throw EtcdError.malformed("authenticate answered without a token")
        }
        token.withLockedValue { $0 = value }
        return value
    }
}
