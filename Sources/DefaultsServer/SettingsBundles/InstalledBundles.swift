import DefaultsCore
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import SettingsBundles

/// The Settings bundles the daemon knows: their defaults layer and their write checks.
///
/// Owned by the store's event loop. A scan hands a `BundleScanner` to the scanner thread; what
/// it found comes back to the loop, which swaps in the new bundles. The bundle directories are
/// watched with inotify (each directory and every directory inside it; a directory that does
/// not exist yet through the nearest one that does), and any change there starts a scan after
/// `settleDelay`. Where a watch cannot be added, a repeated scan every
/// `settingsBundleScanMilliseconds` takes over, and the log says so. Bundles
/// registered over the socket (`registerBundle`) are remembered in the storage directory
/// (`.defaultsd-bundles.plist`).
final class InstalledBundles: ChangesetCheck {
    struct Installed {
        var path: String
        var signature: String
        var bundle: SettingsBundle
    }

    let eventLoop: EventLoop
    let scannerThread: NIOThreadPool
    let logger: Logger
    private let registryPath: String
    /// The registry of bundles registered with `registerBundle`, in the state directory.
    static let registryFileName = ".defaultsd-bundles.plist"
    var directories: [String]
    var options: LoadOptions
    private(set) var validates: Bool
    var registered: [DomainName: String]
    var installed: [DomainName: Installed] = [:]
    /// Bundle defaults by the domain they apply to (an app's own, or a suite).
    var defaultsByDomain: [DomainName: [String: PlistValue]] = [:]
    /// The bundles whose specifiers can constrain each domain's keys, with the suite they name it
    /// by (nil: the bundle's own domain). Every write is checked, so a write to a domain no bundle
    /// describes must cost one look-up, not a walk over every bundle.
    var checksByDomain: [DomainName: [(bundle: SettingsBundle, suite: DomainName?)]] = [:]
    /// The keys the bundles hold secret, derived with ``checksByDomain``.
    var secureKeys = SecureKeys()
    /// Told, on the loop, of each new ``secureKeys``: the change journal, which records a secure
    /// key's changes without their values.
    var didChangeSecureKeys: ((SecureKeys) -> Void)?
    var scanning = false
    /// Told of every domain whose bundle defaults changed (`bundleDefaultsChanged`).
    let notifier: Notifier
    var task: RepeatedTask?
    let watcher: DirectoryWatcher
    /// The bundle directories and, for a configured one that does not exist yet, its nearest
    /// existing ancestor.
    let watched: WatchedDirectories
    var pollInterval: TimeAmount = .seconds(2)
    var scanAgain = false
    /// A copy of a bundle is many files: one scan 100 ms after the first of them.
    let settle: SettleTimer
    /// What a bundle directory is watched for: any file or directory in it changing.
    static let treeMask = DirectoryWatcher.fileChanges | UInt32(IN_CREATE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    /// What an ancestor of a missing directory is watched for: a directory appearing in it.
    static let ancestorMask = UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR)

    init(
        eventLoop: EventLoop, scannerThread: NIOThreadPool, notifier: Notifier, watcher: DirectoryWatcher,
        configuration: DaemonConfiguration, logger: Logger
    ) {
        self.eventLoop = eventLoop
        self.notifier = notifier
        self.watcher = watcher
        self.watched = WatchedDirectories(watcher: watcher)
        self.settle = SettleTimer(eventLoop: eventLoop, delay: .milliseconds(100))
        self.scannerThread = scannerThread
        self.logger = logger
        self.registryPath = configuration.effectiveStateDirectory + "/" + InstalledBundles.registryFileName
        self.directories = configuration.settingsBundleDirectories
        self.validates = configuration.validateSettingsBundles
        let environment = ProcessInfo.processInfo.environment
        self.options = LoadOptions(LANGUAGE: environment["LANGUAGE"], LANG: environment["LANG"])
        var registered: [DomainName: String] = [:]
        do {
            switch try DomainFiles.load(atPath: registryPath) {
            case .missing:
                break
            case .loaded(let values):
                for (name, value) in values {
                    if case .string(let path) = value, let domain = try? DomainName(name) { registered[domain] = path }
                }
            case .corrupt(let reason, let movedTo):
                logger.error(
                    "the registry of registered settings bundles could not be read; they must be registered again",
                    metadata: ["path": "\(registryPath)", "reason": "\(reason)", "movedTo": "\(movedTo)"])
            }
        } catch {
            // Unreadable, or corrupt and impossible to move aside: left as it is. Registrations
            // still work in memory, but writing the registry would fail the same way.
            logger.error(
                "the registry of registered settings bundles could not be read",
                metadata: ["path": "\(registryPath)", "error": "\(error.message)"])
        }
        self.registered = registered
    }

