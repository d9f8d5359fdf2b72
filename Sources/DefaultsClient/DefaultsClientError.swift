import DefaultsCore

/// Why the client refused a value or a write did not happen.
public enum DefaultsClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value is not a property-list value (Foundation's `UserDefaults` raises an exception here).
    /// `path` locates the offending part: `key`, `key[2]`, `key.inner`.
    case notAPropertyList(path: String, reason: String)
    /// The key, domain or value breaks the protocol's rules (checked before anything is sent).
    case invalid(DefaultsError)
    /// The daemon refused a write (`too_large`, `invalid_value`, `shutting_down`, ...); the
    /// cache was put back to the daemon's values.
    case writeRefused(domain: String, DefaultsError)
    /// The daemon answered `synchronize` with an error (`io_error`: the disk write failed and is
    /// being retried; `shutting_down`).
    case notDurable(DefaultsError)
    /// The daemon could not be reached, or the connection closed before the answer.
    case unavailable(String)
    /// No answer within the configured time.
    case timedOut

    public var description: String {
        switch self {
        case .notAPropertyList(let path, let reason): "\(path) is not a property-list value: \(reason)"
        case .invalid(let error): error.description
        case .writeRefused(let domain, let error): "defaultsd refused a write to \(domain): \(error)"
        case .notDurable(let error): "defaultsd could not make the writes durable: \(error)"
        case .unavailable(let reason): "defaultsd is unavailable: \(reason)"
        case .timedOut: "defaultsd did not answer in time"
        }
    }
}
