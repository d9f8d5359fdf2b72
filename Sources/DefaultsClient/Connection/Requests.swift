import DefaultsCore

/// The request lines the client sends (docs/PROTOCOL.md), newline included. No `id`: responses
/// come in request order, and the driver matches them by position.
enum Requests {
    static func hello(client: String, appDomain: String) -> [UInt8] {
        line { writer in
            writer.operation(.hello)
            writer.key("client"); writer.string(client)
            if (try? DomainName(appDomain)) != nil { writer.key("appDomain"); writer.string(appDomain) }
        }
    }

    /// Registers defaults for `domain`: in this connection's registration domain, and shown to
    /// other clients as the domain's registered defaults while the connection lasts.
    static func register(_ values: [String: PlistValue], for domain: DomainName) -> [UInt8] {
        line { writer in
            writer.operation(.register)
            writer.domain(domain)
            writer.key("defaults"); writer.dictionary(values)
        }
    }

    /// Subscribes to `domains`, all of the variant `host` names (one `host` per request).
    static func subscribe(_ domains: [DomainName], host: DomainName.Host) -> [UInt8] {
        line { writer in
            writer.operation(.subscribe)
            writer.key("domains"); writer.beginArray()
            for domain in domains { writer.string(domain.rawValue) }
            writer.endArray()
            writer.host(host)
        }
    }

    static func get(_ domain: DomainName) -> [UInt8] {
        line { writer in
            writer.operation(.get)
            writer.domain(domain)
        }
    }

    /// The Settings bundle layer of `domain` (`{"ok":true,"values":{...},"path":...}`).
    static func bundleDefaults(_ domain: DomainName) -> [UInt8] {
        line { writer in
            writer.operation(.bundleDefaults)
            writer.domain(domain)
        }
    }

    static let synchronize: [UInt8] = line { writer in writer.operation(.synchronize) }

    /// The request for a local edit: `set`/`remove` for one key, `apply` for several or with
    /// preconditions (`expect`), `replaceDomain`, or `deleteDomain` for an empty replacement.
    static func edit(_ edit: Edit, domain: DomainName, expecting expected: [String: PlistValue?] = [:]) -> [UInt8] {
        line { writer in
            switch edit {
            case .changes(let changes):
                if expected.isEmpty, case let (key, value)? = changes.onlyChange {
                    writer.operation(value == nil ? .remove : .set)
                    writer.domain(domain)
                    writer.key("key"); writer.string(key)
                    if let value { writer.key("value"); writer.value(value) }
                } else {
                    writer.operation(.apply)
                    writer.domain(domain)
                    writer.key("set"); writer.dictionary(changes.changes.compactMapValues { $0 })
                    writer.key("remove"); writer.beginArray()
                    for key in changes.compactMap({ $0.value == nil ? $0.key : nil }).sorted() { writer.string(key) }
                    writer.endArray()
                    if !expected.isEmpty {
                        writer.key("expect"); writer.beginObject()
                        for (key, value) in expected.sorted(by: { $0.key < $1.key }) {
                            writer.key(key)
                            if let value { writer.value(value) } else { writer.null() }
                        }
                        writer.endObject()
                    }
                }
            case .replace(let values) where values.isEmpty:
                writer.operation(.deleteDomain)
                writer.domain(domain)
            case .replace(let values):
                writer.operation(.replaceDomain)
                writer.domain(domain)
                writer.key("values"); writer.dictionary(values)
            }
        }
    }

    private static func line(_ body: (inout JSONWriter) -> Void) -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        writer.beginObject()
        body(&writer)
        writer.endObject()
        writer.newline()
        return writer.bytes
    }
}
