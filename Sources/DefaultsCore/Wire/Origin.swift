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
    /// For a connection: its peer's process name (`/proc/<pid>/comm`, at most 15 bytes) and
    /// executable (`/proc/<pid>/exe`), read once at connect; nil where they could not be read.
    public var command: String?
    public var executable: String?
    /// For a `revert`: the journal entry the domain was returned to the state before.
    public var revert: Int64?

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
        if case .string(let command)? = members["command"] { self.command = command }
        if case .string(let executable)? = members["executable"] { self.executable = executable }
        if case .integer(let revert)? = members["revert"] { self.revert = revert }
    }

    /// The name a person knows the writer by, as `defaults history` and the Settings app show it:
    /// for a connection, its executable's file name when the process name is the start of it
    /// (the kernel cuts process names at 15 bytes: `defaultsd-setti`), else the process name,
    /// the name given in `hello`, or the process id; "file" for a hand edit, "managed" for the
    /// managed preferences, and the other machine's name for a roaming change.
    ///
    /// ```swift
    /// Origin.file.writerName                      // "file"
    /// Origin.roaming(host: "laptop").writerName   // "laptop"
    /// ```
    public var writerName: String {
        switch source {
        case .file, .managed: return source.rawValue
        case .roaming: return host ?? source.rawValue
        case .connection:
            let executableName = executable.map { path in
                path.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(path[path.utf8.index(after: $0)...]) } ?? path
            }
            if let command, let executableName, executableName.utf8.starts(with: command.utf8) { return executableName }
            return command ?? executableName ?? client ?? "pid \(pid)"
        }
    }

    /// Whether `name` names this writer: its ``writerName``, process name, executable's file
    /// name, `hello` name or source (`file`, `managed`, `roaming`, `connection`), as
    /// `defaults history --by` and `history`'s `writer` take it.
    public func isWriter(named name: String) -> Bool {
        if name == writerName || name == source.rawValue || name == command || name == client || name == host { return true }
        guard let executable else { return false }
        return name == executable || executable.hasSuffix("/" + name)
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
            if let command = origin.command { key(literal: "command"); string(command) }
            if let executable = origin.executable { key(literal: "executable"); string(executable) }
            if let revert = origin.revert { key(literal: "revert"); integer(revert) }
        } else {
            key(literal: "source"); string(origin.source.rawValue)
            if let host = origin.host { key(literal: "host"); string(host) }
        }
        endObject()
    }
}
