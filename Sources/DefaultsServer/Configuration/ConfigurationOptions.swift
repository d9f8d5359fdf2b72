import DefaultsCore
import Logging
import NIOCore

/// One configuration key: its documentation, how to check and apply a value, and how to show it.
public struct ConfigurationOption: Sendable {
    public let key: String
    /// The command-line flag that overrides it, if any.
    public let flag: String?
    public let summary: String
    /// What a valid value looks like, for error messages.
    public let expected: String
    /// True when a new value only takes effect after a restart (a reload logs that).
    public let needsRestart: Bool
    let apply: @Sendable (ConfigurationValue, inout DaemonConfiguration) -> Bool
    let current: @Sendable (DaemonConfiguration) -> ConfigurationValue
}

extension ConfigurationOption {
    // The options with a command-line flag are named: `defaultsd`'s flags refer to them.
    public static let socket = absolutePath(
        "socket", flag: "--socket",
        "The Unix socket clients connect to. null: $XDG_RUNTIME_DIR/defaultsd/socket, else /tmp/defaultsd-<uid>/socket. Ignored under socket activation.",
        \.socketPath)

    public static let storageDirectory = absolutePath(
        "storageDirectory", flag: "--storage-dir",
        "The directory holding one property-list file per domain. null: the folder Foundation's UserDefaults uses, $XDG_CONFIG_HOME, else ~/.config, shared with unmodified Swift programs.",
        \.storageDirectory)

    public static let stateDirectory = ConfigurationOption(
        key: "stateDirectory", flag: "--state-dir",
        summary: "Where the daemon keeps its own files (generation ledger, roaming journal, rejected hand edits). null: $XDG_STATE_HOME/defaultsd (else ~/.local/state/defaultsd) beside the shared folder; the storage directory itself beside a folder of its own.",
        expected: "an absolute path or null", needsRestart: true,
        apply: { value, configuration in
            guard case .string(let path) = value, path.hasPrefix("/") else { return value == .null }
            configuration.stateDirectory = path
            return true
        },
        current: { .string($0.effectiveStateDirectory) })

    public static let fileFormat = ConfigurationOption(
        key: "fileFormat", flag: "--format",
        summary: "The format domain files are written in: \"xml\" (as macOS; dates keep whole seconds) or \"binary\". Both are read.",
        expected: "\"xml\" or \"binary\"", needsRestart: true,
        apply: { value, configuration in
            guard case .string(let name) = value, let format = PropertyListFile.Format(rawValue: name) else { return false }
            configuration.fileFormat = format
            return true
        },
        current: { .string($0.fileFormat.rawValue) })

    public static let coalesceMilliseconds = ConfigurationOption(
        key: "coalesceMilliseconds", flag: "--coalesce-ms",
        summary: "How long a changed domain must stay quiet before it is written; a burst of writes becomes one file write.",
        expected: "an integer from 0 to 600000", needsRestart: false,
        apply: { value, configuration in
            guard case .integer(let ms) = value, (0...600_000).contains(ms) else { return false }
            configuration.coalesceDelay = .milliseconds(Int64(ms))
            return true
        },
        current: { .integer(Int($0.coalesceDelay.nanoseconds / 1_000_000)) })

    public static let maximumLineBytes = ConfigurationOption(
        key: "maximumLineBytes", flag: "--max-line-bytes",
        summary: "The longest request line; longer lines are answered with line_too_long. Applies to new connections.",
        expected: "an integer from 1024 to 1073741824", needsRestart: false,
        apply: { value, configuration in
            guard case .integer(let bytes) = value, (1024...(1 << 30)).contains(bytes) else { return false }
            configuration.maximumLineBytes = bytes
            return true
        },
        current: { .integer($0.maximumLineBytes) })

    public static let maximumPendingReplyBytes = ConfigurationOption(
        key: "maximumPendingReplyBytes", flag: "--max-pending-reply-bytes",
        summary: "The most answers, in bytes, a connection may leave unread; past it its requests wait until the client reads. Applies to new connections.",
        expected: "an integer from 16384 to 1073741824", needsRestart: false,
        apply: { value, configuration in
            guard case .integer(let bytes) = value, ((16 << 10)...(1 << 30)).contains(bytes) else { return false }
            configuration.maximumPendingReplyBytes = bytes
            return true
        },
        current: { .integer($0.maximumPendingReplyBytes) })

    public static let maximumDomainBytes = ConfigurationOption(
        key: "maximumDomainBytes", flag: "--max-domain-bytes",
        summary: "The largest a domain may grow, in bytes of its JSON encoding; larger writes are refused with too_large.",
        expected: "an integer from 1024 to 1073741824", needsRestart: false,
        apply: { value, configuration in
            guard case .integer(let bytes) = value, (1024...(1 << 30)).contains(bytes) else { return false }
            configuration.maximumDomainBytes = bytes
            return true
        },
        current: { .integer($0.maximumDomainBytes) })

