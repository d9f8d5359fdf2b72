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

/// A client of an etcd v3 cluster through its JSON gateway (`/v3/kv/range`, `/v3/kv/txn`,
/// `/v3/watch`), over async-http-client.
///
/// The endpoints are used as one cluster: a request goes to the member that answered last, and
/// to the next one when it cannot be reached or has no leader, so losing a member of three
/// changes nothing a caller sees. Only when no member answers does a request fail with
/// ``EtcdError/unreachable(_:)``.
///
/// Thread-safe (the preferred member and the auth token sit behind locks); the HTTP work runs
/// on the event-loop group it is given.
///
/// ```swift
/// let etcd = try EtcdClient(configuration: .init(endpoints: ["http://127.0.0.1:2379"]), eventLoopGroup: group)
/// let range = try await etcd.range(prefix: "/defaultsd/ada/")
/// for pair in range.keyValues { print(pair.key, pair.value, pair.modRevision) }
/// try await etcd.shutdown()
/// ```
public final class EtcdClient: Sendable {
    /// Where the cluster is and how to prove who we are.
    public struct Configuration: Sendable, Hashable {
        /// Client URLs of the members, `http://host:port` or `https://host:port`.
        public var endpoints: [String]
        /// etcd's own users (`etcdctl user add`): a token is asked for with these and sent with every request.
        public var user: String?
        public var password: String?
        /// PEM files: the client certificate and its key (for clusters that ask for one), and the
        /// CA that signed the members' certificates (else the system's trust store).
        public var certificateFile: String?
        public var privateKeyFile: String?
        public var trustedCAFile: String?
        /// How long one member has to accept a connection before the next one is tried.
        public var connectTimeout: TimeAmount = .milliseconds(500)
        /// How long one request may take on one member before the next is asked: one deadline
        /// from the connection to the last byte of the answer, so a member that sends its headers
        /// and then stalls is a timeout, not a wait. A watch has it until its first line; the
        /// stream after that is long-lived, and the caller's periodic check finds it when it goes
        /// quiet. Short, because a member asked while its cluster elects a new leader holds the
        /// request until etcd's own timeout (about 6 s) even though the election takes well under
        /// a second; by the time the next member is asked, there is a leader again.
        public var requestTimeout: TimeAmount = .seconds(1)
        /// The most bytes one answer, or one line of the watch stream, may hold. etcd refuses
        /// requests over 1.5 MiB by default, so one value is smaller than that; a larger answer
        /// is malformed, never buffered.
        public var maximumMessageBytes = 32 << 20
        /// How many keys one page of a range asks for: a range is read in pages, each within
        /// ``maximumMessageBytes``, all at the revision of the first.
        public var keysPerPage = 16
        /// The most keys one range may hold over all its pages: 65,536. A person's roaming
        /// preferences are some thousands of keys, and a member that keeps answering "more" is
        /// stopped after 4,096 pages of the default 16 keys, each within ``requestTimeout``.
        public var maximumRangeKeys = 1 << 16
        /// The most bytes of keys and values one range may hold over all its pages: 64 MiB, twice
        /// what one answer may hold (``maximumMessageBytes``), and sixteen domains at the
        /// daemon's default limit of 4 MiB each. A range is held whole before it is applied, so
        /// this is the most that paging lets a member make the client hold.
        public var maximumRangeBytes = 64 << 20

        public init(endpoints: [String]) { self.endpoints = endpoints }
    }

    let configuration: Configuration
    let http: HTTPClient
    /// async-http-client's own logging is off: at debug level it describes requests, and one of
    /// them carries the password. The client's callers log what matters (loss and return).
    let logger = Logger(label: "etcd", factory: { _ in SwiftLogNoOpLogHandler() })
    /// The member that answered last; requests start there.
    let preferred = NIOLockedValueBox(0)
    /// The token `authenticate` gave, while it is valid.
    let token = NIOLockedValueBox<String?>(nil)

