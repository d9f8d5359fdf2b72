import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// The routes: the access guard, the page and its assets, and the JSON API.
extension SettingsServer {
    func application(host: String, port: Int, onRunning: @escaping @Sendable (Int) -> Void) -> some ApplicationProtocol {
        let guardMiddleware = AccessGuard<BasicWebSocketRequestContext>(
            keys: keys, port: boundPort, replaced: { token in self.replaceLaunchToken(with: token) })
        let base = Router(context: BasicWebSocketRequestContext.self)
        base.add(middleware: guardMiddleware)
        // Every address of the app lies under the session's prefix (``SessionKeys``).
        addRoutes(to: base.group(RouterPath(keys.prefix)))

        let live = Router(context: BasicWebSocketRequestContext.self)
        live.add(middleware: guardMiddleware)
        live.ws(RouterPath(keys.prefix + "/live")) { inbound, outbound, _ in
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

        let liveResponder = live.buildResponder()
        return Application(
            router: base,
            server: HTTPServerBuilder { [timeout = TimeAmount(configuration.idleTimeout)] responder in
                ClosingIdleConnections(
                    inner: HTTP1WebSocketUpgradeChannel(responder: responder, webSocketResponder: liveResponder, configuration: .init()),
                    timeout: timeout)
            },
            configuration: .init(
                address: .hostname(host, port: port), serverName: nil,
                availableConnectionsDelegate: MaximumAvailableConnections(configuration.maximumConnections, logger: logger)),
            onServerRunning: { channel in onRunning(channel.localAddress?.port ?? port) },
            logger: logger)
    }

    /// A path parameter as the page meant it: the router hands it over as it stands in the path,
    /// percent-encoded (`My%20Tool`), and the page encodes every domain and image name it puts
    /// there (`encodeURIComponent`).
    static func decoded(_ name: String, of context: BasicWebSocketRequestContext) throws -> String {
        let raw = try context.parameters.require(name)
        guard let text = raw.removingPercentEncoding else {
            throw HTTPError(.badRequest, message: "the \(name) in the path is not valid percent-encoded text")
        }
        return text
    }

    /// The page, its assets and the JSON API, added to `router` (the guarded group under the
    /// session's prefix in `application`; a bare router in the route tests).
    func addRoutes(to router: RouterGroup<BasicWebSocketRequestContext>) {
        let api = SettingsAPI(
            relay: relay, desktopEntries: DesktopEntryLookup(environment: ProcessInfo.processInfo.environment, logger: logger),
            schemas: GSettingsSchemas(tool: configuration.schemaTool), logger: logger)

        let page = self.page
        for path in ["/", "/apps/{domain}", "/domains/{domain}", "/history/{domain}", "/search"] {
            router.get(RouterPath(path)) { _, _ in Self.asset(page, type: "text/html; charset=utf-8") }
        }
        // A browser runs a module script only when it is served as JavaScript.
        for (name, bytes) in Assets.scripts {
            router.get(RouterPath("/assets/" + name)) { _, _ in Self.asset(bytes, type: "text/javascript; charset=utf-8") }
        }
        router.get("/assets/app.css") { _, _ in Self.asset(Assets.style, type: "text/css; charset=utf-8") }
        router.get("/assets/icon.svg") { _, _ in Self.asset(Assets.icon, type: "image/svg+xml") }

        router.get("/api/overview") { request, _ in
            try await Self.json { try await api.overview(acceptLanguage: request.headers[.acceptLanguage]) }
        }
        // Only the file the icon theme lookup found for the app's own desktop entry, size-capped (``DiskFile``).
        router.get("/api/apps/{domain}/icon") { _, context in
            guard let icon = api.desktopEntries.icon(for: try Self.decoded("domain", of: context)) else {
                return Self.failure(SettingsAPI.Failure(status: .notFound, code: "not_found", message: "no icon"))
            }
            return Self.asset(icon.bytes, type: icon.contentType)
        }
        router.get("/api/apps/{domain}") { request, context in
            try await Self.json {
                try await api.app(
                    try Self.decoded("domain", of: context), language: request.uri.queryParameters["language"].map(String.init),
                    acceptLanguage: request.headers[.acceptLanguage])
            }
        }
        router.get("/api/apps/{domain}/images/{name}") { _, context in
            do {
                let image = try await api.image(try Self.decoded("domain", of: context), name: try Self.decoded("name", of: context))
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
            try await Self.json { try await api.plainDomain(try Self.decoded("domain", of: context)) }
        }
        router.get("/api/domains/{domain}/history") { request, context in
            try await Self.json {
                try await api.history(try Self.decoded("domain", of: context), acceptLanguage: request.headers[.acceptLanguage])
            }
        }
        router.post("/api/apps/{domain}/rows") { request, context in
            try await Self.change(request) { try await api.change(try Self.decoded("domain", of: context), body: $0) }
        }
        router.post("/api/apps/{domain}/rows/reset") { request, context in
            try await Self.change(request) { try await api.reset(try Self.decoded("domain", of: context), body: $0) }
        }
        router.post("/api/domains/{domain}/keys") { request, context in
            try await Self.change(request) { try await api.setPlain(try Self.decoded("domain", of: context), body: $0) }
        }
        router.post("/api/domains/{domain}/keys/delete") { request, context in
            try await Self.change(request) { try await api.deletePlain(try Self.decoded("domain", of: context), body: $0) }
        }
        router.post("/api/domains/{domain}/history/restore") { request, context in
            try await Self.change(request) { try await api.restore(try Self.decoded("domain", of: context), body: $0) }
        }
    }
}
