import DefaultsCore
import SettingsBundles

/// The keys the installed Settings bundles show in secure text fields, by domain: their values
/// are secret, so the change journal records that they changed and never what they held. A
/// value derived from the bundles at each rebuild (``InstalledBundles/rebuildDefaults()``) and
/// handed to the journal then, so that recording a change looks a key up in it, with no call
/// into the bundles.
///
/// ```swift
/// let secure = SecureKeys(bundles.checksByDomain)
/// secure.keys(of: try DomainName("com.example.mail"))   // ["password"]
/// ```
struct SecureKeys: Sendable, Equatable {
    /// By the domain's name for any host: a by-host variant has its domain's secure keys.
    private var byDomain: [DomainName: Set<String>] = [:]

    /// `byDomain`: each domain's secure keys, by its name for any host.
    init(byDomain: [DomainName: Set<String>] = [:]) {
        self.byDomain = byDomain.filter { !$0.value.isEmpty }
    }

    /// The secure keys of every domain a bundle describes, each bundle read with the suite it
    /// names the domain by.
    init(_ checksByDomain: [DomainName: [(bundle: SettingsBundle, suite: DomainName?)]]) {
        self.init(byDomain: checksByDomain.mapValues { checks in
            checks.reduce(into: Set<String>()) { $0.formUnion($1.bundle.secureKeys(suite: $1.suite)) }
        })
    }

    /// The secure keys of `domain` or of its by-host variant; empty for a domain with none.
    func keys(of domain: DomainName) -> Set<String> {
        byDomain.isEmpty ? [] : byDomain[domain.anyHost] ?? []
    }
}
