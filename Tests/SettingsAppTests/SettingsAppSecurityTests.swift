import DaemonTestSupport
import DefaultsClient
import DefaultsCore
import Foundation
import LineSocket
import LocalServices
import TestThreads
import Testing
import WebDriver

/// The real `defaultsd-settings` over a real daemon, spoken to byte by byte: the token, the
/// cookie, `Host`, `Origin`, bounded bodies, the address file and the daemon coming and going.
@Suite(.ownThreads) struct SettingsAppSecurityTests {
    let daemon: DaemonProcess
    let app: SettingsAppProcess

    init() throws {
        daemon = try DaemonProcess()
        app = try SettingsAppProcess(daemon: daemon)
    }

    /// A GET of one of the app's pages (`path` under the session's prefix unless `prefixed` is false).
    private func get(
        _ path: String, cookie: Bool = true, prefixed: Bool = true, host: String? = nil, headers: [String: String] = [:]
    ) throws -> LoopbackHTTP.Answer {
        try LoopbackHTTP.send(
            port: app.port, "GET", (prefixed ? app.prefix : "") + path,
            headers: headers.merging(cookie ? ["Cookie": app.cookie] : [:]) { $1 }, host: host)
    }

    private func post(_ path: String, _ body: String, origin: String?) throws -> LoopbackHTTP.Answer {
        var headers = ["Cookie": app.cookie, "Content-Type": "application/json"]
        headers["Origin"] = origin
        return try LoopbackHTTP.send(port: app.port, "POST", app.prefix + path, headers: headers, body: body)
    }

    /// The launch page's POST, as a browser sends it from the `file://` page (`Origin: null`).
    private func launch(_ form: String) throws -> LoopbackHTTP.Answer {
        try LoopbackHTTP.send(port: app.port, "POST", "/launch",
                              headers: ["Content-Type": "application/x-www-form-urlencoded", "Origin": "null"], body: form)
    }

    /// The file's identity: a file replaced by another (renamed over it) has a new one.
    private func inode(_ path: String) throws -> Int? {
        (try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? NSNumber)?.intValue
    }

    @Test(arguments: ["/", "/assets/app.js", "/assets/icon.svg", "/api/overview", "/apps/com.example.app", "/no/such/page", "/live"])
    func withoutTheTokenEveryRequestIsForbiddenAndShownNothing(path: String) throws {
        for prefixed in [true, false] {
            let answer = try get(path, cookie: false, prefixed: prefixed)
            #expect(answer.status == 403)
            #expect(answer.body == "forbidden\n")
            let wrong = try get(path + "?token=" + String(app.token.reversed()), cookie: false, prefixed: prefixed)
            #expect(wrong.status == 403)
            #expect(wrong.header("Set-Cookie") == nil)
        }
        // The session's cookie opens nothing outside the prefix, and the launch token is no cookie.
        #expect(try get(path, prefixed: false).status == 403)
        #expect(try get(path, cookie: false, headers: ["Cookie": "defaultsd-settings=\(app.token)"]).status == 403)
    }

    @Test func theTokenBecomesAStrictHttpOnlyCookieAndLeavesTheAddress() throws {
        let token = app.token
        let answer = try get("/apps/com.example.app?language=fr&token=\(token)", cookie: false, prefixed: false)
        #expect(answer.status == 303)
        #expect(answer.header("Location") == app.prefix + "/apps/com.example.app?language=fr")
        let cookie = try #require(answer.header("Set-Cookie"))
        // The session, not the token, and only for the prefix: another server on 127.0.0.1 never gets it.
        #expect(cookie.hasPrefix(app.cookie + ";"))
        #expect(!cookie.contains(token))
        #expect(cookie.contains("Path=\(app.prefix)/"))
        #expect(cookie.contains("HttpOnly"))
        #expect(cookie.contains("SameSite=Strict"))
        #expect(app.prefix.count == 25 && app.prefix.hasPrefix("/"), "96 random bits")
        let page = try get("/")
        #expect(page.status == 200)
        #expect(page.body.contains("<script type=\"module\" src=\"\(app.prefix)/assets/app.js\">"))
        #expect(page.header("Content-Security-Policy")?.contains("default-src 'self'") == true)
    }

