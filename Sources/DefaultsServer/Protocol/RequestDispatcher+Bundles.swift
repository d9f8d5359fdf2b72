import DefaultsCore
import SettingsBundles

/// What `describeBundle` answers: a domain's Settings bundle, described with the values the app
/// reads.
extension RequestDispatcher {
    /// The resolved, localised pane tree of a domain's Settings bundle with current values.
    /// Runs on the loop: it reads the store.
    func describeBundle(_ request: Request, of domain: DomainName, in bundle: SettingsBundle) throws(DefaultsError) -> Reply {
        let path = bundle.directory.path
        // Each row's value as the app reads it from its domain, in the search list's order for
        // that domain; the bundle's own default is the describer's to fill in.
        var layers: [DomainName: [(isForced: Bool, values: [String: PlistValue])]] = [:]
        for owner in [domain] + bundle.specifiers.compactMap(\.suite) where layers[owner] == nil {
            var found: [(isForced: Bool, values: [String: PlistValue])] = []
            for layer in SearchList.layers(of: owner) {
                switch layer {
                case .managed(let forced): found.append((true, store.managed.forced[forced] ?? [:]))
                case .persistent(let variant): found.append((false, try store.values(of: variant)))
                case .bundle, .argument, .registration: break
                }
            }
            layers[owner] = found
        }
        let lookup: ValueLookup = { key, suite in
            let owner = suite ?? domain
            for layer in layers[owner] ?? [] {
                if let value = layer.values[key] { return StoredValue(value, origin: owner.rawValue, isForced: layer.isForced) }
            }
            return nil
        }
        let pane: PaneDescription?
        if let file = try request.optionalString("pane") {
            let name = file.hasSuffix(".plist") ? file : file + ".plist"
            guard bundle.pages[name] != nil else {
                throw DefaultsError(.invalidParameter, "the bundle has no pane \(file) (panes: \(bundle.pages.keys.sorted().joined(separator: ", ")))")
            }
            pane = bundle.describe(pane: name, lookup: lookup)
        } else {
            pane = bundle.describe(lookup: lookup)
        }
        var tree = JSONWriter()
        if let pane { pane.writeJSON(into: &tree) } else { tree.null() }
        var fields: [(String, Reply.Field)] = [
            ("path", .string(path)),
            ("language", .string(bundle.language)),
            ("languages", .strings(bundle.availableLanguages)),
            ("diagnostics", .strings(bundle.diagnostics.map { "\($0)" })),
            ("pane", .raw(tree.bytes)),
        ]
        if try request.bool("text") == true { fields.append(("text", .string(pane?.renderedText() ?? ""))) }
        return Reply(fields)
    }
}
