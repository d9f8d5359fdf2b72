import DefaultsCore
import Synchronization

/// Keys of one domain whose values changed, and who changed them.
public struct DefaultsChange: Sendable, Hashable, CustomStringConvertible {
    /// The domain: the app domain, a suite, `NSGlobalDomain`, or `NSRegistrationDomain` /
    /// `NSArgumentDomain` for changes made in this process.
    public var domain: String
    public var keys: Set<String>
    public var origin: ChangeOrigin

    public init(domain: String, keys: Set<String>, origin: ChangeOrigin) {
        self.domain = domain
        self.keys = keys
        self.origin = origin
    }

    public var description: String { "\(domain) \(keys.sorted()) (\(origin))" }
}

/// Who made a change.
public enum ChangeOrigin: Sendable, Hashable, CustomStringConvertible {
    /// This process, through this client (reported at once, before the daemon confirms it).
    case local
    /// Another connection to the daemon: another process, or another client in this one.
    case remote(Writer)
    /// Found on (re)connecting: the daemon restarted, or was unreachable, and the domain differed
    /// from what this process last saw.
    case resynchronized
    /// A local write the daemon refused was undone; the values are the daemon's again.
    case reverted(DefaultsError)
    /// The domain's Settings bundle defaults changed (a bundle was installed, changed or removed;
    /// the daemon's `bundleDefaultsChanged`); the keys are those whose resolved value changed.
    case settingsBundle
    /// The domain's file was edited outside the daemon (by hand, or by another program), and
    /// the daemon took the edit in.
    case file
    /// An administrator's managed preferences for the domain changed.
    case managed
    /// Another machine of the user changed the domain, through roaming (docs/ROAMING.md);
    /// `host` is that machine's `roaming.hostName`.
    case roaming(host: String?)

    /// The writer of a remote change, as the daemon saw it (`SO_PEERCRED`).
    public struct Writer: Sendable, Hashable {
        public var pid: Int32
        public var uid: UInt32
        /// The daemon's number for the writer's connection.
        public var connection: UInt64
        /// The name the writer gave in `hello`, if any.
        public var client: String?
    }

    public var description: String {
        switch self {
        case .local: "local"
        case .remote(let writer): "pid \(writer.pid)\(writer.client.map { " (\($0))" } ?? "")"
        case .resynchronized: "resynchronized"
        case .reverted(let error): "reverted: \(error)"
        case .settingsBundle: "settings bundle"
        case .file: "file edited"
        case .managed: "managed preferences"
        case .roaming(let host): "roaming from \(host ?? "another machine")"
        }
    }
}

/// Keeps an observer registered; `cancel()` (or releasing the token) removes it.
public final class DefaultsObservation: Sendable, Hashable {
    private let cancellation: Mutex<(@Sendable () -> Void)?>

    init(_ cancel: @escaping @Sendable () -> Void) { cancellation = Mutex(cancel) }

    public func cancel() {
        let cancel = cancellation.withLock { value -> (@Sendable () -> Void)? in
            defer { value = nil }
            return value
        }
        cancel?()
    }

    deinit { cancel() }

    public static func == (lhs: DefaultsObservation, rhs: DefaultsObservation) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