    @Test("the launch page's POST trades only the right token, and moves only to a page of the app")
    func theLaunchPostTradesOnlyTheToken() throws {
        let wrong = try launch("token=\(String(app.token.reversed()))&next=/")
        #expect(wrong.status == 403 && wrong.header("Set-Cookie") == nil)
        let right = try launch("token=\(app.token)&next=%2Fapps%2Fcom.example.app")
        #expect(right.status == 200)
        #expect(right.header("Set-Cookie")?.hasPrefix(app.cookie + ";") == true)
        #expect(right.body.contains(#"content="0;url=\#(app.prefix)/apps/com.example.app""#))
        // `app.token` is read again: the next token, which the trade above wrote.
        let elsewhere = try launch("token=\(app.token)&next=%2F%2Fevil.example%2F")
        #expect(elsewhere.body.contains(#"content="0;url=\#(app.prefix)/""#))
    }

    @Test("a token opens the app once: the same token again, from a second browser or a replay from a log, is refused, while the session it opened goes on")
    func aUsedTokenIsRefusedTheSecondTime() throws {
        let token = app.token
        let first = try get("/apps/com.example.app?token=\(token)", cookie: false, prefixed: false)
        #expect(first.status == 303)
        #expect(first.header("Set-Cookie")?.hasPrefix(app.cookie + ";") == true)
        for again in [try get("/apps/com.example.app?token=\(token)", cookie: false, prefixed: false), try launch("token=\(token)&next=%2F")] {
            #expect(again.status == 403)
            #expect(again.body == "forbidden\n")
            #expect(again.header("Set-Cookie") == nil)
        }
        // The browser that traded it reloads under the prefix with its cookie.
        #expect(try get("/apps/com.example.app").status == 200)
        // The next token is a new one, and opens the app once too.
        let next = app.token
        #expect(next.count == 32 && next != token)
        #expect(try get("/?token=\(next)", cookie: false, prefixed: false).status == 303)
        #expect(try get("/?token=\(next)", cookie: false, prefixed: false).status == 403)
    }

    @Test("the launch page whose token is used is gone: a new page holding the next token is in its place, and the used one opens nothing")
    func theLaunchPageIsGoneOnceItsTokenIsUsed() throws {
        let used = app.token
        let before = try String(contentsOfFile: app.launchFile, encoding: .utf8)
        #expect(before.contains(#"name="token" value="\#(used)""#))
        let identity = try inode(app.launchFile)
        #expect(identity != nil)
        let opened = try launch("token=\(used)&next=%2Fapps%2Fcom.example.app")
        #expect(opened.status == 200)
        // Replaced before the answer: no copy of the used token is left, in the page or the address file.
        let after = try String(contentsOfFile: app.launchFile, encoding: .utf8)
        #expect(!after.contains(used))
        #expect(try inode(app.launchFile) != identity, "a new file, not the old one rewritten in place")
        #expect(try String(contentsOfFile: app.addressFile, encoding: .utf8).contains(used) == false)
        #expect(after.contains(#"name="token" value="\#(app.token)""#))
        #expect(try launch("token=\(used)&next=%2F").status == 403)
        // The new page opens the app, as the next app that hands it to xdg-open needs.
        #expect(try launch("token=\(app.token)&next=%2F").status == 200)
        let environment = daemon.clientEnvironment
        #expect(try SettingsAppAddress.root(environment: environment).absoluteString == "file://" + app.launchFile)
    }

    @Test("printed to a pipe (as to a unit's journal), the address has no token and says how to open the app")
    func theTokenIsNotPrintedToAPipe() throws {
        #expect(app.printed.hasPrefix("\(app.origin)/ (open it with: xdg-open "), "\(app.printed)")
        #expect(app.printed.contains(app.launchFile) && app.printed.hasSuffix(")"), "\(app.printed)")
        #expect(!app.printed.contains(app.firstToken))
        #expect(!app.printed.contains("token="))
    }

    @Test(arguments: ["localhost", "[::1]", "127.0.0.1"])
    func loopbackHostsAreServed(name: String) throws {
        #expect(try get("/api/overview", host: "\(name):\(app.port)").status == 200)
    }

