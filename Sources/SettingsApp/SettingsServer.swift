import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// The Settings app's web server: the page, its assets, its JSON API and its live WebSocket,
/// over one connection to defaultsd (``DaemonRelay``), on loopback only, behind the token
/// (``AccessGuard``).
///
/// ```swift
/// let server = SettingsServer(configuration: .init(port: 7641, socketPath: socket))
/// try await server.run { address in print(address) }   // http://127.0.0.1:7641/?token=...
/// ```
///
/// Owns the relay, the hub of live pages and the token; lives for the life of the process.
public final class SettingsServer: Sendable {
    public struct Configuration: Sendable {
        /// 0 picks a free port.
        public var port: Int
        public var socketPath: String
        /// Where the address with its token is written (mode 0600); nil writes none.
        public var addressFile: String?
        /// The addresses listened on; the first decides the port when `port` is 0.
        public var hosts: [String]

        public init(port: Int = SettingsServer.defaultPort, socketPath: String, addressFile: String? = nil, hosts: [String] = ["127.0.0.1", "::1"]) {
            self.port = port
            self.socketPath = socketPath
            self.addressFile = addressFile
            self.hosts = hosts
        }
    }

    public static let defaultPort = 7641

    public let configuration: Configuration
    /// 128 random bits, in hex; made when the server is.
    public let token: String
    let hub = LiveHub()
    let relay: DaemonRelay
    private let logger: Logger
    private let boundPort: NIOLockedValueBox<Int>

