/// Where a change came from: the `source` of a `didChange` event's `origin` (docs/PROTOCOL.md),
/// written by the daemon and read by every client from this one list. A new source is added
/// here, and the compiler then finds every switch that must handle it.
///
/// ```swift
/// OriginSource(rawValue: "roaming")   // .roaming
/// ```
public enum OriginSource: String, Sendable, Hashable, CaseIterable {
    /// A client, through its connection: the origin then has no `source` member, but `pid`,
    /// `uid`, `connection` and `client`.
    case connection
    /// A domain file edited by hand or by another program while the daemon runs.
    case file
    /// An administrator's managed preferences.
    case managed
    /// Another machine of the user, through the roaming link: `host` says which.
    case roaming
}

/// Who made a change, with the fields its source has, and its one wire form: the `origin`
/// object of a `didChange` event. The daemon encodes it; every client decodes it here.
///
/// ```swift
/// Origin.roaming(host: "laptop")            // {"source":"roaming","host":"laptop"}
/// Origin(pid: 42, uid: 1000, connection: 7) // {"pid":42,"uid":1000,"connection":7}
/// Origin(wire: event["origin"])?.source     // .roaming
/// ```
public struct Origin: Sendable, Hashable {
    public var source: OriginSource
    /// For a connection: its peer's process and user (`SO_PEERCRED`); 0 otherwise.
    public var pid: Int32
    public var uid: UInt32
    /// The daemon's number for the connection, answered by `hello`, so a client can recognise
    /// its own changes; 0 for a change from outside the socket.
    public var connection: UInt64
    /// The name the client gave in `hello`, if any.
    public var client: String?
    /// For a roaming change, the writing machine's `roaming.hostName`.
    public var host: String?

    /// A change made through a connection.
    public init(pid: Int32, uid: UInt32, connection: UInt64, client: String? = nil) {
        self.source = .connection
        self.pid = pid
        self.uid = uid
        self.connection = connection
        self.client = client
    }

    private init(source: OriginSource) {
        self.source = source
        self.pid = 0
        self.uid = 0
        self.connection = 0
    }

    /// A hand edit of a domain file.
    public static let file = Origin(source: .file)
    /// A change of the managed preferences.
    public static let managed = Origin(source: .managed)

    /// A change another machine made, applied from etcd.
    public static func roaming(host: String?) -> Origin {
        var origin = Origin(source: .roaming)
        origin.host = host
        return origin
    }

    /// Reads an event's `origin` object; nil when it is missing or names a source this build
    /// does not know.
    public init?(wire json: JSON?) {
        guard case .object(let members)? = json else { return nil }
        if case .string(let name)? = members["source"] {
            guard let source = OriginSource(rawValue: name), source != .connection else { return nil }
            self.init(source: source)
            if case .string(let host)? = members["host"] { self.host = host }
            return
        }
        guard case .integer(let connection)? = members["connection"] else { return nil }
        self.init(pid: 0, uid: 0, connection: UInt64(max(connection, 0)))
        if case .integer(let pid)? = members["pid"] { self.pid = Int32(truncatingIfNeeded: pid) }
        if case .integer(let uid)? = members["uid"] { self.uid = UInt32(truncatingIfNeeded: uid) }
        if case .string(let client)? = members["client"] { self.client = client }
    }
}

extension JSONWriter {
    /// Writes an origin as the `origin` object of an event: a connection by its members, with
    /// no `source`; anything else by its `source` (and `host`).
    public mutating func origin(_ origin: Origin) {
        beginObject()
        if origin.source == .connection {
            key(literal: "pid"); integer(Int64(origin.pid))
            key(literal: "uid"); integer(Int64(origin.uid))
            key(literal: "connection"); integer(Int64(origin.connection))
            if let client = origin.client { key(literal: "client"); string(client) }
        } else {
            key(literal: "source"); string(origin.source.rawValue)
            if let host = origin.host { key(literal: "host"); string(host) }
        }
        endObject()
    }
}
