import Hummingbird
import HummingbirdCore
import NIOConcurrencyHelpers

/// Who may use the Settings app: any local user can reach a loopback port, so every request
/// must prove it comes from the person who started the app, through a browser pointed at it.
///
/// - The `Host` must be a loopback name or address with the app's port (a page from another site
///   whose name was made to resolve to 127.0.0.1, DNS rebinding, is refused).
/// - The first request carries the token (`?token=`, from the printed address or the address
///   file); the answer sets it as an `HttpOnly; SameSite=Strict` cookie and redirects to the same
///   address without it, so the token leaves the address bar and the history.
/// - Every other request needs that cookie. Without it: 403 and nothing else.
/// - A request that changes something (any method but GET and HEAD) and the WebSocket upgrade
///   must carry the `Origin` of the page itself. No CORS header is ever sent.
///
/// ```swift
/// router.add(middleware: AccessGuard(token: token, port: port))
/// ```
struct AccessGuard<Context: RequestContext>: RouterMiddleware {
    let token: String
    /// The port the app listens on, known once it is bound (tests bind port 0).
    let port: NIOLockedValueBox<Int>

    static var loopbackNames: Set<String> { ["127.0.0.1", "localhost", "[::1]"] }

    var cookieName: String { "defaultsd-settings-\(port.withLockedValue { $0 })" }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let authority = request.head.authority, isLoopback(authority) else { return Self.forbidden }
        if let given = request.uri.queryParameters["token"] {
            guard TokenRules.same(String(given), token) else { return Self.forbidden }
            let location = TokenRules.withoutToken(path: request.uri.path, query: request.uri.query)
            var response = Response(status: .seeOther, headers: [.location: location, .cacheControl: "no-store"])
            response.setCookie(Cookie(name: cookieName, value: token, path: "/", httpOnly: true, sameSite: .strict))
            return response
        }
        guard let cookie = request.cookies[cookieName], TokenRules.same(cookie.value, token) else { return Self.forbidden }
        let changes = request.method != .get && request.method != .head
        let upgrades = request.headers[.upgrade]?.lowercased() == "websocket"
        if changes || upgrades {
            guard request.headers[.origin] == "http://" + authority else { return Self.forbidden }
        }
        return try await next(request, context)
    }

    static var forbidden: Response {
        Response(status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8"], body: .init(byteBuffer: ByteBuffer(string: "forbidden\n")))
    }

    private func isLoopback(_ authority: String) -> Bool {
        guard let colon = authority.lastIndex(of: ":"), let given = Int(authority[authority.index(after: colon)...]) else { return false }
        return Self.loopbackNames.contains(String(authority[..<colon]).lowercased()) && given == port.withLockedValue { $0 }
    }
}

/// The token's two rules, apart from the middleware so they can be tested alone.
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
}