    public static let maximumConnections = ConfigurationOption(
        key: "maximumConnections", flag: "--max-connections",
        summary: "Connections served at once; more are answered with too_many_connections and closed.",
        expected: "an integer from 1 to 1000000", needsRestart: false,
        apply: { value, configuration in
            guard case .integer(let count) = value, (1...1_000_000).contains(count) else { return false }
            configuration.maximumConnections = count
            return true
        },
        current: { .integer($0.maximumConnections) })

    public static let logLevel = ConfigurationOption(
        key: "logLevel", flag: "--log-level",
        summary: "The least severe messages logged: trace, debug, info, notice, warning, error or critical. Values are never logged above debug.",
        expected: "one of \"trace\", \"debug\", \"info\", \"notice\", \"warning\", \"error\", \"critical\"",
        needsRestart: false,
        apply: { value, configuration in
            guard case .string(let name) = value, let level = Logger.Level(rawValue: name) else { return false }
            configuration.logLevel = level
            return true
        },
        current: { .string($0.logLevel.rawValue) })

    public static let managedPreferencesDirectory = ConfigurationOption(
        key: "managedPreferencesDirectory", flag: "--managed-dir",
        summary: "The administrator's managed (forced) preferences: <dir>/<domain>.plist for every user, <dir>/users/<user name>/<domain>.plist for one. Files the daemon's user could write are ignored.",
        expected: "an absolute path", needsRestart: true,
        apply: { value, configuration in
            guard case .string(let path) = value, path.hasPrefix("/") else { return false }
            configuration.managedPreferencesDirectory = path
            return true
        },
        current: { .string($0.managedPreferencesDirectory) })

    public static let machineIDFile = ConfigurationOption(
        key: "machineIDFile", flag: "--machine-id-file",
        summary: "The file holding this machine's id, which names its by-host domain files (ByHost/<domain>.<id>.plist). Without an id, by-host domains read as empty and writes to them are refused (no_machine_id).",
        expected: "an absolute path", needsRestart: true,
        apply: { value, configuration in
            guard case .string(let path) = value, path.hasPrefix("/") else { return false }
            configuration.machineIDFile = path
            return true
        },
        current: { .string($0.machineIDFile) })

    /// Every key of the configuration file, in the order `--print-config` shows them.
    public static let all: [ConfigurationOption] = [
        socket,
        storageDirectory,
        stateDirectory,
        fileFormat,
        coalesceMilliseconds,
        ConfigurationOption(
            key: "maximumCoalesceMilliseconds", flag: nil,
            summary: "The longest a change waits to be written while writes keep coming.",
            expected: "an integer from 1 to 3600000", needsRestart: false,
            apply: { value, configuration in
                guard case .integer(let ms) = value, (1...3_600_000).contains(ms) else { return false }
                configuration.maximumCoalesceDelay = .milliseconds(Int64(ms))
                return true
            },
            current: { .integer(Int($0.maximumCoalesceDelay.nanoseconds / 1_000_000)) }),
        maximumLineBytes,
        ConfigurationOption(
            key: "unfinishedLineMilliseconds", flag: nil,
            summary: "The longest a connection may leave a request line unfinished; it is then answered with line_timed_out and closed. Applies to new connections.",
            expected: "an integer from 100 to 3600000", needsRestart: false,
            apply: { value, configuration in
                guard case .integer(let ms) = value, (100...3_600_000).contains(ms) else { return false }
                configuration.unfinishedLineTimeout = .milliseconds(Int64(ms))
                return true
            },
            current: { .integer(Int($0.unfinishedLineTimeout.nanoseconds / 1_000_000)) }),
        maximumPendingReplyBytes,
        maximumDomainBytes,
        maximumConnections,
        logLevel,
        ConfigurationOption(
            key: "settingsBundleDirectories", flag: nil,
            summary: "Where installed Settings bundles are found, as <dir>/<domain>/Settings.bundle (system first). null: /usr/share/defaultsd/settings-bundles and $XDG_DATA_HOME/defaultsd/settings-bundles.",
            expected: "an array of absolute paths, or null", needsRestart: false,
            apply: { value, configuration in
                if value == .null { return true }
                guard case .array(let items) = value else { return false }
                var paths: [String] = []
                for item in items {
                    guard case .string(let path) = item, path.hasPrefix("/") else { return false }
                    paths.append(path)
                }
                configuration.settingsBundleDirectories = paths
                return true
            },
            current: { .array($0.settingsBundleDirectories.map(ConfigurationValue.string)) }),
        boolean(
            "validateSettingsBundles",
            "Refuse (invalid_value) writes to keys a Settings bundle describes that its specifier does not allow.",
            needsRestart: false, \.validateSettingsBundles),
        managedPreferencesDirectory,
        machineIDFile,
        ConfigurationOption(
            key: "settingsBundleScanMilliseconds", flag: nil,
            summary: "How often the Settings bundle directories are looked at when they cannot be watched with inotify.",
            expected: "an integer from 100 to 3600000", needsRestart: true,
            apply: { value, configuration in
                guard case .integer(let ms) = value, (100...3_600_000).contains(ms) else { return false }
                configuration.settingsBundleScanInterval = .milliseconds(Int64(ms))
                return true
            },
            current: { .integer(Int($0.settingsBundleScanInterval.nanoseconds / 1_000_000)) }),
        ConfigurationOption(
            key: "settingsBundleWaitMilliseconds", flag: nil,
            summary: "How long the start waits for the Settings bundles to be read before the socket opens. Bundles read later apply when they are read, announced with bundleDefaultsChanged.",
            expected: "an integer from 0 to 60000", needsRestart: true,
            apply: { value, configuration in
                guard case .integer(let ms) = value, (0...60_000).contains(ms) else { return false }
                configuration.settingsBundleWait = .milliseconds(Int64(ms))
                return true
            },
            current: { .integer(Int($0.settingsBundleWait.nanoseconds / 1_000_000)) }),
    ] + journal + roaming

