import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdCore
import NIOConcurrencyHelpers

/// The secrets of one run of the Settings app, made when it starts.
///
/// - `launch` opens the app, once (``LaunchToken``): it is in two files only the user can read
///   (`settings-url`, and `settings.html`, which a browser opens without the token ever being on
///   a command line), and printed only to a terminal. It is traded for the session.
/// - `prefix` is a random path every page, asset and API of the app lies under, and the only
///   path the session cookie is sent to. Browsers keep cookies apart by host, not by port, so a
///   cookie for `/` would also reach any other server on 127.0.0.1 that the person visits.
/// - `sessionSecret` is the cookie's value.
struct SessionKeys: Sendable {
    let launch: LaunchToken
    let prefix: String
    let sessionSecret: String

    static func random() -> SessionKeys {
        SessionKeys(launch: LaunchToken(), prefix: "/" + hex(12), sessionSecret: hex(16))
    }

    /// `bytes` bytes from the system's random generator, in hex.
    static func hex(_ bytes: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        return SystemText.hex((0..<bytes).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}

/// The launch token: 128 random bits, in hex, good for one trade for the session. A token once
/// traded opens nothing again, so one copied from a terminal's scrollback, a browser's history
/// or a log is worth nothing; the trade replaces it at once with a fresh one, which the app
/// writes where the old one was (``SettingsServer/replaceLaunchToken(with:)``), so the launch
/// page opens the app again for the next app or person that opens it.
///
/// ```swift
/// let token = LaunchToken()
/// token.trade(token.value) { fresh in write(fresh) }   // true; `write` gets the next token
/// token.trade(old) { _ in }                            // false: traded already
/// ```
final class LaunchToken: Sendable {
    private let current: NIOLockedValueBox<String>

    init() { current = NIOLockedValueBox(SessionKeys.hex(16)) }

    /// The token not yet traded.
    var value: String { current.withLockedValue { $0 } }

    /// `body` run with the token not yet traded, which no trade replaces meanwhile: the start
    /// writes the first token's files through it.
    func withValue<T>(_ body: (String) throws -> T) rethrows -> T {
        try current.withLockedValue { try body($0) }
    }

    /// Whether `given` is the token not yet traded. When it is, it is replaced, and `replace`
    /// gets the new one under the lock: a second trade of the same token waits, then finds it
    /// gone, and no file is ever left holding an older token than another. `replace` must not
    /// read ``value`` (the lock is not reentrant).
    func trade(_ given: String, replace: (String) -> Void) -> Bool {
        current.withLockedValue { token in
            guard TokenRules.same(given, token) else { return false }
            token = SessionKeys.hex(16)
            replace(token)
            return true
        }
    }
}

/// Who may use the Settings app: any local user can reach a loopback port, so every request
/// must prove it comes from the person who started the app, through a browser pointed at it.
///
/// - The `Host` must be a loopback name or address with the app's port (a page from another site
///   whose name was made to resolve to 127.0.0.1, DNS rebinding, is refused).
/// - The launch token is traded for the session, once (``LaunchToken``): from an address with
///   `?token=` (answered with a redirect to the same page under the prefix, without the token)
///   or posted by `settings.html` to `/launch` (answered with a page that moves on to the prefix
///   itself, so that the move is the app's own and the strict cookie goes with it). Either answer
///   sets the session as an `HttpOnly; SameSite=Strict` cookie whose path is the prefix. A token
///   traded already gets 403, as a wrong one does; the browser that traded it keeps its cookie,
///   so a reload there still works.
/// - Every other request must lie under the prefix and carry that cookie. Otherwise: 403.
/// - A request that changes something (any method but GET and HEAD) and the WebSocket upgrade
///   must carry the `Origin` of the page itself. No CORS header is ever sent.
///
/// ```swift
/// router.add(middleware: AccessGuard(keys: keys, port: port, replaced: { fresh in write(fresh) }))
/// ```
struct AccessGuard<Context: RequestContext>: RouterMiddleware {
    let keys: SessionKeys
    /// The port the app listens on, known once it is bound (tests bind port 0).
    let port: NIOLockedValueBox<Int>
    /// Writes the token that replaces a traded one where the traded one was (``LaunchToken``).
    let replaced: @Sendable (String) -> Void

    static var loopbackNames: Set<String> { ["127.0.0.1", "localhost", "[::1]"] }
    static var cookieName: String { "defaultsd-settings" }
    /// The largest `/launch` form read: a token and a path.
    static var maximumLaunchBytes: Int { 4096 }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authority = request.head.authority, isLoopback(authority) else { return Self.forbidden }
        if let given = request.uri.queryParameters["token"] {
            guard keys.launch.trade(String(given), replace: replaced) else { return Self.forbidden }
            var response = Response(status: .seeOther, headers: [
                .location: keys.prefix + TokenRules.withoutToken(path: request.uri.path, query: request.uri.query),
                .cacheControl: "no-store",
            ])
            setSession(&response)
            return response
        }
        if request.method == .post, request.uri.path == "/launch" { return try await launch(request) }
        let path = request.uri.path
        guard path == keys.prefix || path.hasPrefix(keys.prefix + "/") else { return Self.forbidden }
        guard let cookie = request.cookies[Self.cookieName], TokenRules.same(cookie.value, keys.sessionSecret) else {
            return Self.forbidden
        }
        let changes = request.method != .get && request.method != .head
        let upgrades = request.headers[.upgrade]?.lowercased() == "websocket"
        if changes || upgrades {
            guard request.headers[.origin] == "http://" + authority else { return Self.forbidden }
        }
        return try await next(request, context)
    }

    /// `settings.html`'s form: `token` and `next` (the page to open, `/apps/<domain>`).
    private func launch(_ request: Request) async throws -> Response {
        guard let body = try? await request.body.collect(upTo: Self.maximumLaunchBytes) else { return Self.forbidden }
        let form = TokenRules.form(String(buffer: body))
        guard let given = form["token"], keys.launch.trade(given, replace: replaced) else { return Self.forbidden }
        let target = keys.prefix + TokenRules.safePath(form["next"] ?? "/")
        var headers = SettingsServer.securityHeaders
        headers[.contentType] = "text/html; charset=utf-8"
        let page = #"<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=\#(target)"><title>Settings</title>"#
        var response = Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
        setSession(&response)
        return response
    }

    private func setSession(_ response: inout Response) {
        response.setCookie(
            Cookie(name: Self.cookieName, value: keys.sessionSecret, path: keys.prefix + "/", httpOnly: true, sameSite: .strict))
    }

    static var forbidden: Response {
        Response(status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "forbidden\n")))
    }

    private func isLoopback(_ authority: String) -> Bool {
        guard let colon = authority.lastIndex(of: ":"), let given = Int(authority[authority.index(after: colon)...]) else { return false }
        return Self.loopbackNames.contains(String(authority[..<colon]).lowercased()) && given == port.withLockedValue { $0 }
    }
}

/// The token's rules, apart from the middleware so they can be tested alone.
enum TokenRules {
    /// The same path and query, without `token`.
    static func withoutToken(path: String, query: String?) -> String {
        let kept = (query ?? "").split(separator: "&").filter { !$0.hasPrefix("token=") && $0 != "token" }
        return path + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// Compares in time that does not depend on where the first difference is.
    static func same(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8), b = Array(expected.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The members of an `application/x-www-form-urlencoded` body.
    static func form(_ body: String) -> [String: String] {
        var members: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String? { text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding }
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { continue }
            members[name] = value
        }
        return members
    }

    /// A page of the app to move to: an absolute path of printable ASCII, not `//` (another
    /// host), and without a character that could end the attribute it is written into
    /// (`"`, `'`, `<`, `>`, a backslash or a backquote); anything else is the root.
    static func safePath(_ path: String) -> String {
        let refused = Set("\"'<>\\`".utf8)
        let safe = path.hasPrefix("/") && !path.hasPrefix("//") && path.utf8.count <= 2048
            && path.utf8.allSatisfy { (0x21...0x7E).contains($0) && !refused.contains($0) }
        return safe ? path : "/"
    }
}
