import DefaultsCore
import FoundationEssentials
import Glibc
import Logging
import NIOCore

/// Everything the daemon can be told. The defaults are what runs with no configuration at all.
///
/// ```swift
/// var configuration = DaemonConfiguration.standard(environment: ProcessInfo.processInfo.environment)
/// configuration.coalesceDelay = .milliseconds(10)
/// ```
public struct DaemonConfiguration: Sendable {
    /// The Unix stream socket clients connect to.
    public var socketPath: String
    /// The directory that holds one property-list file per domain: by default the folder
    /// Foundation's `UserDefaults` uses (`$XDG_CONFIG_HOME`), shared with unmodified programs.
    public var storageDirectory: String
    /// Where the daemon keeps its own files (generation ledger, roaming journal, rejected hand
    /// edits); nil: ``defaultStateDirectory`` beside the shared folder, the storage directory
    /// itself beside a folder of its own.
    public var stateDirectory: String?
    /// The shared folder, `$XDG_STATE_HOME/defaultsd`, and the former folder, as the
    /// environment places them (empty when not known).
    public var sharedStorageDirectory = ""
    public var defaultStateDirectory = ""
    public var formerStorageDirectory = ""

    /// The state directory in force.
    public var effectiveStateDirectory: String {
        if let stateDirectory { return stateDirectory }
        return storageDirectory == sharedStorageDirectory && !defaultStateDirectory.isEmpty ? defaultStateDirectory : storageDirectory
    }

    /// Whether domains live in the folder Foundation shares, so that the former folder's are
    /// moved there at start.
    public var usesSharedStorage: Bool { !sharedStorageDirectory.isEmpty && storageDirectory == sharedStorageDirectory }
    /// The format domain files are written in. Both formats are read.
    public var fileFormat: PropertyListFile.Format = .xml
    /// How long a domain stays quiet before its changes are written (a burst becomes one write).
    public var coalesceDelay: TimeAmount = .milliseconds(50)
    /// The longest a change waits for its write while writes keep coming.
    public var maximumCoalesceDelay: TimeAmount = .seconds(1)
    /// Longest request line, in bytes; longer lines are answered with `line_too_long` and discarded.
    public var maximumLineBytes: Int = 1 << 20
    /// The longest a connection may leave a line unfinished while sending nothing that ends a
    /// line; past it the connection is answered `line_timed_out` and closed. Bounds the memory
    /// that stalled partial lines hold (`maximumConnections` × `maximumLineBytes` at worst) in time.
    public var unfinishedLineTimeout: TimeAmount = .seconds(10)
    /// The most answers, in bytes, one connection may have waiting for its client to read them
    /// (Redis's `client-output-buffer-limit`): past it the daemon stops running that connection's
    /// requests until the client reads, and answers every one of them, in order, once it does.
    public var maximumPendingReplyBytes: Int = 1 << 20
    /// Largest domain, in bytes of its wire (JSON) encoding; larger writes are refused with `too_large`.
    public var maximumDomainBytes: Int = 4 << 20
    /// Connections beyond this are answered with `too_many_connections` and closed.
    public var maximumConnections: Int = 1024
    /// The least severe level written to the log.
    public var logLevel: Logger.Level = .info
    /// Where installed Settings bundles are looked for, `<dir>/<domain>/Settings.bundle` (system first).
    public var settingsBundleDirectories: [String] = []
    /// Whether writes to keys a Settings bundle describes are checked against their specifiers.
    public var validateSettingsBundles: Bool = true
    /// How often the Settings bundle directories are looked at when they cannot be watched.
    public var settingsBundleScanInterval: TimeAmount = .seconds(2)
    /// How long the start waits for the first read of the Settings bundles: the socket opens
    /// then, whatever the bundles hold, so that no bundle can hold the start past the service
    /// manager's timeout.
    public var settingsBundleWait: TimeAmount = .seconds(5)
    /// The administrator's managed (forced) preferences: `<dir>/<domain>.plist` for every user,
    /// `<dir>/users/<user name>/<domain>.plist` for one.
    public var managedPreferencesDirectory: String = "/etc/defaultsd/managed"
    /// The file that holds this machine's id, which names its by-host domain files.
    public var machineIDFile: String = MachineID.defaultPath
    /// The domains that follow the user to other machines through etcd; off unless configured.
    public var roaming: RoamingConfiguration = .standard()
    /// What the change journal keeps, in the state directory; on unless turned off.
    public var journal = JournalConfiguration()

    public init(socketPath: String, storageDirectory: String) {
        self.socketPath = socketPath
        self.storageDirectory = storageDirectory
    }

    /// The XDG locations: storage in `$XDG_CONFIG_HOME/defaultsd` (else `~/.config/defaultsd`), the socket in
    /// `$XDG_RUNTIME_DIR/defaultsd/socket` (else `/tmp/defaultsd-<uid>/socket`).
    public static func standard(environment: [String: String], uid: UInt32 = getuid()) -> DaemonConfiguration {
        var configuration = DaemonConfiguration(
            socketPath: DefaultPaths.socketPath(environment: environment, uid: uid),
            storageDirectory: DefaultPaths.storageDirectory(environment: environment))
        configuration.settingsBundleDirectories = DefaultPaths.settingsBundleDirectories(environment: environment)
        configuration.sharedStorageDirectory = configuration.storageDirectory
        configuration.defaultStateDirectory = DefaultPaths.stateDirectory(environment: environment)
        configuration.formerStorageDirectory = DefaultPaths.formerStorageDirectory(environment: environment)
        return configuration
    }
}

