import DefaultsCore

/// What the daemon knows about one connection. Owned by the store's event loop.
final class Session {
    let id: UInt64
    var origin: Origin
    /// The app domain given in `hello`; the first domain of this connection's search list.
    var appDomain: DomainName?
    /// This connection's registration domain (`register`): volatile, last in the search list.
    var registration: [String: PlistValue] = [:]
    /// The domains this connection published registered defaults for (`register` with `domain`);
    /// they are forgotten when it closes. Every value published is in `registration` too, so its
    /// bounds bound them.
    var publishedDomains: Set<DomainName> = []
    /// Far more than an app registers (a few dozen keys, a few kilobytes).
    static let maximumRegisteredKeys = 4096
    static let maximumRegisteredBytes = 1 << 20
    /// An app publishes for its own domain and its suites.
    static let maximumPublishedDomains = 64

    init(id: UInt64, origin: Origin) {
        self.id = id
        self.origin = origin
    }

    /// The domain the request's `"domain"` and `"host"` parameters name, validated.
    func domain(of request: Request) throws(DefaultsError) -> DomainName {
        try DomainName(try request.string("domain"), host: try request.host())
    }

    /// The request's `"domain"`, for an operation that has no by-host form (Settings bundles
    /// belong to the domain every host sees): a `"host"` is refused.
    func anyHostDomain(of request: Request) throws(DefaultsError) -> DomainName {
        guard try request.host() == .any else {
            throw DefaultsError(.invalidParameter, "\(request.op) has no by-host form; leave out \"host\"")
        }
        return try request.domain("domain")
    }
}
