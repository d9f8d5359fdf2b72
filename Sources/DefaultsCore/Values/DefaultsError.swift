/// Every error the protocol can answer, with its wire code.
///
/// ```swift
/// throw DefaultsError(.invalidDomain, "invalid domain name \"../x\"")
/// ```
public struct DefaultsError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// The line is not valid JSON, or not a JSON object.
        case badJSON = "bad_json"
        /// The line is not valid UTF-8.
        case invalidUTF8 = "invalid_utf8"
        /// The line is longer than the configured limit; the rest of it was discarded.
        case lineTooLong = "line_too_long"
        /// A line was left unfinished longer than the configured time; the connection was closed.
        case lineTimedOut = "line_timed_out"
        case unknownOp = "unknown_op"
        case missingParameter = "missing_parameter"
        /// A parameter has the wrong JSON type or an impossible value.
        case invalidParameter = "invalid_parameter"
        case invalidDomain = "invalid_domain"
        case invalidKey = "invalid_key"
        /// A value is not a property-list value (null, NaN, out-of-range integer, bad `$date` ...).
        case invalidValue = "invalid_value"
        /// The write would make the domain larger than the configured limit; nothing changed.
        case tooLarge = "too_large"
        /// The write would change a key the administrator's managed preferences force; nothing changed.
        case forced = "forced"
        /// An `apply`'s precondition (`expect`) did not hold: a key held another value; nothing changed.
        case conflict = "conflict"
        /// A by-host domain cannot be written: the machine has no id (`/etc/machine-id`) to name its files.
        case noMachineID = "no_machine_id"
        /// Text given to `import` is not a property list holding a dictionary.
        case invalidPlist = "invalid_plist"
        /// The peer is another user.
        case notPermitted = "not_permitted"
        /// The daemon already serves its maximum number of connections.
        case tooManyConnections = "too_many_connections"
        /// Writing to disk failed; the value stays in memory and the write is retried.
        case ioError = "io_error"
        case shuttingDown = "shutting_down"
        /// `history` or `revert` for a domain the change journal does not keep: the journal is off
        /// (`journal.enabled`), or the domain is excluded from it (`journal.excludedDomains`).
        case noJournal = "no_journal"
        case `internal` = "internal"
    }

    public var code: Code
    public var message: String
    /// For `conflict`: the key whose expected value did not hold, and the value found (nil:
    /// absent). On the wire as the error's `key` and `found` members.
    public var conflict: Conflict?

    public struct Conflict: Sendable, Hashable {
        public var key: String
        public var found: PlistValue?

        public init(key: String, found: PlistValue?) {
            self.key = key
            self.found = found
        }
    }

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The `conflict` refusal of a precondition on `key` that found `found`.
    public static func conflict(key: String, expected: PlistValue?, found: PlistValue?) -> DefaultsError {
        func text(_ value: PlistValue?) -> String { value.map { String(decoding: WireValue.encode($0), as: UTF8.self) } ?? "absent" }
        var error = DefaultsError(.conflict, "\(key) is \(text(found)), not \(text(expected)); nothing changed")
        error.conflict = Conflict(key: key, found: found)
        return error
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// The refusal an answer line carries: nil for `"ok":true`; the `error` object's code and
    /// message otherwise. One reading for every client (the library, `defaults`): a code this
    /// version does not know is `internal`, with the code kept in front of the message, and an
    /// answer with neither `ok` nor `error` is `internal` too.
    ///
    /// ```swift
    /// DefaultsError(answer: try JSONParser.parse(#"{"ok":false,"error":{"code":"too_large","message":"..."}}"#))
    /// // DefaultsError(.tooLarge, "...")
    /// ```
    public init?(answer: JSON) {
        if answer["ok"] == .bool(true) { return nil }
        guard case .object(let error)? = answer["error"] else {
            self.init(.internal, "malformed answer: \(answer)")
            return
        }
        let message: String = if case .string(let text)? = error["message"] { text } else { "" }
        guard case .string(let text)? = error["code"] else {
            self.init(.internal, message)
            return
        }
        if let code = Code(rawValue: text) { self.init(code, message) } else { self.init(.internal, "\(text): \(message)") }
        if code == .conflict, case .string(let key)? = error["key"] {
            conflict = Conflict(key: key, found: error["found"].flatMap { try? WireValue.decode($0) })
        }
    }
}
