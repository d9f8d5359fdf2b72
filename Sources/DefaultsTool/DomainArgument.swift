import DefaultsCore

/// A domain as written on the command line, with the two names macOS shows for it.
public struct DomainArgument: Equatable, Sendable {
    public let domain: DomainName
    /// As `read`, `find` and write errors show it: `Apple Global Domain` for the global domain.
    public let displayName: String
    /// As the "domain/default pair" and "not found" errors show it: `kCFPreferencesAnyApplication`.
    public let rawName: String

    public var isGlobal: Bool { domain.anyHost == .global }

    /// `-g`, `-globalDomain`, `NSGlobalDomain` and `Apple Global Domain` name the global domain.
    public static let globalSpellings: Set<String> = ["-g", "-globalDomain", "NSGlobalDomain", "Apple Global Domain"]

    /// The domain `text` names, of the variant `host` names (`-currentHost`).
    public init(_ text: String, host: DomainName.Host = .any) throws(ToolError) {
        if DomainArgument.globalSpellings.contains(text) {
            self.init(domain: host == .current ? DomainName.global.currentHost : .global)
            return
        }
        let domain: DomainName
        do throws(DefaultsError) {
            domain = try DomainName(text, host: host)
        } catch {
            throw ToolError.failure("Domain \(text) is not a valid domain name: \(error.message)")
        }
        self.init(domain: domain)
    }

    public init(domain: DomainName) {
        self.domain = domain
        let isGlobal = domain.anyHost == .global
        displayName = isGlobal ? "Apple Global Domain" : domain.rawValue
        rawName = isGlobal ? "kCFPreferencesAnyApplication" : domain.rawValue
    }
}
