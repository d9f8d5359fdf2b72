import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import Testing

@testable import SettingsApp

/// The Settings app's routes in process, through HummingbirdTesting, without the access guard
/// (its rules are tested over real HTTP in SettingsAppSecurityTests) and without a daemon.
@Suite struct SettingsRouteTests {
    func application() -> some ApplicationProtocol {
        let server = SettingsServer(configuration: .init(port: 0, socketPath: "/nonexistent/defaultsd/socket"))
        let router = Router(context: BasicWebSocketRequestContext.self)
        server.addRoutes(to: router.group())
        return Application(router: router)
    }

    @Test("the page and its assets are served with their types and the security headers")
    func thePageAndAssets() async throws {
        try await application().test(.router) { client in
            try await client.execute(uri: "/assets/app.js", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8")
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
                #expect(response.headers[.cacheControl] == "no-store")
            }
            try await client.execute(uri: "/apps/com.example.app", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.contentType] == "text/html; charset=utf-8")
                #expect(!String(buffer: response.body).contains("{{base}}"), "the prefix is written into the page")
            }
        }
    }

    @Test("without a daemon the API answers 503 with the reason, and a bad body 400")
    func theAPIWithoutADaemon() async throws {
        try await application().test(.router) { client in
            try await client.execute(uri: "/api/overview", method: .get) { response in
                #expect(response.status == .serviceUnavailable)
                let answer = try JSONParser.parse(Array(response.body.readableBytesView))
                #expect(answer["ok"] == false && answer["error"]?["code"] == "unreachable")
                #expect(answer["error"]?["message"] == "defaultsd is not running")
            }
            try await client.execute(uri: "/api/domains/com.example.plain/keys", method: .post, body: ByteBuffer(string: "not json")) { response in
                #expect(response.status == .badRequest)
            }
        }
    }
}
