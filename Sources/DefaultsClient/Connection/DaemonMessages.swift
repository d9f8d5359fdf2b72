import DefaultsCore

/// What the driver reads from the daemon's lines, decoded apart from what it does with them:
/// the members of an answer or an event as values, a `didChange` as a typed change, and the
/// wire's origin as the ``ChangeOrigin`` observers see. Pure functions of their input, so every
/// rule of the wire is read in one place (the `Origin` and `EventName` of DefaultsCore).
enum DaemonMessages {
    /// A member that is not a value: left out, and logged by the caller.
    struct Skipped: Equatable {
        var key: String
        var error: DefaultsError
    }

    /// A `didChange` event: the domain, its generation after the change, each changed key's new
    /// value (nil: removed), the wire's origin, and the members that were not values.
    struct DidChange {
        var domain: DomainName
        var generation: Int64
        var changes: [String: PlistValue?]
        var origin: Origin?
        var skipped: [Skipped]
    }

    /// The members of an answer or an event, each decoded by `decodeMember`; the ones that fail
    /// are returned apart.
    static func decode<Value>(
        _ members: [String: JSON], _ decodeMember: (JSON) throws(DefaultsError) -> Value
    ) -> (values: [String: Value], skipped: [Skipped]) {
        var values: [String: Value] = [:]
        var skipped: [Skipped] = []
        values.reserveCapacity(members.count)
        for (key, member) in members {
            do throws(DefaultsError) { values[key] = try decodeMember(member) } catch { skipped.append(Skipped(key: key, error: error)) }
        }
        return (values, skipped)
    }

    /// Property-list values, as answers carry them.
    static func values(_ members: [String: JSON]) -> (values: [String: PlistValue], skipped: [Skipped]) {
        decode(members) { member throws(DefaultsError) in try WireValue.decode(member) }
    }

    /// The `didChange` a line holds, or nil when it holds another event or no valid domain.
    static func didChange(_ json: JSON) -> DidChange? {
        guard EventName(of: json) == .didChange,
            case .string(let name)? = json["domain"], let host = DomainName.Host(wire: json["host"]),
            let domain = try? DomainName(name, host: host),
            case .integer(let generation)? = json["generation"],
            case .object(let members)? = json["changes"]
        else { return nil }
        // `null`: the key was removed.
        let (changes, skipped) = decode(members) { member throws(DefaultsError) -> PlistValue? in
            member == .null ? nil : try WireValue.decode(member)
        }
        return DidChange(domain: domain, generation: generation, changes: changes, origin: Origin(wire: json["origin"]), skipped: skipped)
    }

    /// The change's origin as observers see it. A write of this client's own connection
    /// (`ownConnection`, from `hello`) is `.local`. No origin, or a source this version does
    /// not know, can only say that the domain was found changed: `.resynchronized`.
    static func changeOrigin(_ origin: Origin?, ownConnection: Int64?) -> ChangeOrigin {
        guard let origin else { return .resynchronized }
        switch origin.source {
        case .file: return .file
        case .managed: return .managed
        case .roaming: return .roaming(host: origin.host)
        case .connection:
            if let number = ownConnection, UInt64(exactly: number) == origin.connection { return .local }
            return .remote(ChangeOrigin.Writer(pid: origin.pid, uid: origin.uid, connection: origin.connection, client: origin.client))
        }
    }
}
