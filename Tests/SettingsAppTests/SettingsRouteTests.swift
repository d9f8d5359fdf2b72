import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdTesting
import HummingbirdWebSocket
import DaemonTestSupport
import TestThreads
import Testing

@testable import SettingsApp

/// The Settings app's routes in process, through HummingbirdTesting, without the access guard
/// (its rules are tested over real HTTP in SettingsAppSecurityTests): without a daemon, and with
/// a real one where the answer depends on what it holds.
@Suite(.ownThreads) struct SettingsRouteTests {
    func application() -> some ApplicationProtocol {
        let server = SettingsServer(configuration: .init(port: 0, socketPath: "/nonexistent/defaultsd/socket"))
        let router = Router(context: BasicWebSocketRequestContext.self)
        server.addRoutes(to: router.group())
        return Application(router: router)
    }

    /// The routes over a real daemon, with the relay (the app's one connection to the daemon)
    /// running as the app's service runs it.
    func withRoutes(
        over daemon: DaemonProcess, schemaTool: String? = nil, _ body: @escaping @Sendable (any TestClientProtocol) async throws -> Void
    ) async throws {
        let server = SettingsServer(configuration: .init(port: 0, socketPath: daemon.socketPath, schemaTool: schemaTool))
        let router = Router(context: BasicWebSocketRequestContext.self)
        server.addRoutes(to: router.group())
        let relay = Task { try await server.relay.run() }
        defer { relay.cancel() }
        for await _ in server.relay.firstAttempt {}
        try await Application(router: router).test(.router, body)
    }

    @Test("the page and its assets are served with their types and the security headers")
    func thePageAndAssets() async throws {
        try await application().test(.router) { client in
            // Every module the page loads, from app.js through its imports: a browser runs a
            // module only when it is served as JavaScript, and the page only when each is served.
            var pending = ["app.js"]
            var loaded: Set<String> = []
            while let name = pending.popLast() {
                guard loaded.insert(name).inserted else { continue }
                let response: TestResponse = try await client.execute(uri: "/assets/" + name, method: .get)
                #expect(response.status == .ok, "\(name)")
                #expect(response.headers[.contentType] == "text/javascript; charset=utf-8", "\(name)")
                #expect(response.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true, "\(name)")
                #expect(response.headers[.cacheControl] == "no-store", "\(name)")
                pending += Self.moduleImports(String(buffer: response.body))
            }
            #expect(loaded == Set(Assets.scripts.map { $0.name }), "every module served is one the page loads")
            #expect(loaded.count > 1)
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
        try await withRoutes(over: daemon) { client in
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

    /// The defaults a running app registered for its domain follow its stored keys, marked
    /// `registered`, for keys that hold no value; they go when the app does.
    @Test func aRunningAppsRegisteredDefaultsAreListed() async throws {
        let daemon = try DaemonProcess()
        let app = try daemon.connect()
        #expect(try app.request(#"{"op":"set","domain":"com.example.plain","key":"volume","value":3}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try app.request(#"{"op":"register","domain":"com.example.plain","defaults":{"volume":7,"theme":"dark"}}"#) == #"{"ok":true,"count":2}"#)
        try await withRoutes(over: daemon) { client in
            try await client.execute(uri: "/api/domains/com.example.plain", method: .get) { response in
                #expect(response.status == .ok)
                let answer = try JSONParser.parse(Array(response.body.readableBytesView))
                #expect(answer["keys"] == [
                    ["key": "volume", "type": "integer", "editable": true, "forced": false, "secret": false, "text": "3"],
                    ["key": "theme", "type": "string", "text": "dark", "editable": true, "forced": false, "secret": false, "registered": true],
                ], "\(answer)")
            }
        }
        _ = app
    }

    /// A domain GSettings programs keep here shows its schema (from `defaultsd-schema`, as `make
    /// gsettings-backend` builds it), and a value outside the schema is refused with the reason.
    @Test(.enabled(if: SettingsRouteTests.schemaToolIsBuilt, "needs `make gsettings-backend` and gsettings-desktop-schemas"))
    func aGSettingsDomainShowsItsSchemaAndRefusesValuesOutsideIt() async throws {
        let domain = "org.gnome.desktop.interface"
        let daemon = try DaemonProcess()
        #expect(try daemon.connect().request(#"{"op":"set","domain":"\#(domain)","key":"gtk-theme","value":"Adwaita"}"#) == #"{"ok":true,"generation":1}"#)
        try await withRoutes(over: daemon, schemaTool: Self.schemaTool) { client in
            try await client.execute(uri: "/api/domains/\(domain)", method: .get) { response in
                #expect(response.status == .ok)
                let answer = try JSONParser.parse(Array(response.body.readableBytesView))
                #expect(answer["schema"]?["schema"] == .string(domain), "\(answer)")
                guard case .array(let keys)? = answer["schema"]?["keys"] else {
                    Issue.record("no schema keys: \(answer)")
                    return
                }
                let scheme = keys.first { $0["key"] == "color-scheme" }
                #expect(scheme?["summary"] == "Color scheme" && scheme?["type"] == "s" && scheme?["defaultText"] == "default")
                #expect(scheme?["range"]?["choices"] == ["default", "prefer-dark", "prefer-light"])
                let scaling = keys.first { $0["key"] == "text-scaling-factor" }
                #expect(scaling?["range"]?["min"] == .real(0.5) && scaling?["range"]?["max"] == .real(3.0) && scaling?["plainType"] == "real")
            }
            try await client.execute(
                uri: "/api/domains/\(domain)/keys", method: .post, body: ByteBuffer(string: #"{"key":"color-scheme","type":"string","text":"purple"}"#)
            ) { response in
                #expect(response.status == .unprocessableContent)
                let answer = try JSONParser.parse(Array(response.body.readableBytesView))
                #expect(answer["error"]?["message"] == "'purple' is not one of the choices of color-scheme", "\(answer)")
            }
            try await client.execute(
                uri: "/api/domains/\(domain)/keys", method: .post, body: ByteBuffer(string: #"{"key":"text-scaling-factor","type":"real","text":"4"}"#)
            ) { response in
                #expect(response.status == .unprocessableContent)
                let answer = try JSONParser.parse(Array(response.body.readableBytesView))
                #expect(answer["error"]?["message"] == "4.0 is out of the range of text-scaling-factor: 0.5 to 3.0", "\(answer)")
            }
            try await client.execute(
                uri: "/api/domains/\(domain)/keys", method: .post, body: ByteBuffer(string: #"{"key":"color-scheme","type":"string","text":"prefer-dark"}"#)
            ) { response in
                #expect(response.status == .ok)
            }
        }
        #expect(try daemon.connect().request(#"{"op":"get","domain":"\#(domain)","key":"color-scheme"}"#) == #"{"ok":true,"value":"prefer-dark","generation":2}"#)
    }

    /// The modules a page script imports: the page's modules import only one another, each as
    /// `from "./name.js"`.
    static func moduleImports(_ source: String) -> [String] {
        source.components(separatedBy: #"from "./"#).dropFirst().compactMap { $0.split(separator: "\"", maxSplits: 1).first.map(String.init) }
    }

    static let schemaTool = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent(".build/c/defaultsd-schema").path
    static var schemaToolIsBuilt: Bool {
        FileManager.default.isExecutableFile(atPath: schemaTool)
            && FileManager.default.fileExists(atPath: "/usr/share/glib-2.0/schemas/org.gnome.desktop.interface.gschema.xml")
    }
}
