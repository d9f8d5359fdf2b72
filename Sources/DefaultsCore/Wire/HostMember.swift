/// How a by-host domain is named on the wire, one rule for every request, answer and event:
/// `"domain":"com.example.app","host":"current"`; without `host` (or with `null`), the domain
/// every machine sees.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject()
/// writer.domain(try DomainName("com.example.app").currentHost)
/// writer.endObject()   // {"domain":"com.example.app","host":"current"}
/// ```
extension DomainName.Host {
    /// The `host` member's one value: a daemon serves only the machine it runs on.
    public static let currentWireValue = "current"

    /// The host a `host` member names; nil for a member that names none this daemon serves.
    public init?(wire json: JSON?) {
        switch json {
        case nil, .null?: self = .any
        case .string(DomainName.Host.currentWireValue)?: self = .current
        default: return nil
        }
    }

    /// The refusal of any other `host`.
    public static let invalidMessage =
        "\"host\" must be \"current\": one machine's daemon serves only its own host's domains"
}

extension JSONWriter {
    /// Writes the `domain` member, followed by `"host":"current"` for a by-host domain.
    public mutating func domain(_ domain: DomainName) {
        key(literal: "domain"); string(domain.rawValue)
        host(domain.host)
    }

    /// Writes `"host":"current"` for a by-host request (`subscribe`, `domains`); nothing for any host.
    public mutating func host(_ host: DomainName.Host) {
        if host == .current { key(literal: "host"); string(DomainName.Host.currentWireValue) }
    }
}
