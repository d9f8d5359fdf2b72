import DefaultsCore

/// Who made a change: a connection (with its peer's credentials from `SO_PEERCRED`), or
/// something outside the socket.
struct Origin: Sendable, Hashable {
    /// Where a change came from: the protocol's one list, shared with the clients.
    typealias Source = OriginSource

    var source: Source
    var pid: Int32
    var uid: UInt32
    /// The daemon's number for the connection, answered by `hello`, so a client can recognise
    /// its own changes; 0 for a change from outside the socket.
    var connection: UInt64
    /// The name the client gave in `hello`, if any.
    var client: String?
    /// For a roaming change, the writing machine's `roaming.hostName`.
    var host: String?

    init(pid: Int32, uid: UInt32, connection: UInt64, client: String? = nil) {
        self.source = .connection
        self.pid = pid
        self.uid = uid
        self.connection = connection
        self.client = client
    }

    private init(source: Source) {
        self.source = source
        self.pid = 0
        self.uid = 0
        self.connection = 0
    }

    /// A hand edit of a domain file.
    static let file = Origin(source: .file)
    /// A change of the managed preferences.
    static let managed = Origin(source: .managed)

    /// A change another machine made, applied from etcd.
    static func roaming(host: String?) -> Origin {
        var origin = Origin(source: .roaming)
        origin.host = host
        return origin
    }
}
