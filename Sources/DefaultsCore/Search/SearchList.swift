/// Where a key is looked for, in Apple's order, written once for the daemon's `lookup` and the
/// client's cache:
///
/// 1. the managed (forced) preferences of the persistent domains, in their order: what an
///    administrator forces wins over everything,
/// 2. `NSArgumentDomain` (a client's command-line `-key value` pairs; the daemon has none),
/// 3. the persistent domains, each once: the app domain, its suites in order, `NSGlobalDomain`,
///    each one's current-host (by-host) variant just before the variant every host sees,
/// 4. the Settings bundle defaults of those persistent domains, `NSGlobalDomain` excepted,
/// 5. the registration domain.
///
/// ```swift
/// var list = SearchList(appDomain: try DomainName("com.example.app"))
/// list.addSuite(try DomainName("group.example.shared"))
/// let found = list.resolve { layer in values[layer]?["warpFactor"] }   // (value, layer)
/// found?.layer.kind                                                   // "persistent", "bundle", ...
/// ```
public struct SearchList: Sendable, Hashable {
    /// One place a value can come from.
    public enum Layer: Sendable, Hashable {
        /// The keys an administrator forces on that domain.
        case managed(DomainName)
        case argument
        case persistent(DomainName)
        /// The `DefaultValue`s Settings bundles give that domain.
        case bundle(DomainName)
        case registration

        /// The domain `lookup` names: the domain, `NSArgumentDomain` or `NSRegistrationDomain`
        /// (a by-host domain's answer adds `"host":"current"`).
        public var name: String {
            switch self {
            case .argument: "NSArgumentDomain"
            case .managed(let domain), .persistent(let domain), .bundle(let domain): domain.rawValue
            case .registration: "NSRegistrationDomain"
            }
        }

        /// The persistent domain the layer belongs to; nil for the volatile ones.
        public var domain: DomainName? {
            switch self {
            case .managed(let domain), .persistent(let domain), .bundle(let domain): domain
            case .argument, .registration: nil
            }
        }

        /// The `layer` of a `lookup` answer.
        public var kind: String {
            switch self {
            case .managed: "managed"
            case .argument: "argument"
            case .persistent: "persistent"
            case .bundle: "bundle"
            case .registration: "registration"
            }
        }
    }

    public private(set) var appDomain: DomainName?
    public private(set) var suites: [DomainName]
    /// Whether `NSArgumentDomain` is searched first (a client's list; the daemon's has none).
    public var searchesArguments: Bool { didSet { layers = computeLayers() } }
    /// Every layer, in order; computed once per change of the list, since a cache resolves often.
    public private(set) var layers: [Layer] = []

    public init(appDomain: DomainName?, suites: [DomainName] = [], searchesArguments: Bool = false) {
        self.appDomain = appDomain
        self.suites = suites
        self.searchesArguments = searchesArguments
        layers = computeLayers()
    }

    /// The persistent domains, in order, without duplicates: the app domain, the suites,
    /// `NSGlobalDomain`, as every host sees them.
    public var persistentDomains: [DomainName] { storedDomains.filter { !$0.isCurrentHost } }

    /// Every domain a persistent layer reads, by-host variants included, in order: what a
    /// client loads to resolve along the list.
    public var storedDomains: [DomainName] {
        layers.compactMap { if case .persistent(let domain) = $0 { domain } else { nil } }
    }

    /// Adds a suite after the app domain and the earlier suites, before `NSGlobalDomain`, as
    /// `UserDefaults.addSuite(named:)` does; the app domain, the global domain and a suite
    /// already in the list are ignored. Answers whether the list changed.
    @discardableResult
    public mutating func addSuite(_ suite: DomainName) -> Bool {
        guard suite != appDomain, suite != .global, !suites.contains(suite) else { return false }
        suites.append(suite)
        layers = computeLayers()
        return true
    }

    public mutating func removeSuite(_ suite: DomainName) {
        suites.removeAll { $0 == suite }
        layers = computeLayers()
    }

    /// The layers one domain contributes to any list, in the list's order: what is forced on it,
    /// its by-host variant, its own values, its Settings bundle defaults. For `read-effective`
    /// and `describeBundle`, which show one domain as an app reads it.
    public static func layers(of domain: DomainName) -> [Layer] {
        SearchList(appDomain: domain.anyHost).layers.filter { $0.domain?.anyHost == domain.anyHost }
    }

    /// Whether a change to `domain` can change what this list resolves.
    public func includes(_ domain: DomainName) -> Bool { layers.contains(.persistent(domain)) }

    /// The first layer that has a value, with that value. `lookup` answers a layer's value of
    /// the key, or nil when the layer does not have it.
    public func resolve<Failure: Error>(
        _ lookup: (Layer) throws(Failure) -> PlistValue?
    ) throws(Failure) -> (value: PlistValue, layer: Layer)? {
        for layer in layers {
            if let value = try lookup(layer) { return (value, layer) }
        }
        return nil
    }

    private func computeLayers() -> [Layer] {
        var seen: Set<DomainName> = []
        let persistent = ([appDomain].compactMap { $0 } + suites + [.global]).filter { seen.insert($0).inserted }
        return persistent.map(Layer.managed) + (searchesArguments ? [.argument] : [])
            + persistent.flatMap { $0.hasByHostVariant ? [Layer.persistent($0.currentHost), .persistent($0)] : [.persistent($0)] }
            + persistent.filter { $0 != .global }.map(Layer.bundle) + [.registration]
    }
}