    public init(configuration: Configuration, logger: Logger = Logger(label: "defaultsd-settings")) {
        self.configuration = configuration
        self.logger = logger
        var generator = SystemRandomNumberGenerator()
        token = SystemText.hex((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        relay = DaemonRelay(socketPath: configuration.socketPath, hub: hub, logger: logger)
        boundPort = NIOLockedValueBox(configuration.port)
    }

    /// Serves until SIGTERM or SIGINT. `ready` gets the address with the token once every
    /// listener is bound (and the address file is written).
    public func run(ready: @escaping @Sendable (String) -> Void) async throws {
        guard let first = configuration.hosts.first else { return }
        let (port, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let primary = application(host: first, port: configuration.port) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        let others = OtherListeners(server: self, hosts: Array(configuration.hosts.dropFirst()), port: port, ready: ready)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: relay), .init(service: primary), .init(service: others)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        if let file = configuration.addressFile { unlink(file) }
    }

    /// The address with the token, once the port is known.
    func address(port: Int) -> String { "http://127.0.0.1:\(port)/?token=\(token)" }

    /// Binds the remaining hosts on the first one's port, writes the address file, reports ready.
    private struct OtherListeners: Service {
        let server: SettingsServer
        let hosts: [String]
        let port: AsyncStream<Int>
        let ready: @Sendable (String) -> Void

        func run() async throws {
            var ports = port.makeAsyncIterator()
            guard let port = await ports.next() else { return }
            server.boundPort.withLockedValue { $0 = port }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for host in hosts {
                    let bound = AsyncStream.makeStream(of: Int.self)
                    group.addTask {
                        do {
                            try await server.application(host: host, port: port) { _ in bound.continuation.finish() }.run()
                        } catch {
                            // ::1 is missing where IPv6 is off; 127.0.0.1 still serves.
                            server.logger.notice("not listening on \(host)", metadata: ["error": "\(error)"])
                            bound.continuation.finish()
                        }
                    }
                    for await _ in bound.stream {}
                }
                for await _ in server.relay.firstAttempt {}
                let address = server.address(port: port)
                if let file = server.configuration.addressFile { try server.writeAddressFile(file, address: address) }
                ready(address)
                try await gracefulShutdown()
                group.cancelAll()
            }
        }
    }

    /// Writes the address file in the daemon's runtime folder, which must be trusted as the
    /// socket's is (``SocketTrust``): made here with mode 0700 when missing, and otherwise the
    /// user's or root's, writable by no one else. The temporary file has a random name and is
    /// created new (`O_EXCL`), never through a link (`O_NOFOLLOW`).
    private func writeAddressFile(_ path: String, address: String) throws {
        let folder = SystemText.parentDirectory(of: path)
        mkdir(folder, 0o700)
        try SocketTrust.checkDirectory(ofSocket: path)
        let temporary = path + ".tmp-" + SystemText.hex((0..<8).map { _ in UInt8.random(in: 0...255) })
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DefaultsError(.ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, 0o600)
        guard FileDescriptorIO.write(address + "\n", to: fd), rename(temporary, path) == 0 else {
            unlink(temporary)
            throw DefaultsError(.ioError, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

    // MARK: Routes

    func application(host: String, port: Int, onRunning: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        let guardMiddleware = AccessGuard<BasicWebSocketRequestContext>(token: token, port: boundPort)
        let router = Router(context: BasicWebSocketRequestContext.self)
        router.add(middleware: guardMiddleware)
        let api = SettingsAPI(relay: relay)

        for path in ["/", "/apps/{domain}", "/domains/{domain}", "/search"] {
            router.get(RouterPath(path)) { _, _ in Self.asset(Assets.page, type: "text/html; charset=utf-8") }
        }
        router.get("/assets/app.js") { _, _ in Self.asset(Assets.script, type: "text/javascript; charset=utf-8") }
        router.get("/assets/app.css") { _, _ in Self.asset(Assets.style, type: "text/css; charset=utf-8") }
        router.get("/assets/icon.svg") { _, _ in Self.asset(Assets.icon, type: "image/svg+xml") }

        router.get("/api/overview") { _, _ in try await Self.json { try await api.overview() } }
        router.get("/api/apps/{domain}") { request, context in
            try await Self.json {
                try await api.app(
                    try context.parameters.require("domain"), language: request.uri.queryParameters["language"].map(String.init),
                    acceptLanguage: request.headers[.acceptLanguage])
            }
        }
        router.get("/api/apps/{domain}/images/{name}") { _, context in
            do {
                let image = try await api.image(try context.parameters.require("domain"), name: try context.parameters.require("name"))
                return Self.asset(image.bytes, type: image.contentType)
            } catch let failure as SettingsAPI.Failure {
                return Self.failure(failure)
            }
        }
        router.get("/api/search") { request, _ in
            try await Self.json {
                try await api.search(
                    String(request.uri.queryParameters["q"] ?? ""), acceptLanguage: request.headers[.acceptLanguage])
            }
        }
        router.get("/api/domains/{domain}") { _, context in
            try await Self.json { try await api.plainDomain(try context.parameters.require("domain")) }
        }
        router.post("/api/apps/{domain}/rows") { request, context in
            try await Self.change(request) { try await api.change(try context.parameters.require("domain"), body: $0) }
        }
        router.post("/api/apps/{domain}/rows/reset") { request, context in
            try await Self.change(request) { try await api.reset(try context.parameters.require("domain"), body: $0) }
        }
        router.post("/api/domains/{domain}/keys") { request, context in
            try await Self.change(request) { try await api.setPlain(try context.parameters.require("domain"), body: $0) }
        }
        router.post("/api/domains/{domain}/keys/delete") { request, context in
            try await Self.change(request) { try await api.deletePlain(try context.parameters.require("domain"), body: $0) }
        }

        let live = Router(context: BasicWebSocketRequestContext.self)
        live.add(middleware: guardMiddleware)
        live.ws("/live") { inbound, outbound, _ in
            let (notices, leave) = self.hub.join()
            defer { leave() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for try await _ in inbound {}  // the page sends nothing; its end ends this
                }
                group.addTask {
                    for await notice in notices { try await outbound.write(.text(notice.text)) }
                }
                try await group.next()
                group.cancelAll()
            }
        }

        return Application(
            router: router,
            server: .http1WebSocketUpgrade(webSocketRouter: live),
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    // MARK: Responses

    static let securityHeaders: HTTPFields = [
        .contentSecurityPolicy: "default-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
        .xContentTypeOptions: "nosniff", .init("Referrer-Policy")!: "no-referrer", .cacheControl: "no-store",
    ]

    static func asset(_ bytes: [UInt8], type: String) -> Response {
        var headers = securityHeaders
        headers[.contentType] = type
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ body: () async throws -> JSON) async throws -> Response {
        do {
            return jsonResponse(.ok, try await body())
        } catch let failure as SettingsAPI.Failure {
            return Self.failure(failure)
        }
    }

    /// A POST: a bounded JSON object in, `{"ok":true}` or the error out.
    static func change(_ request: Request, _ apply: (JSON) async throws -> Void) async throws -> Response {
        do {
            let bytes: ByteBuffer
            do {
                bytes = try await request.body.collect(upTo: SettingsAPI.maximumBodyBytes)
            } catch {
                throw SettingsAPI.Failure(status: .contentTooLarge, code: "too_large", message: "the request body is over \(SettingsAPI.maximumBodyBytes) bytes")
            }
            let body: JSON
            do {
                body = try JSONParser.parse(Array(bytes.readableBytesView))
            } catch {
                throw SettingsAPI.Failure(status: .badRequest, code: "bad_request", message: "the body is not JSON: \(error)")
            }
            guard case .object = body else { throw SettingsAPI.Failure(status: .badRequest, code: "bad_request", message: "the body is not a JSON object") }
            try await apply(body)
            return jsonResponse(.ok, ["ok": true])
        } catch let failure as SettingsAPI.Failure {
            return Self.failure(failure)
        }
    }

    static func failure(_ failure: SettingsAPI.Failure) -> Response {
        jsonResponse(failure.status, ["ok": false, "error": ["code": .string(failure.code), "message": .string(failure.message)]])
    }

    static func jsonResponse(_ status: HTTPResponse.Status, _ value: JSON) -> Response {
        var writer = JSONWriter(capacity: 1024)
        writer.json(value)
        var headers = securityHeaders
        headers[.contentType] = "application/json"
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: writer.bytes)))
    }
}

/// The page's files, compiled into the program (SwiftPM `embedInCode`): nothing is read from
/// disk or fetched at run time.
enum Assets {
    static var page: [UInt8] { PackageResources.index_html }
    static var script: [UInt8] { PackageResources.app_js }
    static var style: [UInt8] { PackageResources.app_css }
    static var icon: [UInt8] { PackageResources.icon_svg }
}
