import DefaultsCore

/// The order in which a key is resolved, as on Apple platforms:
/// the app domain, its suites in order, `NSGlobalDomain`, then the registration domain.
public struct SearchList: Sendable, Equatable {
    public var appDomain: DomainName?
    public var suites: [DomainName]

    public init(appDomain: DomainName?, suites: [DomainName] = []) {
        self.appDomain = appDomain
        self.suites = suites
    }

    /// The persistent domains to consult, in order, without duplicates.
    public var persistentDomains: [DomainName] {
        var seen: Set<DomainName> = []
        var result: [DomainName] = []
        for domain in [appDomain].compactMap({ $0 }) + suites + [.global] where seen.insert(domain).inserted {
            result.append(domain)
        }
        return result
    }

    public enum Source: Sendable, Equatable {
        case domain(DomainName)
        case registration
        public var name: String {
            switch self {
            case .domain(let d): d.rawValue
            case .registration: "NSRegistrationDomain"
            }
        }
    }

    /// Resolves `key`: the first persistent domain that has it, else the registration domain.
    public func resolve(
        _ key: String, values: (DomainName) throws(DefaultsError) -> [String: PlistValue],
        registration: [String: PlistValue]
    ) throws(DefaultsError) -> (PlistValue, Source)? {
        for domain in persistentDomains {
            if let value = try values(domain)[key] { return (value, .domain(domain)) }
        }
        if let value = registration[key] { return (value, .registration) }
        return nil
    }
}
