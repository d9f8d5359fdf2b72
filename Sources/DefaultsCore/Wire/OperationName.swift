import Glibc

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
    case register, domains, replaceDomain, deleteDomain, export, `import`, stats
    case bundleDefaults, describeBundle, registerBundle, listBundles

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

    /// The operation whose name is exactly these bytes. Every request is matched here, so it
    /// compares bytes against a table made once: the synthesized `init(rawValue:)` would make a
    /// `String` of them first and then compare it with each name in turn, which runs through
    /// about as much code as parsing the whole line.
    init?(utf8 text: UnsafeRawBufferPointer) {
        for (name, utf8) in OperationName.namesUTF8 where utf8.count == text.count {
            let same = utf8.withUnsafeBytes { known in
                // Only an empty buffer lacks an address, and the counts are equal: both are empty.
                guard let knownStart = known.baseAddress, let textStart = text.baseAddress else { return true }
                return memcmp(knownStart, textStart, text.count) == 0
            }
            if same {
                self = name
                return
            }
        }
        return nil
    }

    /// Every operation with its name's bytes, in the order declared (the most frequent first).
    private static let namesUTF8: [(OperationName, [UInt8])] = allCases.map { ($0, Array($0.rawValue.utf8)) }
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
