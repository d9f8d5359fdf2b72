/// Who made a change: the peer's credentials (from `SO_PEERCRED`) and its connection.
struct Origin: Sendable, Hashable {
    var pid: Int32
    var uid: UInt32
    /// The daemon's number for the connection, answered by `hello`, so a client can recognise its own changes.
    var connection: UInt64
    /// The name the client gave in `hello`, if any.
    var client: String?

    init(pid: Int32, uid: UInt32, connection: UInt64, client: String? = nil) {
        self.pid = pid
        self.uid = uid
        self.connection = connection
        self.client = client
    }

    /// The daemon itself (for example a domain file replaced while it runs).
    static let daemon = Origin(pid: 0, uid: 0, connection: 0, client: "defaultsd")
}
