import DefaultsCore

/// The protocol's operations, by the name a request gives in `"op"` (docs/PROTOCOL.md).
///
/// A request's op is matched once, when the line is read, and dispatched on as this type.
/// Names of up to seven bytes are matched as one word each (``JSONMembers/shortStringWord(_:)``),
/// commonest first, so reading `"op":"set"` builds no string and compares no text.
enum OperationName: String, CaseIterable, Sendable {
    case get, set, ping, hello, remove, apply, lookup, subscribe, unsubscribe, synchronize
    case register, domains, replaceDomain, deleteDomain, export, `import`, stats
    case bundleDefaults, describeBundle, registerBundle, listBundles

    /// The operation a request names; nil for a name the protocol does not have (the caller
    /// then reads the text to word the error).
    init?(of members: JSONMembers) {
        if let word = members.shortStringWord("op") {
            for (candidate, name) in OperationName.shortNames where candidate == word {
                self = name
                return
            }
            return nil
        }
        guard let text = members.stringValue("op"), let name = OperationName(rawValue: text) else { return nil }
        self = name
    }

    private static let shortNames: [(word: UInt64, name: OperationName)] = allCases.compactMap { name in
        let utf8 = Array(name.rawValue.utf8)
        guard utf8.count <= 7 else { return nil }
        return (utf8.withUnsafeBytes { JSONMembers.word($0.baseAddress!, count: utf8.count) }, name)
    }
}