    public static func named(_ key: String) -> ConfigurationOption? { all.first { $0.key == key } }

    /// A folder or file of the daemon's, as an absolute path; null keeps the default.
    private static func absolutePath(
        _ key: String, flag: String, _ summary: String, _ field: WritableKeyPath<DaemonConfiguration, String> & Sendable
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: flag, summary: summary, expected: "an absolute path or null", needsRestart: true,
            apply: { value, configuration in
                guard case .string(let path) = value, path.hasPrefix("/") else { return value == .null }
                configuration[keyPath: field] = path
                return true
            },
            current: { .string($0[keyPath: field]) })
    }

    /// A flag: `true` or `false`.
    private static func boolean(
        _ key: String, _ summary: String, needsRestart: Bool, _ field: WritableKeyPath<DaemonConfiguration, Bool> & Sendable
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: nil, summary: summary, expected: "true or false", needsRestart: needsRestart,
            apply: { value, configuration in
                guard case .bool(let flag) = value else { return false }
                configuration[keyPath: field] = flag
                return true
            },
            current: { .bool($0[keyPath: field]) })
    }

    /// An optional text of the roaming section (the etcd user, the PEM files' paths), shown as it is.
    private static func optionalText(
        _ key: String, _ summary: String, path: Bool, _ field: WritableKeyPath<RoamingConfiguration, String?> & Sendable
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: nil, summary: summary, expected: path ? "an absolute path" : "a string", needsRestart: true,
            apply: { value, configuration in
                guard case .string(let text) = value, !path || text.hasPrefix("/") else { return false }
                configuration.roaming[keyPath: field] = text
                return true
            },
            current: { $0.roaming[keyPath: field].map(ConfigurationValue.string) ?? .null })
    }

    /// Whether `key` names a section whose members are options (`roaming` for `roaming.domains`).
    static func isSection(_ key: String) -> Bool { all.contains { $0.key.hasPrefix(key + ".") } }

    /// The `journal` section (docs/ADMINISTRATION.md, "The change journal"); every key applies
    /// on reload.
    static let journal: [ConfigurationOption] = [
        boolean(
            "journal.enabled",
            "Record every change of a preference, with its writer, in the state directory's journal folder (history, undo, blame).",
            needsRestart: false, \.journal.isEnabled),
        journalCount(
            "journal.maximumEntriesPerDomain", "The most changes kept per domain; older ones are dropped at the next compaction.",
            1...1_000_000, \.maximumEntriesPerDomain),
        journalCount("journal.maximumDays", "How many days a change is kept.", 1...36_500, \.maximumDays),
        journalCount(
            "journal.maximumBytesPerDomain", "The most bytes a domain's journal file keeps; older changes are dropped first.",
            (64 << 10)...(1 << 30), \.maximumBytesPerDomain),
        ConfigurationOption(
            key: "journal.excludedDomains", flag: nil,
            summary: "Domains whose changes are not recorded (their by-host variants neither).",
            expected: "an array of domain names", needsRestart: false,
            apply: { value, configuration in
                guard let names = value.strings else { return false }
                var domains: Set<DomainName> = []
                for name in names {
                    guard let domain = try? DomainName(name) else { return false }
                    domains.insert(domain)
                }
                configuration.journal.excludedDomains = domains
                return true
            },
            current: { .array($0.journal.excludedDomains.sorted().map { .string($0.rawValue) }) }),
    ]

    private static func journalCount(
        _ key: String, _ summary: String, _ range: ClosedRange<Int>, _ field: WritableKeyPath<JournalConfiguration, Int> & Sendable
    ) -> ConfigurationOption {
        ConfigurationOption(
            key: key, flag: nil, summary: summary, expected: "an integer from \(range.lowerBound) to \(range.upperBound)",
            needsRestart: false,
            apply: { value, configuration in
                guard case .integer(let count) = value, range.contains(count) else { return false }
                configuration.journal[keyPath: field] = count
                return true
            },
            current: { .integer($0.journal[keyPath: field]) })
    }

    /// The `roaming` section (docs/ROAMING.md). Only `roaming.domains` changes on reload: the
    /// link to the cluster is made once, at start.
    static let roaming: [ConfigurationOption] = [
        ConfigurationOption(
            key: "roaming.endpoints", flag: nil,
            summary: "Client URLs of the etcd cluster's members (http:// or https://). Empty: nothing roams.",
            expected: "an array of http:// or https:// URLs", needsRestart: true,
            apply: { value, configuration in
                guard let urls = value.strings, urls.allSatisfy({ $0.hasPrefix("http://") || $0.hasPrefix("https://") })
                else { return false }
                configuration.roaming.endpoints = urls.map { $0.hasSuffix("/") ? String($0.dropLast()) : $0 }
                return true
            },
            current: { .array($0.roaming.endpoints.map(ConfigurationValue.string)) }),
        ConfigurationOption(
            key: "roaming.domains", flag: nil,
            summary: "The domains that follow the user to their other machines. By-host domains never roam.",
            expected: "an array of domain names", needsRestart: false,
            apply: { value, configuration in
                guard let names = value.strings else { return false }
                var domains: [DomainName] = []
                for name in names {
                    guard let domain = try? DomainName(name) else { return false }
                    domains.append(domain)
                }
                configuration.roaming.domains = domains
                return true
            },
            current: { .array($0.roaming.domains.map { .string($0.rawValue) }) }),
        ConfigurationOption(
            key: "roaming.prefix", flag: nil,
            summary: "Where this user's keys live in etcd. Default: /defaultsd/<user name>/.",
            expected: "a string starting and ending with /", needsRestart: true,
            apply: { value, configuration in
                guard case .string(let prefix) = value, prefix.hasPrefix("/"), prefix.hasSuffix("/") else { return false }
                configuration.roaming.prefix = prefix
                return true
            },
            current: { .string($0.roaming.prefix) }),
        ConfigurationOption(
            key: "roaming.hostName", flag: nil,
            summary: "The name other machines see as the writer of this machine's changes; unique per machine. Default: the host name.",
            expected: "a non-empty string", needsRestart: true,
            apply: { value, configuration in
                guard case .string(let name) = value, !name.isEmpty else { return false }
                configuration.roaming.hostName = name
                return true
            },
            current: { .string($0.roaming.hostName) }),
        optionalText(
            "roaming.user", "etcd user name, when the cluster has authentication on (with roaming.password).",
            path: false, \.user),
        ConfigurationOption(
            key: "roaming.password", flag: nil,
            summary: "etcd password. Only in a configuration file no one else can read (else exit 78); never printed or logged.",
            expected: "a string", needsRestart: true,
            apply: { value, configuration in
                guard case .string(let password) = value else { return false }
                configuration.roaming.password = password
                return true
            },
            current: { $0.roaming.password == nil ? .null : .string("(set; not shown)") }),
        boolean(
            "roaming.sendPasswordOverHTTP",
            "Lets roaming.password travel over http:// endpoints, unencrypted (a cluster on loopback). Default: false, and such a configuration exits 78.",
            needsRestart: true, \.roaming.sendPasswordOverHTTP),
        optionalText(
            "roaming.certificateFile", "PEM client certificate, for a cluster that asks for one (with roaming.privateKeyFile).",
            path: true, \.certificateFile),
        optionalText(
            "roaming.privateKeyFile", "PEM key of the client certificate. Only in a configuration file no one else can read.",
            path: true, \.privateKeyFile),
        optionalText(
            "roaming.trustedCAFile", "PEM CA certificate that signed the members' certificates. Default: the system's trust store.",
            path: true, \.trustedCAFile),
    ]
}
