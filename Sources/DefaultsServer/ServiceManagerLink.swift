import NIOCore

/// What the daemon tells its service manager (systemd's `sd_notify` in the executable).
///
/// Called from the store's event loop (`status`, `watchdog`) or from the start/stop code;
/// implementations must be cheap and thread-safe.
public protocol ServiceManagerLink: Sendable {
    /// The socket listens and the storage directory is usable.
    func ready(status: String)
    /// A line for people (`systemctl status`), sent only when it changed, at most once a second.
    func status(_ text: String)
    /// The state-owning loop is alive.
    func watchdog()
    func reloading()
    func stopping()
    /// How often `watchdog()` must be called, if the manager watches.
    var watchdogInterval: TimeAmount? { get }
    /// Whether a manager reads `status`; without one the daemon keeps no timer for it, so an
    /// idle daemon does not wake.
    var readsStatus: Bool { get }
}

/// The link used in a terminal: tells nobody.
public struct NoServiceManager: ServiceManagerLink {
    public init() {}
    public func ready(status: String) {}
    public func status(_ text: String) {}
    public func watchdog() {}
    public func reloading() {}
    public func stopping() {}
    public var watchdogInterval: TimeAmount? { nil }
    public var readsStatus: Bool { false }
}
