import DefaultsCore
import Foundation
import Logging
import NIOCore
import NIOPosix
import SettingsBundles

/// The Settings bundles the daemon knows: their defaults layer and their write checks.
///
/// Owned by the store's event loop. A repeated task hands a `BundleScanner` to the scanner
/// thread; what it found comes back to the loop, which swaps in the new bundles. Bundles
/// registered over the socket (`registerBundle`) are remembered in the storage directory
/// (`.defaultsd-bundles.plist`).
final class InstalledBundles {
    struct Installed {
        var path: String
        var signature: String
        var bundle: SettingsBundle
    }

    private let eventLoop: EventLoop
    private let scannerThread: NIOThreadPool
    private let logger: Logger
    private let registryPath: String
    private var directories: [String]
    private var options: LoadOptions
    private(set) var validates: Bool
    private var registered: [DomainName: String]
    private(set) var installed: [DomainName: Installed] = [:]
    /// Bundle defaults by the domain they apply to (an app's own, or a suite).
    private(set) var defaultsByDomain: [DomainName: [String: PlistValue]] = [:]
    private var scanning = false
    /// Told of every domain whose bundle defaults changed (the notifier's `bundleDefaultsChanged`).
    var onDefaultsChanged: ((DomainName) -> Void)?
    private var task: RepeatedTask?

    init(eventLoop: EventLoop, scannerThread: NIOThreadPool, configuration: DaemonConfiguration, logger: Logger) {
        self.eventLoop = eventLoop
        self.scannerThread = scannerThread
        self.logger = logger
        self.registryPath = configuration.storageDirectory + "/.defaultsd-bundles.plist"
        self.directories = configuration.settingsBundleDirectories
        self.validates = configuration.validateSettingsBundles
        let environment = ProcessInfo.processInfo.environment
        self.options = LoadOptions(LANGUAGE: environment["LANGUAGE"], LANG: environment["LANG"])
        var registered: [DomainName: String] = [:]
        if let data = FileManager.default.contents(atPath: registryPath), let values = try? PropertyListFile.decode(data) {
            for (name, value) in values {
                if case .string(let path) = value, let domain = try? DomainName(name) { registered[domain] = path }
            }
        }
        self.registered = registered
    }

    /// Scans now, then every `interval`; the future completes when the first scan is applied, so
    /// the daemon can announce readiness with its bundles already loaded.
    func start(interval: TimeAmount) -> EventLoopFuture<Void> {
        let first = rescan()
        // The repeated task runs on this same loop; `stop()` cancels it and so ends the reference.
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        task = eventLoop.scheduleRepeatedTask(initialDelay: interval, delay: interval) { _ in
            bound.value.rescan()
        }
        return first
    }

    func stop() { task?.cancel() }

    func reconfigure(_ configuration: DaemonConfiguration) {
        eventLoop.assertInEventLoop()
        directories = configuration.settingsBundleDirectories
        validates = configuration.validateSettingsBundles
        _ = rescan()
    }

    /// Registers (or replaces) the bundle of `domain` at `path`; succeeds once it is loaded and in force.
    /// Reading the bundle and writing the registry happen on the scanner thread, never on the loop.
    func register(_ domain: DomainName, path: String) -> EventLoopFuture<Installed> {
        eventLoop.assertInEventLoop()
        let scanner = self.scanner
        return scannerThread.runIfActive(eventLoop: eventLoop) { () throws -> Installed in
            var isDirectory: ObjCBool = false
            guard path.hasPrefix("/"), FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
                isDirectory.boolValue
            else {
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
                try DomainFiles(directory: (registryPath as NSString).deletingLastPathComponent, format: .binary)
                    .writeAtomically(try PropertyListFile.encode(values, format: .binary), to: registryPath)
            } catch {
                logger.error("could not remember a registered settings bundle", metadata: ["error": "\(error)"])
            }
        }
    }

    /// The check of every value a changeset sets against the bundles describing its keys.
    func check(_ changeset: Changeset) -> DefaultsError? {
        guard validates, !installed.isEmpty else { return nil }
        for (key, value) in changeset.changes {
            guard let value else { continue }  // removing a key is always allowed
            for (owner, entry) in installed {
                // A bundle describes its own domain (suite nil) and the suites its specifiers name.
                let suites: [DomainName?] = owner == changeset.domain ? [nil, changeset.domain] : [changeset.domain]
                for suite in suites {
                    if case .refused(let message) = entry.bundle.validate(value, forKey: key, suite: suite) {
                        return DefaultsError(.invalidValue, message)
                    }
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

    // MARK: - Scanning

    private var scanner: BundleScanner { BundleScanner(directories: directories, registered: registered, options: options) }

    @discardableResult
    private func rescan() -> EventLoopFuture<Void> {
        eventLoop.assertInEventLoop()
        guard !scanning else { return eventLoop.makeSucceededVoidFuture() }
        scanning = true
        let done = eventLoop.makePromise(of: Void.self)
        let scanner = self.scanner
        let known = installed.mapValues(\.signature)
        scannerThread.runIfActive(eventLoop: eventLoop) { () -> ([DomainName: BundleScanner.Found], [DomainName: Result<SettingsBundle, SettingsBundleError>]) in
            let found = scanner.find()
            var loaded: [DomainName: Result<SettingsBundle, SettingsBundleError>] = [:]
            for (domain, entry) in found where known[domain] != entry.signature { loaded[domain] = scanner.load(entry) }
            return (found, loaded)
        }.assumeIsolated().whenComplete { [self] result in
            scanning = false
            defer { done.succeed() }
            guard case .success(let (found, loaded)) = result else { return }
            var changed = false
            // A bundle registered while this scan ran is not in `found`; it is not a removal.
            for domain in installed.keys where found[domain] == nil && registered[domain] == nil {
                installed[domain] = nil
                changed = true
                logger.info("settings bundle removed", metadata: ["domain": "\(domain)"])
            }
            for (domain, outcome) in loaded {
                switch outcome {
                case .success(let bundle):
                    install(domain, Installed(path: found[domain]!.path, signature: found[domain]!.signature, bundle: bundle))
                    changed = true
                case .failure(let error):
                    logger.error("settings bundle not loaded", metadata: ["domain": "\(domain)", "error": "\(error)"])
                }
            }
            if changed { rebuildDefaults() }
        }
        return done.futureResult
    }

    private func install(_ domain: DomainName, _ entry: Installed) {
        installed[domain] = entry
        logger.info(
            "settings bundle loaded",
            metadata: ["domain": "\(domain)", "path": "\(entry.path)", "diagnostics": "\(entry.bundle.diagnostics.count)"])
        for diagnostic in entry.bundle.diagnostics {
            logger.debug("settings bundle diagnostic", metadata: ["domain": "\(domain)", "diagnostic": "\(diagnostic)"])
        }
    }

    private func rebuildDefaults() {
        var result: [DomainName: [String: PlistValue]] = [:]
        for (domain, entry) in installed.sorted(by: { $0.key < $1.key }) {
            result[domain, default: [:]].merge(entry.bundle.defaults.app) { _, new in new }
            for (suite, values) in entry.bundle.defaults.suites {
                result[suite, default: [:]].merge(values) { _, new in new }
            }
        }
        let changed = Set(result.keys).union(defaultsByDomain.keys).filter { result[$0] != defaultsByDomain[$0] }
        defaultsByDomain = result
        for domain in changed.sorted() { onDefaultsChanged?(domain) }
    }
}
