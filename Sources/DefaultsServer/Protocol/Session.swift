import DefaultsCore

/// What the daemon knows about one connection. Owned by the store's event loop.
final class Session {
    let id: UInt64
    var origin: Origin
    /// The app domain given in `hello`; the first domain of this connection's search list.
    var appDomain: DomainName?
    /// This connection's registration domain (`register`): volatile, last in the search list.
    var registration: [String: PlistValue] = [:]

    init(id: UInt64, origin: Origin) {
        self.id = id
        self.origin = origin
    }

    /// The request's `"domain"` parameter, validated.
    func domain(of request: Request) throws(DefaultsError) -> DomainName {
        try DomainName(try request.string("domain"))
    }
}
