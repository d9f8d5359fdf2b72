import DefaultsCore

/// One table of search-order cases, run against the shared ``SearchList`` through the daemon's
/// `lookup` (DefaultsServerTests) and through the client's cache (DefaultsClientTests), so the
/// two uses are held to the same answers.
public enum SearchOrderCases {
    public static let app = try! DomainName("com.example.app")
    public static let suite = try! DomainName("group.example.shared")
    public static let other = try! DomainName("group.example.other")

    public static let list = SearchList(appDomain: app, suites: [suite, other])

    /// What the user stored in each persistent domain and in this machine's by-host variants.
    public static let stored: [DomainName: [String: PlistValue]] = [
        app: ["a": 1], suite: ["a": 2, "b": 2], other: ["b": 3, "c": 3], .global: ["c": 4, "d": 4],
        app.currentHost: ["j": 6], suite.currentHost: ["b": 7], DomainName.global.currentHost: ["a": 8, "d": 8, "k": 8],
    ]
    /// The Settings bundle layer of each domain (the global domain's is never consulted).
    public static let bundleDefaults: [DomainName: [String: PlistValue]] = [
        app: ["d": 10, "e": 10], suite: ["e": 20, "f": 20], .global: ["h": 30],
    ]
    public static let registration: [String: PlistValue] = ["a": 0, "f": 0, "h": 0, "i": 5]

    /// Key → the value and layer the search list resolves it to (nil: no layer has it).
    public static let expected: [(key: String, value: PlistValue?, layer: SearchList.Layer?)] = [
        // A domain's by-host variant comes just before it, not before the domains ahead of it.
        ("a", 1, .persistent(app)), ("b", 7, .persistent(suite.currentHost)), ("c", 3, .persistent(other)),
        ("d", 8, .persistent(DomainName.global.currentHost)), ("e", 10, .bundle(app)), ("f", 20, .bundle(suite)),
        ("h", 0, .registration), ("i", 5, .registration), ("j", 6, .persistent(app.currentHost)),
        ("k", 8, .persistent(DomainName.global.currentHost)), ("z", nil, nil),
    ]
}
