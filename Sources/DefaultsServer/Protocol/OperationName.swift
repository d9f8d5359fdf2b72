import DefaultsCore

/// The protocol's operations, by the name a request gives in `"op"` (docs/PROTOCOL.md).
///
/// A request's op is matched once, when the line is read, and dispatched on as this type.
enum OperationName: String, CaseIterable, Sendable {
    case get, set, ping, hello, remove, apply, lookup, subscribe, unsubscribe, synchronize
    case register, domains, replaceDomain, deleteDomain, export, `import`, stats
    case bundleDefaults, describeBundle, registerBundle, listBundles

    /// The operation a request names; nil for a name the protocol does not have (the caller
    /// then reads the text to word the error).
    init?(of members: JSONMembers) {
        guard let text = members.stringValue("op"), let name = OperationName(rawValue: text) else { return nil }
        self = name
    }
}