    /// Scans now and watches the directories; the future completes when the first scan is
    /// applied, so the daemon can announce readiness with its bundles already loaded.
    /// `interval` is the period of the repeated scan that replaces a watch that cannot be added.
    func start(interval: TimeAmount) -> EventLoopFuture<Void> {
        pollInterval = interval
        return rescan()
    }

    func stop() {
        task?.cancel()
        task = nil
        settle.cancel()
        watched.removeAll()
    }

    func reconfigure(_ configuration: DaemonConfiguration) {
        eventLoop.preconditionInEventLoop()
        directories = configuration.settingsBundleDirectories
        validates = configuration.validateSettingsBundles
        _ = rescan()
    }

    /// Registers (or replaces) the bundle of `domain` at `path`; succeeds once it is loaded and in force.
    /// Reading the bundle and writing the registry happen on the scanner thread, never on the loop.
    func register(_ domain: DomainName, path: String) -> EventLoopFuture<Installed> {
        eventLoop.preconditionInEventLoop()
        let scanner = self.scanner
        return scannerThread.runIfActive(eventLoop: eventLoop) { () throws -> Installed in
            guard path.hasPrefix("/"), SystemText.isDirectory(path) else {
                throw DefaultsError(.invalidParameter, "\"path\" must be the absolute path of a Settings.bundle directory")
            }
            let found = BundleScanner.Found(path: path, signature: BundleScanner.signature(of: path))
            do {
                return Installed(path: path, signature: found.signature, bundle: try scanner.load(found).get())
            } catch {
                throw DefaultsError(.invalidParameter, "\(error)")
            }
        }.assumeIsolated().map { [self] entry in
            registered[domain] = path
            install(domain, entry)
            rebuildDefaults()
            rememberRegistrations()
            return entry
        }.nonisolated()
    }

    /// Writes the registered bundles to the storage directory, on the scanner thread. Snapshots are
    /// taken on the loop in order and the one scanner thread writes them in order, so the last wins.
    private func rememberRegistrations() {
        var snapshot: [String: PlistValue] = [:]
        for (domain, path) in registered { snapshot[domain.rawValue] = .string(path) }
        let values = snapshot
        let registryPath = self.registryPath
        let logger = self.logger
        scannerThread.submit { _ in
            do {
                try DomainFiles(directory: SystemText.parentDirectory(of: registryPath), format: .binary)
                    .writeAtomically(try PropertyListFile.encode(values, format: .binary), to: registryPath)
            } catch {
                logger.error("could not remember a registered settings bundle", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The check of every value a changeset sets against the bundles describing its keys.
    func check(_ changeset: Changeset) -> DefaultsError? {
        guard validates, let checks = checksByDomain[changeset.domain] else { return nil }
        for (key, value) in changeset {
            guard let value else { continue }  // removing a key is always allowed
            for check in checks {
                if case .refused(let message) = check.bundle.validate(value, forKey: key, suite: check.suite) {
                    return DefaultsError(.invalidValue, message)
                }
            }
        }
        return nil
    }

    func bundle(for domain: DomainName) -> Installed? { installed[domain] }

    /// Reads a bundle again in other languages (for `describeBundle`), on the scanner thread.
    func bundle(for domain: DomainName, languages: [String]) -> EventLoopFuture<SettingsBundle>? {
        guard let entry = installed[domain] else { return nil }
        var localized = self.options
        localized.languages = languages
        let options = localized
        return scannerThread.runIfActive(eventLoop: eventLoop) { () throws -> SettingsBundle in
            try SettingsBundle.load(at: URL(fileURLWithPath: entry.path), options: options)
        }
    }

}
