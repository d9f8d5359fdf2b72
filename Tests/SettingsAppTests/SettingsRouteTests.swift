import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import DaemonTestSupport
import Testing

@testable import SettingsApp

/// The Settings app's routes in process, through HummingbirdTesting, without the access guard
/// (its rules are tested over real HTTP in SettingsAppSecurityTests): without a daemon, and with
/// a real one where the answer depends on what it holds.
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

    @Test("a domain whose name has a space (a Foundation program called `My Tool`) is served under its percent-encoded name")
    func aDomainNameWithASpace() async throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.connect().request(#"{"op":"set","domain":"My Tool","key":"rank","value":"Captain"}"#) == #"{"ok":true,"generation":1}"#)
        let server = SettingsServer(configuration: .init(port: 0, socketPath: daemon.socketPath))
        let router = Router(context: BasicWebSocketRequestContext.self)
        server.addRoutes(to: router.group())
        // The relay is the app's one connection to the daemon; it runs as the app's service would.
        let relay = Task { try await server.relay.run() }
        defer { relay.cancel() }
        for await _ in server.relay.firstAttempt {}
        try await Application(router: router).test(.router) { client in
            try await client.execute(uri: "/api/domains/My%20Tool", method: .get) { response in
                #expect(response.status == .ok)
                let answer = try JSONParser.parse(Array(response.body.readableBytesView))
                #expect(answer["domain"] == "My Tool", "\(answer)")
                guard case .array(let keys)? = answer["keys"], let first = keys.first else {
                    Issue.record("no keys: \(answer)")
                    return
                }
                #expect(first["key"] == "rank" && first["text"] == "Captain", "\(answer)")
            }
            try await client.execute(uri: "/api/overview", method: .get) { response in
                let answer = try JSONParser.parse(Array(response.body.readableBytesView))
                guard case .array(let others)? = answer["otherDomains"] else {
                    Issue.record("no other domains: \(answer)")
                    return
                }
                #expect(others.contains("My Tool"), "\(answer)")
            }
        }
    }
}
