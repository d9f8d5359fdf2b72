import DefaultsCore
import Foundation
import Logging

/// The domains beyond the app's own: registered defaults, suites, volatile domains and whole
/// persistent domains, as `UserDefaults` offers them.
extension SharedDefaults {
    /// Adds values to the registration domain, searched last. Process-wide (shared by every
    /// instance on the same daemon), never stored; later calls overwrite earlier keys.
    /// Values that are not property-list values are skipped and logged.
    public func register(defaults registrationDictionary: [String: Any]) {
        let values = convert(registrationDictionary, what: "register(defaults:)")
        engine.perform { state in ((), state.register(values)) }
    }

    /// Registers a typed key's default (``Key``): in the registration domain, as
    /// ``register(defaults:)`` does, and with the daemon for this instance's domain, so that
    /// `defaults read-effective` and the Settings app show it while this process runs.
    func registerTypedDefault(_ value: PlistValue, forKey key: String) {
        let domain = self.domain
        engine.perform { state in
            state.outbox.append(.publishDefaults(domain, [key: value]))
            return ((), state.register([key: value]))
        }
    }

    /// Inserts a domain after the app domain (and earlier suites), before `NSGlobalDomain`, for
    /// this instance. The app's own domain and `NSGlobalDomain` are ignored, as Apple documents.
    public func addSuite(named suiteName: String) {
        guard suiteName != domainName, suiteName != SharedDefaults.globalDomain, let suite = try? DomainName(suiteName) else {
            engine.logger.warning("addSuite(named:) ignored", metadata: ["suite": "\(suiteName)"])
            return
        }
        engine.updateSearchList(of: view) { $0.addSuite(suite) }
    }

    public func removeSuite(named suiteName: String) {
        guard suiteName != domainName, let suite = try? DomainName(suiteName) else { return }
        engine.updateSearchList(of: view) { $0.removeSuite(suite) }
    }

    /// The search list's persistent domains, in order (the app domain or suite, added suites, `NSGlobalDomain`).
    public var searchList: [String] {
        engine.record(of: view)?.searchList.persistentDomains.map(\.rawValue) ?? []
    }

    /// The volatile domains of this instance (`NSArgumentDomain`, those set with
    /// `setVolatileDomain`) and the process-wide `NSRegistrationDomain`.
    public var volatileDomainNames: [String] {
        var names = Set(engine.record(of: view)?.volatile.keys ?? [:].keys)
        names.insert(SharedDefaults.registrationDomain)
        return names.sorted()
    }

    /// A volatile domain's values; `[:]` when there is none. `NSRegistrationDomain` gives the registered defaults.
    public func volatileDomain(forName domainName: String) -> [String: Any] {
        volatileValues(forName: domainName).mapValues(\.foundationValue)
    }

    func volatileValues(forName domainName: String) -> [String: PlistValue] {
        if domainName == SharedDefaults.registrationDomain { return engine.cache.state.withLock { $0.registration } }
        return engine.record(of: view)?.volatile[domainName] ?? [:]
    }

    /// Replaces a volatile domain (Apple replaces; Foundation on Linux merges). `NSArgumentDomain`
    /// is searched first and `NSRegistrationDomain` last; other names are only kept.
    public func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        setVolatileValues(convert(domain, what: "setVolatileDomain"), forName: domainName)
    }

    func setVolatileValues(_ values: [String: PlistValue]?, forName domainName: String) {
        engine.perform { state in ((), state.setVolatileDomain(values, named: domainName, of: view)) }
    }

    public func removeVolatileDomain(forName domainName: String) {
        setVolatileValues(nil, forName: domainName)
    }

    // MARK: - Persistent domains

    /// A stored domain's values (any domain, `NSGlobalDomain` included), or nil when it holds
    /// nothing. The first call for a domain loads it and keeps it up to date from then on.
    public func persistentDomain(forName domainName: String) -> [String: Any]? {
        persistentValues(forName: domainName)?.mapValues(\.foundationValue)
    }

    public func persistentValues(forName domainName: String) -> [String: PlistValue]? {
        guard let domain = try? DomainName(domainName) else { return nil }
        engine.waitUntilLoaded(domain)
        let values = engine.cache.state.withLock { $0.domains[domain]?.visible ?? [:] }
        return values.isEmpty ? nil : values
    }

    /// Replaces every value of a stored domain. Volatile domain names are refused (logged).
    public func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        guard let name = try? DomainName(domainName) else {
            engine.logger.error("setPersistentDomain refused", metadata: ["domain": "\(domainName)"])
            return
        }
        let values = convert(domain, what: "setPersistentDomain")
        engine.edit(.replace(values), of: name)
        announceOutsideSearchList(name, keys: Set(values.keys))
    }

    /// Removes every value of a stored domain, and its file.
    public func removePersistentDomain(forName domainName: String) {
        guard let name = try? DomainName(domainName) else {
            engine.logger.error("removePersistentDomain refused", metadata: ["domain": "\(domainName)"])
            return
        }
        engine.edit(.replace([:]), of: name)
        announceOutsideSearchList(name, keys: [])
    }

    /// Foundation posts `didChangeNotification` at every `setPersistentDomain` and
    /// `removePersistentDomain`, whatever the domain. A domain of this instance's search list is
    /// posted by its change, as any change is; one outside it is posted here, once per call, on
    /// the delivery queue after what came before.
    private func announceOutsideSearchList(_ name: DomainName, keys: Set<String>) {
        guard engine.record(of: view)?.searchList.includes(name) != true else { return }
        let view = self.view
        engine.cache.deliveryQueue.async {
            guard let object = view.owner.withLock({ $0.object }) else { return }
            NotificationCenter.default.post(
                name: UserDefaults.didChangeNotification, object: object,
                userInfo: [
                    SharedDefaults.changedKeysKey: keys.sorted(), SharedDefaults.changedDomainKey: name.rawValue,
                    SharedDefaults.changeOriginKey: ChangeOrigin.local,
                ])
        }
    }

    private func convert(_ dictionary: [String: Any], what: String) -> [String: PlistValue] {
        var values: [String: PlistValue] = [:]
        values.reserveCapacity(dictionary.count)
        for (key, object) in dictionary {
            do { values[key] = try PlistBridge.value(from: object, path: key) } catch {
                engine.logger.error("\(what): value refused", metadata: ["key": "\(key)", "error": "\(error)"])
            }
        }
        return values
    }
}
