import DefaultsCore

/// The values a bundle registers: every specifier that stores a value (text field, toggle,
/// slider, multi-value, radio group, title value) with a `Key` and a `DefaultValue`, in every pane
/// reached from the root, shown on the chosen idiom. Values keep their property-list type exactly
/// (a toggle's `"YES"` stays a string). When a key is declared twice the later one in the walk
/// wins, as a `registerDefaults` loop over the panes does; this is the one place that rule is
/// kept, and a pane's rows show what it registers (``SettingsBundle/bundleDefault(of:)``).
///
/// A specifier with an `ApplicationGroupContainerIdentifier` (its own or its page's) registers in
/// that suite's domain instead of the app's.
///
/// ```swift
/// bundle.defaults.app["warpFactor"]            // .real(5)
/// bundle.defaults[suite: nil]["favoriteAlien"] // .string("Vulcan")
/// bundle.defaults.location(of: "rank")         // Root.plist[3]
/// ```
public struct BundleDefaults: Sendable, Hashable {
    /// The app's own domain.
    public private(set) var app: [String: PlistValue] = [:]
    /// Suite domains named by `ApplicationGroupContainerIdentifier`.
    public private(set) var suites: [DomainName: [String: PlistValue]] = [:]
    private var locations: [Slot: SpecifierLocation] = [:]

    private struct Slot: Hashable {
        var suite: DomainName?
        var key: String
    }

    public init() {}

    /// The defaults of one domain: nil for the app's own, else a suite.
    public subscript(suite suite: DomainName?) -> [String: PlistValue] {
        guard let suite else { return app }
        return suites[suite] ?? [:]
    }

    /// The specifier whose `DefaultValue` is registered for `key`.
    public func location(of key: String, suite: DomainName? = nil) -> SpecifierLocation? {
        locations[Slot(suite: suite, key: key)]
    }

    /// Every domain that has defaults: nil (the app's) first when it has any, then the suites by name.
    public var domains: [DomainName?] {
        (app.isEmpty ? [] : [nil]) + suites.keys.sorted().map { $0 }
    }

    public var isEmpty: Bool { app.isEmpty && suites.isEmpty }

    /// Registers `value` for `key`, replacing what an earlier declaration registered: called in
    /// walk order, so the later declaration wins.
    mutating func register(
        _ value: PlistValue, forKey key: String, suite: DomainName?, from location: SpecifierLocation
    ) {
        if let suite { suites[suite, default: [:]][key] = value } else { app[key] = value }
        locations[Slot(suite: suite, key: key)] = location
    }
}

extension SettingsBundle {
    /// The default a row of `specifier` shows until its key holds a value, and goes back to when
    /// reset: what ``defaults`` registers for the key in the specifier's domain, so every row of
    /// a key declared twice shows the one value the app reads. A key nothing registers (a page
    /// outside the walk, an unusable key or suite) shows the specifier's own `DefaultValue`.
    public func bundleDefault(of specifier: Specifier) -> PlistValue? {
        if specifier.hasUsableDomain, let key = specifier.key, let registered = defaults[suite: specifier.suite][key] {
            return registered
        }
        return specifier.defaultValue
    }
}