    @Test(arguments: ["evil.example", "127.0.0.1.nip.io", "192.168.1.5", "localhost.evil.example"])
    func otherHostsAreRefusedEvenWithTheCookie(name: String) throws {
        #expect(try get("/api/overview", host: "\(name):\(app.port)").status == 403)
        #expect(try get("/api/overview", host: name).status == 403)
    }

    @Test func aLoopbackHostOnAnotherPortIsRefused() throws {
        #expect(try get("/api/overview", host: "127.0.0.1:\(app.port == 1 ? 2 : app.port - 1)").status == 403)
    }

    @Test func aChangeNeedsThePagesOwnOrigin() throws {
        let body = #"{"key":"k","type":"integer","text":"5"}"#
        #expect(try post("/api/domains/com.example.plain/keys", body, origin: nil).status == 403)
        #expect(try post("/api/domains/com.example.plain/keys", body, origin: "http://evil.example").status == 403)
        #expect(try post("/api/domains/com.example.plain/keys", body, origin: "http://localhost:\(app.port)").status == 403)
        #expect(try daemon.storedValues("com.example.plain") == nil, "nothing was written")
        let accepted = try post("/api/domains/com.example.plain/keys", body, origin: app.origin)
        #expect(accepted.status == 200)
        #expect(accepted.body == #"{"ok":true}"#)
        let socket = try daemon.connect()
        try socket.send(#"{"op":"get","domain":"com.example.plain","key":"k"}"#)
        #expect(try socket.readResponse().contains(#""value":5,"#))
    }

    @Test func theWebSocketUpgradeNeedsThePagesOwnOrigin() throws {
        let upgrade = { (origin: String?) throws -> LoopbackHTTP.Answer in
            var headers = ["Cookie": app.cookie, "Upgrade": "websocket", "Connection": "Upgrade",
                           "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13"]
            headers["Origin"] = origin
            var lines = ["GET \(app.prefix)/live HTTP/1.1", "Host: 127.0.0.1:\(app.port)"]
            for (name, value) in headers.sorted(by: { $0.key < $1.key }) { lines.append("\(name): \(value)") }
            return try LoopbackHTTP.exchange(port: app.port, lines.joined(separator: "\r\n") + "\r\n\r\n", untilHeaders: true)
        }
        // A refused upgrade is answered as Hummingbird answers any upgrade it does not make: 400, empty.
        for refused in [try upgrade(nil), try upgrade("http://evil.example")] {
            #expect(refused.status == 400)
            #expect(refused.body.isEmpty)
        }
        #expect(try upgrade(app.origin).status == 101)
    }

    @Test func badBodiesAreTurnedAwayWithAShortMessage() throws {
        let path = "/api/domains/com.example.plain/keys"
        let notJSON = try post(path, "{key:", origin: app.origin)
        #expect(notJSON.status == 400)
        #expect(notJSON.body.contains(#""code":"bad_request""#))
        let notObject = try post(path, "[1]", origin: app.origin)
        #expect(notObject.status == 400)
        let wrongType = try post(path, #"{"key":"k","type":"integer","text":"five"}"#, origin: app.origin)
        #expect(wrongType.status == 422)
        #expect(wrongType.body.contains("\\\"five\\\" is not a whole number"))
        let badInput = try post("/api/apps/com.example.app/rows", #"{"file":"Root.plist","index":1,"input":{"on":"yes"}}"#, origin: app.origin)
        #expect(badInput.status == 400)
        #expect(badInput.body.contains("input must be one of"))
        let huge = try post(path, #"{"key":"k","type":"string","text":""# + String(repeating: "x", count: 70_000) + #""}"#, origin: app.origin)
        #expect(huge.status == 413)
        let daemonRefusal = try post(path, #"{"key":"","type":"string","text":"x"}"#, origin: app.origin)
        #expect(daemonRefusal.status == 422)
        #expect(daemonRefusal.body.contains(#""code":"invalid_key""#))
        #expect(try daemon.storedValues("com.example.plain") == nil)
        #expect(try get("/api/overview").status == 200, "the app still serves")
    }

    @Test("a bundle's image that is a FIFO, a link to /dev/zero, a folder or past its cap is answered 404 at once and named in the log; the app goes on serving")
    func imagesThatAreNoRegularFileWithinTheCapAreMissing() throws {
        try HostileBundle.install(on: daemon)
        for name in HostileBundle.refused {
            let started = Date()
            let answer = try get("/api/apps/\(HostileBundle.domain)/images/\(name)")
            #expect(answer.status == 404, "\(name)")
            #expect(answer.body.contains(#""code":"not_found""#), "\(name)")
            #expect(Date().timeIntervalSince(started) < 5, "\(name) answered without waiting on the file")
            #expect(app.log.wait(for: "/Hostile.bundle/\(name) ", timeout: 5), "\(name) named in the log: \(app.log.text)")
        }
        let image = try get("/api/apps/\(HostileBundle.domain)/images/\(HostileBundle.image.name)")
        #expect(image.status == 200)
        #expect(image.header("Content-Type") == "image/png")
        #expect(image.body == HostileBundle.image.text)
        #expect(try get("/api/overview").status == 200)
        #expect(try get("/api/apps/\(HostileBundle.domain)").status == 200)
    }

    @Test func noAnswerCarriesACORSHeader() throws {
        for answer in [try get("/"), try get("/api/overview", headers: ["Origin": "http://evil.example"]), try get("/", cookie: false)] {
            #expect(!answer.headers.contains { $0.0.lowercased().hasPrefix("access-control-") })
        }
    }

    @Test func theAddressFileHoldsTheAddressWithTheNextTokenForTheUserOnly() throws {
        let attributes = try FileManager.default.attributesOfItem(atPath: app.addressFile)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try String(contentsOfFile: app.addressFile, encoding: .utf8) == app.origin + "/?token=" + app.token + "\n")
        #expect(app.token != app.firstToken, "the harness traded the first one")
        let environment = daemon.clientEnvironment
        // The launch page holds the token for the user only; the addresses apps open do not.
        let launch = app.launchFile
        #expect((try FileManager.default.attributesOfItem(atPath: launch)[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(try String(contentsOfFile: launch, encoding: .utf8).contains(#"name="token" value="\#(app.token)""#))
        #expect(try SettingsAppAddress.root(environment: environment).absoluteString == "file://" + launch)
        let pane = try SettingsAppAddress.forDomain("com.example.BridgeControl", environment: environment).absoluteString
        #expect(pane == "file://\(launch)#/apps/com.example.BridgeControl")
        #expect(!pane.contains(app.token))
        app.stop()
        #expect(!FileManager.default.fileExists(atPath: app.addressFile), "removed when the app stops")
        #expect(!FileManager.default.fileExists(atPath: launch), "removed when the app stops")
        #expect(throws: SettingsAppAddress.NotRunning.self) { try SettingsAppAddress.root(environment: environment) }
    }

    @Test func withoutTheDaemonTheAPISaysSoAndRecoversWhenItIsBack() throws {
        daemon.kill()
        let deadline = Date(timeIntervalSinceNow: 5)
        var answer = try get("/api/overview")
        while answer.status != 503 && Date() < deadline { answer = try get("/api/overview") }
        #expect(answer.status == 503)
        #expect(answer.body.contains(#""code":"unreachable""#))
        #expect(try get("/").status == 200, "the page itself is served, and says so")
        try daemon.restart()
        let back = Date(timeIntervalSinceNow: 5)
        while try get("/api/overview").status != 200 && Date() < back { usleep(20_000) }
        #expect(try get("/api/overview").status == 200)
    }

    @Test("the address file is never written where others could write: a runtime folder anyone may write stops the app")
    func anUntrustedRuntimeFolderIsRefused() throws {
        let folder = daemon.home + "/open-run"
        try FileManager.default.createDirectory(atPath: folder + "/defaultsd", withIntermediateDirectories: true)
        chmod(folder + "/defaultsd", 0o777)
        var environment = daemon.clientEnvironment
        environment["XDG_RUNTIME_DIR"] = folder
        let run = try FinishedRun.run(SettingsAppProcess.binary, ["--port", "0", "--socket", daemon.socketPath], environment: environment)
        #expect(run.status != 0)
        #expect((run.output + run.errors).contains("can be written by its group or others (mode 777)"), "\(run.output) \(run.errors)")
        #expect(!(run.output + run.errors).contains("listening"), "refused before it serves: \(run.output) \(run.errors)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder + "/defaultsd").isEmpty, "nothing written there")
    }
}
