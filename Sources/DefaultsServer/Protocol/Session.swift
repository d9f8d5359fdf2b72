import DefaultsCore

/// What the daemon knows about one connection. Owned by the store's event loop.
final class Session {
    let id: UInt64
    var origin: Origin
    /// The app domain given in `hello`; the first domain of this connection's search list.
    var appDomain: DomainName?
    /// This connection's registration domain (`register`): volatile, last in the search list.
    var registration: [String: PlistValue] = [:]
    /// The domain this connection named last. A client names the same domain request after
    /// request, and reusing it skips validating and hashing the name again.
    private var lastDomain: DomainName?

    init(id: UInt64, origin: Origin) {
        self.id = id
        self.origin = origin
    }

    /// The request's `"domain"` parameter, validated, or this connection's last domain when
    /// it names the same one.
    func domain(of request: Request) throws(DefaultsError) -> DomainName {
        // Compared with the request's bytes, without building a string of the name.
        if let lastDomain, request.parameters.string("domain", is: lastDomain.rawValue) { return lastDomain }
        let domain = try DomainName(try request.string("domain"))
        lastDomain = domain
        return domain
    }
}
