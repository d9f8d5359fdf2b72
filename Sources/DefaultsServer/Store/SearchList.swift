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
        /// A value stored in a persistent domain.
        case domain(DomainName)
        /// The `DefaultValue` of a Settings bundle specifier for that domain.
        case bundle(DomainName)
        case registration

        public var name: String {
            switch self {
            case .domain(let d), .bundle(let d): d.rawValue
            case .registration: "NSRegistrationDomain"
            }
        }

        /// `persistent`, `bundle` or `registration`, as `lookup` answers it.
        public var layer: String {
            switch self {
            case .domain: "persistent"
            case .bundle: "bundle"
            case .registration: "registration"
            }
        }
    }

    /// Resolves `key`: a value the user set (the first persistent domain that has it), else a
    /// Settings bundle's `DefaultValue` for the app domain or a suite, else the registration domain.
    public func resolve(
        _ key: String, values: (DomainName) throws(DefaultsError) -> [String: PlistValue],
        bundleDefaults: (DomainName) -> [String: PlistValue] = { _ in [:] },
        registration: [String: PlistValue]
    ) throws(DefaultsError) -> (PlistValue, Source)? {
        for domain in persistentDomains {
            if let value = try values(domain)[key] { return (value, .domain(domain)) }
        }
        for domain in persistentDomains where domain != .global {
            if let value = bundleDefaults(domain)[key] { return (value, .bundle(domain)) }
        }
        if let value = registration[key] { return (value, .registration) }
        return nil
    }
}
