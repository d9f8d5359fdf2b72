/// The protocol's operations, by the name a request gives in `"op"` (docs/PROTOCOL.md): the one
/// list the daemon dispatches on and every client writes from. A new operation is added here,
/// and the compiler then finds the daemon's dispatch that must handle it.
///
/// ```swift
/// var writer = JSONWriter()
/// writer.beginObject(); writer.operation(.get); writer.key("domain"); writer.string("com.example.app"); writer.endObject()
/// JSON.request(.subscribe, ["all": true])   // {"op":"subscribe","all":true}
/// ```
public enum OperationName: String, CaseIterable, Sendable {
    case get, set, ping, hello, remove, apply, lookup, subscribe, unsubscribe, synchronize
    case register, registeredDefaults, domains, replaceDomain, deleteDomain, export, `import`, stats
    case bundleDefaults, describeBundle, registerBundle, listBundles
    case history, revert

    /// The operation a request names; nil for a name the protocol does not have (the caller
    /// then reads the text to word the error).
    public init?(of members: JSONMembers) {
        if let name = members.withPlainString("op", OperationName.init(utf8:)) {
            self = name
        } else if let text = members.stringValue("op"), let name = OperationName(rawValue: text) {
            self = name  // written with escapes; other text (unknown or not ASCII) ends here too
        } else {
            return nil
        }
    }

    /// The operation whose name is exactly these bytes.
    init?(utf8 text: UnsafeRawBufferPointer) {
        self.init(rawValue: String(decoding: text, as: UTF8.self))
    }
}

extension JSONWriter {
    /// Writes a request's `"op"` member.
    public mutating func operation(_ name: OperationName) {
        key("op")
        string(name.rawValue)
    }
}

extension JSON {
    /// A request as a JSON object: `members` with `"op"` naming the operation.
    public static func request(_ name: OperationName, _ members: [String: JSON] = [:]) -> JSON {
        var object = members
        object["op"] = .string(name.rawValue)
        return .object(object)
    }

    /// A request as one line of text, for scripts and benchmarks that build lines themselves.
    /// `"op"` comes first, then the members by name.
    public static func requestLine(_ name: OperationName, _ members: [String: JSON] = [:]) -> String {
        var writer = JSONWriter()
        writer.beginObject()
        writer.operation(name)
        for (key, member) in members.sorted(by: { $0.key < $1.key }) {
            writer.key(key)
            writer.json(member)
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }
}
