import DefaultsCore
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix
import SettingsBundles

/// Finding the installed bundles: the scan of the bundle folders on the scanner thread, and the
/// watch that starts one when a folder changes.
extension InstalledBundles {
    var scanner: BundleScanner { BundleScanner(directories: directories, registered: registered, options: options) }

    @discardableResult
    func rescan() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        guard !scanning else {
            // A change noticed during a scan may have come after the scan read its directory.
            scanAgain = true
            return eventLoop.makeSucceededVoidFuture()
        }
        scanning = true
        scanAgain = false
        let done = eventLoop.makePromise(of: Void.self)
        let scanner = self.scanner
        let known = installed.mapValues(\.signature)
        let watching = watcher.isAvailable
        scannerThread.runIfActive(eventLoop: eventLoop) { () -> ([DomainName: BundleScanner.Found], [DomainName: Result<SettingsBundle, SettingsBundleError>], [String: Bool]) in
            let found = scanner.find()
            var loaded: [DomainName: Result<SettingsBundle, SettingsBundleError>] = [:]
            for (domain, entry) in found where known[domain] != entry.signature { loaded[domain] = scanner.load(entry) }
            return (found, loaded, watching ? scanner.directoriesToWatch() : [:])
        }.assumeIsolated().whenComplete { [self] result in
            scanning = false
            defer {
                done.succeed()
                if scanAgain { rescan() }
            }
            guard case .success(let (found, loaded, directories)) = result else { return }
            updateWatches(directories)
            var changed = false
            // A bundle registered (or moved) while this scan ran is not in `found`: not a removal.
            for domain in installed.keys where found[domain] == nil && registered[domain] == scanner.registered[domain] {
                installed[domain] = nil
                changed = true
                logger.info("settings bundle removed", metadata: ["domain": "\(domain)"])
            }
            for (domain, outcome) in loaded {
                switch outcome {
                case .success(let bundle):
                    // A scan loads only bundles it found.
                    guard let entry = found[domain] else { continue }
                    install(domain, Installed(path: entry.path, signature: entry.signature, bundle: bundle))
                    changed = true
                case .failure(let error):
                    logger.error("settings bundle not loaded", metadata: ["domain": "\(domain)", "error": "\(error)"])
                }
            }
            if changed { rebuildDefaults() }
        }
        return done.futureResult
    }

    // MARK: - Watching

    /// Makes the watches match `wanted` (directory → watched only as the ancestor of a missing
    /// one); falls back to the repeated scan when one cannot be added.
    private func updateWatches(_ wanted: [String: Bool]) {
        guard task == nil else { return }
        let masks = wanted.mapValues { $0 ? InstalledBundles.ancestorMask : InstalledBundles.treeMask }
        if let error = watched.update(masks, { [self] event, mask in noticed(event, isAncestor: mask == InstalledBundles.ancestorMask) }) {
            startPolling(because: "\(error)")
        }
    }

    private func startPolling(because reason: String) {
        watched.removeAll()
        logger.warning("settings bundle directories are scanned every \(pollInterval.nanoseconds / 1_000_000) ms instead of watched",
                       metadata: ["reason": "\(reason)"])
        // The repeated task runs on this same loop; `stop()` cancels it and so ends the reference.
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        task = eventLoop.scheduleRepeatedTask(initialDelay: pollInterval, delay: pollInterval) { _ in
            bound.value.rescan()
        }
    }

    private func noticed(_ event: InotifyEvent, isAncestor: Bool) {
        // In an ancestor, only a new directory matters (it may be the configured one).
        if isAncestor && !event.isOverflow && event.mask & UInt32(IN_ISDIR) == 0 { return }
        settle.schedule { [self] in rescan() }
    }

    func install(_ domain: DomainName, _ entry: Installed) {
        installed[domain] = entry
        logger.info(
            "settings bundle loaded",
            metadata: ["domain": "\(domain)", "path": "\(entry.path)", "diagnostics": "\(entry.bundle.diagnostics.count)"])
        for diagnostic in entry.bundle.diagnostics {
            logger.debug("settings bundle diagnostic", metadata: ["domain": "\(domain)", "diagnostic": "\(diagnostic)"])
        }
    }

    /// Rebuilds what is derived from the installed bundles: the defaults layer and the write checks.
    func rebuildDefaults() {
        var result: [DomainName: [String: PlistValue]] = [:]
        var checks: [DomainName: [(bundle: SettingsBundle, suite: DomainName?)]] = [:]
        for (domain, entry) in installed.sorted(by: { $0.key < $1.key }) {
            result[domain, default: [:]].merge(entry.bundle.defaults.app) { _, new in new }
            for (suite, values) in entry.bundle.defaults.suites {
                result[suite, default: [:]].merge(values) { _, new in new }
            }
            // A bundle describes its own domain, also when a specifier names it as a suite, and
            // the other suites its specifiers name.
            checks[domain, default: []] += [(entry.bundle, nil), (entry.bundle, domain)]
            for suite in Set(entry.bundle.specifiers.compactMap(\.suite)) where suite != domain {
                checks[suite, default: []].append((entry.bundle, suite))
            }
        }
        checksByDomain = checks
        let secure = SecureKeys(checks)
        if secure != secureKeys {
            secureKeys = secure
            didChangeSecureKeys?(secure)
        }
        let changed = Set(result.keys).union(defaultsByDomain.keys).filter { result[$0] != defaultsByDomain[$0] }
        defaultsByDomain = result
        for domain in changed.sorted() { notifier.publishBundleDefaultsChanged(domain) }
    }
}