    public init(configuration: Configuration, eventLoopGroup: EventLoopGroup) throws {
        precondition(!configuration.endpoints.isEmpty, "an etcd client needs at least one endpoint")
        self.configuration = configuration
        var http = HTTPClient.Configuration()
        http.timeout = .init(connect: configuration.connectTimeout, read: nil)
        http.decompression = .disabled
        http.httpVersion = .http1Only
        // A member that redirects is not followed: the request carries the auth token.
        http.redirectConfiguration = .disallow
        if configuration.endpoints.contains(where: { $0.hasPrefix("https:") }) || configuration.certificateFile != nil {
            var tls = TLSConfiguration.makeClientConfiguration()
            if let ca = configuration.trustedCAFile { tls.trustRoots = .file(ca) }
            if let certificate = configuration.certificateFile {
                tls.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
            }
            if let key = configuration.privateKeyFile { tls.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem)) }
            http.tlsConfiguration = tls
        }
        self.http = HTTPClient(eventLoopGroupProvider: .shared(eventLoopGroup), configuration: http, backgroundActivityLogger: logger)
    }

    public func shutdown() async throws { try await http.shutdown() }

    // MARK: - Requests

    /// Every key that starts with `prefix`, at the cluster's current revision, read in pages of
    /// ``Configuration/keysPerPage`` keys, each page at the revision of the first and from right
    /// after the last key of the one before. A range past ``Configuration/maximumRangeKeys`` or
    /// ``Configuration/maximumRangeBytes``, or a page that does not advance, is
    /// ``EtcdError/malformed(_:)`` (``EtcdRangePages``).
    public func range(prefix: String) async throws(EtcdError) -> EtcdRange {
        var pages = EtcdRangePages(
            keysPerPage: configuration.keysPerPage, maximumKeys: configuration.maximumRangeKeys,
            maximumBytes: configuration.maximumRangeBytes)
        var start = GatewayJSON.base64(prefix)
        while true {
            var body: [String: JSON] = [
                "key": start, "range_end": GatewayJSON.prefixEnd(prefix), "limit": .string(String(configuration.keysPerPage)),
            ]
            if let revision = pages.revision { body["revision"] = .string(String(revision)) }
            guard let next = try pages.take(try await post("/v3/kv/range", .object(body))) else { break }
            start = next
        }
        return pages.range
    }

    /// One transaction: when every compare holds, `success` runs, else `failure`; all at one revision.
    public func transaction(
        comparing compares: [EtcdCompare], success: [EtcdOperation], failure: [EtcdOperation] = []
    ) async throws(EtcdError) -> EtcdTransactionResult {
        let body: JSON = [
            "compare": .array(compares.map(GatewayJSON.compare)),
            "success": .array(success.map(GatewayJSON.operation)),
            "failure": .array(failure.map(GatewayJSON.operation)),
        ]
        return try GatewayJSON.transactionResult(try await post("/v3/kv/txn", body))
    }

    /// The members' client URLs, in the configured order; a member is named by its index here.
    public var endpoints: [String] { configuration.endpoints }

    /// Watches every key under `prefix` from `revision` on, through one member, handing each
    /// message of the stream to `receive` in order. Returns when the stream ends and throws when
    /// it breaks; the caller starts again from the revision after the last one it applied. A
    /// compacted start revision arrives as a message with `compactRevision` set and `canceled`.
    ///
    /// The watch requires a leader (etcd's `hasleader` metadata): a member that loses its leader,
    /// on the minority side of a partition, ends the stream with a "no leader" refusal instead of
    /// going silent. It asks for progress notifications too, which carry the cluster's revision
    /// on a quiet stream when the cluster sends them. A member that freezes sends nothing at all;
    /// the caller's own check of the members finds that (``status(ofMember:)``).
    ///
    /// Setting the stream up, until its first line (etcd answers a new watch at once, with
    /// `created` or a refusal), has ``Configuration/requestTimeout``: a member that accepts the
    /// connection and then says nothing is ``EtcdError/unreachable(_:)`` within it. `receive`
    /// runs in a child task of this call, and never after it returns.
    public func watch(
        prefix: String, from revision: Int64, member: Int, receive: @escaping @Sendable (EtcdWatchMessage) async throws -> Void
    ) async throws {
        let body: JSON = [
            "create_request": [
                "key": GatewayJSON.base64(prefix), "range_end": GatewayJSON.prefixEnd(prefix),
                "start_revision": .string(String(revision)), "progress_notify": true,
            ]
        ]
        let maximum = configuration.maximumMessageBytes
        try await send("/v3/watch", body, streaming: true, members: [member]) { (response, setUp) async throws -> Void in
            // The gateway writes one JSON message per line, cut by NIOExtras' LineBasedFrameDecoder
            // (the framing the client library's connection uses); a line longer than the limit is
            // malformed.
            let framer = NIOSingleStepByteToMessageProcessor(LineBasedFrameDecoder(), maximumBufferSize: maximum)
            for try await part in response.body {
                var lines: [ByteBuffer] = []
                do {
                    try framer.process(buffer: part) { lines.append($0) }
                } catch {
                    throw EtcdError.malformed("a watch line longer than \(maximum) bytes")
                }
                for line in lines where line.readableBytes > 0 {
                    setUp()
                    guard let json = try? JSONParser.parse(Array(line.readableBytesView)) else {
                        throw EtcdError.malformed("a watch line that is not JSON")
                    }
                    let message = try GatewayJSON.watchMessage(json)
                    try await receive(message)
                    if message.canceled { return }
                }
            }
        }
    }

    /// What one member says of itself, asked of that member only, within
    /// ``Configuration/requestTimeout``: a frozen member is a timeout, not a wait.
    public func status(ofMember member: Int) async throws(EtcdError) -> EtcdMemberStatus {
        do {
            return try GatewayJSON.memberStatus(try await post("/v3/maintenance/status", [:], members: [member]))
        } catch .unreachable(let reason) {
            // One member was asked: its reason, without the "endpoint: " that names it in a list.
            throw .unreachable(reason.hasPrefix(configuration.endpoints[member] + ": ")
                ? String(reason.dropFirst(configuration.endpoints[member].count + 2)) : reason)
        }
    }

    /// The revision of the latest write to a key under `prefix` (0: no key), by a linearizable
    /// read of one key from one member: what a watch of the prefix has delivered once it is current.
    public func latestWrite(prefix: String, member: Int) async throws(EtcdError) -> Int64 {
        let body: JSON = [
            "key": GatewayJSON.base64(prefix), "range_end": GatewayJSON.prefixEnd(prefix), "limit": "1",
            "sort_order": "DESCEND", "sort_target": "MOD", "keys_only": true,
        ]
        return try GatewayJSON.rangePage(try await post("/v3/kv/range", body, members: [member])).keyValues.first?.modRevision ?? 0
    }

}
