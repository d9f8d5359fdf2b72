import DefaultsCore

/// The one rule for where a roaming key lives in etcd and what its etcd value holds.
///
/// A key `k` of domain `d` is the etcd key `<prefix><d>/<escaped k>`: in the key, `%` becomes
/// `%25` and `/` becomes `%2F`, so a key's slashes never look like the domain's separator (a
/// domain name has no `/`). The value is one JSON object: `{"host":"<writer>","value":<wire JSON>}`,
/// the value as the protocol encodes it, all eight types kept; a removed key is
/// `{"host":"<writer>","removed":true}`, so the removal, and who made it, reaches machines that
/// were away (a deleted etcd key would leave them nothing to compare with).
///
/// ```swift
/// let keys = RoamingKeys(prefix: "/defaultsd/ada/")
/// keys.etcdKey(domain: try DomainName("com.example.app"), key: "a/b")   // "/defaultsd/ada/com.example.app/a%2Fb"
/// ```
struct RoamingKeys: Sendable, Hashable {
    let prefix: String

    func etcdKey(domain: DomainName, key: String) -> String {
        prefix + domain.rawValue + "/" + RoamingKeys.escape(key)
    }

    /// Where a domain's keys start.
    func domainPrefix(_ domain: DomainName) -> String { prefix + domain.rawValue + "/" }

    /// The domain and key an etcd key names; nil for a key this layout did not make.
    func locate(_ etcdKey: String) -> (domain: DomainName, key: String)? {
        guard etcdKey.hasPrefix(prefix) else { return nil }
        let rest = etcdKey.dropFirst(prefix.count)
        guard let slash = rest.firstIndex(of: "/"),
            let domain = try? DomainName(String(rest[..<slash])),
            let key = RoamingKeys.unescape(rest[rest.index(after: slash)...]),
            (try? DefaultsKey.validate(key)) != nil
        else { return nil }
        return (domain, key)
    }

    static func escape(_ key: String) -> String {
        guard key.contains(where: { $0 == "%" || $0 == "/" }) else { return key }
        var escaped = ""
        for character in key {
            switch character {
            case "%": escaped += "%25"
            case "/": escaped += "%2F"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static func unescape(_ escaped: Substring) -> String? {
        guard escaped.contains("%") else { return String(escaped) }
        var key = ""
        var rest = escaped[...]
        while let percent = rest.firstIndex(of: "%") {
            key += rest[..<percent]
            let code = rest[percent...].prefix(3)
            switch code {
            case "%25": key += "%"
            case "%2F", "%2f": key += "/"
            default: return nil
            }
            rest = rest[rest.index(percent, offsetBy: 3)...]
        }
        return key + rest
    }

    // MARK: - Values

    /// A key's etcd value: the new value, or a removal, and the host that wrote it.
    struct Entry: Sendable, Hashable {
        var value: PlistValue?
        var host: String
    }

    static func encode(_ entry: Entry) -> String {
        var writer = JSONWriter(capacity: 64)
        writer.beginObject()
        writer.key(literal: "host"); writer.string(entry.host)
        if let value = entry.value {
            writer.key(literal: "value"); writer.value(value)
        } else {
            writer.key(literal: "removed"); writer.bool(true)
        }
        writer.endObject()
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    /// The entry an etcd value holds; nil when it is not one (written by something else).
    static func decode(_ text: String) -> Entry? {
        guard let json = try? JSONParser.parse(text), case .string(let host)? = json["host"] else { return nil }
        if json["removed"] == .bool(true) { return Entry(value: nil, host: host) }
        guard let encoded = json["value"], let value = try? WireValue.decode(encoded) else { return nil }
        return Entry(value: value, host: host)
    }

    /// A digest of a key's value (nil: absent) as this machine last exchanged it with etcd,
    /// kept in the journal so that a start can tell which keys changed while no journal
    /// recorded it (a crash between a domain file and the journal, or an edit while the daemon
    /// was stopped). FNV-1a over the value's wire form: change detection, not security.
    static func digest(_ value: PlistValue?) -> UInt64 {
        guard let value else { return 1 }
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in WireValue.encode(value) {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return hash
    }
}
