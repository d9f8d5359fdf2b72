import DefaultsCore
import Foundation
import Logging
import Synchronization

/// Foundation's `UserDefaults`, backed by defaultsd: values shared between processes, and
/// notifications when any process changes them.
///
/// ```swift
/// let defaults = SharedDefaults.standard          // was: UserDefaults.standard
/// defaults.register(defaults: ["warpFactor": 5])
/// defaults.set(7.5, forKey: "warpFactor")
/// defaults.double(forKey: "warpFactor")           // 7.5, in this process and every other
/// ```
///
/// Search order, as on Apple platforms: the argument domain (`-key value`), the app domain (or
/// the suite), added suites, `NSGlobalDomain`, the Settings bundle defaults of the app domain and
/// suites, the registration domain.
///
/// Reads are answered from a local cache and never wait on the socket once the search list is
/// loaded (the first read loads it). Writes update the cache at once and are sent without waiting;
/// ``synchronize()`` waits until the daemon has made them durable.
///
/// Owner: shared. Immutable apart from what ``Engine`` guards; safe from any thread.
public final class SharedDefaults: Sendable {
    /// `userInfo` key of `didChangeNotification`: the changed keys, sorted (`[String]`).
    public static let changedKeysKey = "DefaultsChangedKeys"
    /// `userInfo` key of `didChangeNotification`: the changed domain (`String`).
    public static let changedDomainKey = "DefaultsChangedDomain"
    /// `userInfo` key of `didChangeNotification`: who changed it (``ChangeOrigin``).
    public static let changeOriginKey = "DefaultsChangeOrigin"

    public static let globalDomain = "NSGlobalDomain"
    public static let argumentDomain = "NSArgumentDomain"
    public static let registrationDomain = "NSRegistrationDomain"

    /// The app domain (bundle identifier, else process name; `$DEFAULTSD_APP_DOMAIN` wins) on the
    /// daemon's default socket (`$DEFAULTSD_SOCKET` wins).
    public static let standard = SharedDefaults(configuration: .fromEnvironment())

    public let configuration: DefaultsConfiguration
    /// The domain this instance writes to: the app domain, or its suite.
    public let domainName: String
    /// True for an instance made with `init?(suiteName:)`.
    public let isSuite: Bool

    let domain: DomainName
    let view = DefaultsView()
    let engine: Engine
    /// What `withObservationTracking` learns typed reads from (``ObservationAnchor``).
    @usableFromInline let observationAnchor = ObservationAnchor()
    /// The typed keys whose defaults this instance registered (``registerDefault(of:)``).
    let registeredKeys = Mutex<Set<ObjectIdentifier>>([])
    /// Feeds every change along the search list to `observationAnchor`.
    private let observationFeed = Mutex<DefaultsObservation?>(nil)

    /// An instance for `configuration.appDomain`. Instances for the same daemon share one
    /// connection, one cache and one registration domain.
    public convenience init(configuration: DefaultsConfiguration = .fromEnvironment()) {
        let name = (try? DomainName(configuration.appDomain)) != nil
            ? configuration.appDomain : DefaultsConfiguration.sanitized(configuration.appDomain)
        // "app" is a valid domain name: DomainName cannot refuse it.
        self.init(configuration: configuration, domain: (try? DomainName(name)) ?? (try! DomainName("app")), isSuite: false)
    }

    /// A suite's defaults, searched as: argument domain, the suite, `NSGlobalDomain`, registration.
    /// `nil` gives the app domain. Returns nil, as Apple documents it as an error, for the app's
    /// own domain, for `NSGlobalDomain` and for names that are not valid domain names.
    public convenience init?(suiteName: String?, configuration: DefaultsConfiguration = .fromEnvironment()) {
        guard let suiteName else {
            self.init(configuration: configuration)
            return
        }
        guard suiteName != configuration.appDomain, suiteName != SharedDefaults.globalDomain,
            let domain = try? DomainName(suiteName)
        else { return nil }
        self.init(configuration: configuration, domain: domain, isSuite: true)
    }

    private init(configuration: DefaultsConfiguration, domain: DomainName, isSuite: Bool) {
        self.configuration = configuration
        self.domain = domain
        self.domainName = domain.rawValue
        self.isSuite = isSuite
        self.engine = Engine.shared(for: configuration)
        view.owner.withLock { $0.object = self }
        engine.addView(
            view, searchList: SearchList(appDomain: domain, searchesArguments: true),
            volatile: [SharedDefaults.argumentDomain: ArgumentDomain.current])
        let anchor = observationAnchor
        let feed = observe { change in anchor.changed(change.keys) }
        observationFeed.withLock { $0 = feed }
    }

    deinit { engine.removeView(view) }

    /// The object `didChangeNotification` is posted with (the `UserDefaults` subclass sets itself).
    func setNotificationObject(_ object: AnyObject) { view.owner.withLock { $0.object = object } }

    // MARK: - Reading

    /// The value along the search list, as a ``PlistValue`` (integer, real and bool kept apart).
    @inline(__always)
    public func value(forKey key: String) -> PlistValue? {
        if let cached = view.cached(key) { return cached }
        return loadAndRead(key)
    }

    private func loadAndRead(_ key: String) -> PlistValue? {
        engine.waitUntilReady(view)
        return view.snapshot.withLock { $0.resolved[key] }
    }

    /// Loads the search list without blocking a thread (the first synchronous read would block
    /// until it is loaded): call it early from async code. Returns when the domains are loaded,
    /// the daemon turns out to be unreachable, or `loadTimeout` passes.
    public func load() async {
        if !view.snapshot.withLock({ $0.ready }) { await engine.ready(view) }
    }

    /// Swift-native `String`, `Int`, `Double`, `Bool`, `Date`, `Data`, `[Any]`, `[String: Any]`.
    public func object(forKey key: String) -> Any? { value(forKey: key)?.foundationValue }
    /// A string, or a number's text (`5` → `"5"`, `true` → `"1"`).
    public func string(forKey key: String) -> String? { Conversions.string(value(forKey: key)) }
    public func array(forKey key: String) -> [Any]? { Conversions.array(value(forKey: key)) }
    public func dictionary(forKey key: String) -> [String: Any]? { Conversions.dictionary(value(forKey: key)) }
    public func data(forKey key: String) -> Data? { Conversions.data(value(forKey: key)) }
    /// Only an array whose elements are all strings; nothing is converted.
    public func stringArray(forKey key: String) -> [String]? { Conversions.stringArray(value(forKey: key)) }
    /// Integers; reals truncated; bools 1/0; numeric strings (`"12"` → 12); else 0.
    public func integer(forKey key: String) -> Int { Conversions.integer(value(forKey: key)) }
    public func float(forKey key: String) -> Float { Conversions.float(value(forKey: key)) }
    public func double(forKey key: String) -> Double { Conversions.double(value(forKey: key)) }
    /// Bools; numbers ≠ 0; strings `"YES"`, `"true"`, `"1"` (`NSString.boolValue`); else false.
    public func bool(forKey key: String) -> Bool { Conversions.bool(value(forKey: key)) }
    /// A path (`~` expanded) as a file URL, or a stored URL string with a scheme.
    public func url(forKey key: String) -> URL? { Conversions.url(value(forKey: key)) }

    /// Every key along the search list with the value `object(forKey:)` answers for it.
    public func dictionaryRepresentation() -> [String: Any] {
        resolvedValues().mapValues(\.foundationValue)
    }

    /// ``dictionaryRepresentation()`` as property-list values.
    public func resolvedValues() -> [String: PlistValue] {
        if !view.snapshot.withLock({ $0.ready }) { engine.waitUntilReady(view) }
        return view.snapshot.withLock { $0.resolved }
    }

    /// True when an administrator's managed preferences force `key` on one of this object's
    /// domains (its app domain, suites, `NSGlobalDomain`): reads answer the forced value, and a
    /// write to the key is refused (`forced`).
    ///
    /// ```swift
    /// if defaults.objectIsForced(forKey: "warpFactor") { slider.isEnabled = false }
    /// ```
    public func objectIsForced(forKey key: String) -> Bool {
        if !view.snapshot.withLock({ $0.ready }) { engine.waitUntilReady(view) }
        return view.snapshot.withLock { $0.forced.contains(key) }
    }

    /// True when an administrator forces `key` on `domain`, as far as this process has read the
    /// domain (one of this object's domains always is).
    public func objectIsForced(forKey key: String, inDomain domain: String) -> Bool {
        if !view.snapshot.withLock({ $0.ready }) { engine.waitUntilReady(view) }
        guard let name = try? DomainName(domain) else { return false }
        return engine.perform { state in (state.isForced(key, in: name), []) }
    }

    // MARK: - Writing

    /// Stores a property-list value (nil removes the key). Anything else is refused and logged;
    /// use ``trySet(_:forKey:)`` to get the error.
    public func set(_ value: Any?, forKey key: String) {
        do { try trySet(value, forKey: key) } catch { logRefusal(forKey: key, error) }
    }

    /// Stores a property-list value (nil removes the key), or throws
    /// ``DefaultsClientError/notAPropertyList(path:reason:)`` and stores nothing.
    public func trySet(_ value: Any?, forKey key: String) throws(DefaultsClientError) {
        try engine.edit(makeEdit(value, forKey: key), of: domain)
    }

    public func set(_ value: Int, forKey key: String) { setValue(.integer(Int64(value)), forKey: key) }
    /// Stored as the real its decimal form stands for (`12.34`, not `12.34000015258789`), as
    /// Foundation stores a `Float`.
    public func set(_ value: Float, forKey key: String) { set(PlistValue.realValue(of: value), forKey: key) }
    /// A NaN or an infinity is refused and logged, as by ``setValue(_:forKey:)``.
    public func set(_ value: Double, forKey key: String) { setValue(.real(value), forKey: key) }
    public func set(_ value: Bool, forKey key: String) { setValue(.bool(value), forKey: key) }
    /// A file URL is stored as its path, another URL as its absolute string; nil removes the key.
    public func set(_ url: URL?, forKey key: String) {
        guard let url else { return removeObject(forKey: key) }
        setValue(.string(PlistBridge.urlString(url)), forKey: key)
    }

    /// Stores a ``PlistValue`` as it is. One holding a NaN or an infinity is refused and logged.
    public func setValue(_ value: PlistValue, forKey key: String) {
        do { try engine.edit(makeEdit(storing: value, forKey: key), of: domain) } catch { logRefusal(forKey: key, error) }
    }

    /// Logs a value a setter refused (`set` and `setValue` change nothing then).
    func logRefusal(forKey key: String, _ error: some CustomStringConvertible) {
        engine.logger.error("refused to store a value", metadata: ["key": "\(key)", "error": "\(error)"])
    }

    public func removeObject(forKey key: String) {
        do { try engine.edit(makeEdit(nil, forKey: key), of: domain) } catch {
            engine.logger.error("refused to remove a key", metadata: ["key": "\(key)", "error": "\(error)"])
        }
    }

    /// Writes and waits for the daemon's answer: throws if it refuses the write (the cache is then
    /// put back) or cannot be reached within `synchronizeTimeout`. Not durable yet: see ``flush()``.
    public func write(_ value: Any?, forKey key: String) async throws(DefaultsClientError) {
        let edit = try makeEdit(value, forKey: key)
        let ticket = Ticket(eventLoop: engine.eventLoop)
        engine.edit(edit, of: domain, ticket: ticket)
        try await engine.await(ticket, timeout: configuration.synchronizeTimeout)
    }

    private func makeEdit(_ value: Any?, forKey key: String) throws(DefaultsClientError) -> Edit {
        try validate(key)
        guard let value else { return .changes(Changeset(domain: domain, changes: [key: PlistValue?.none])) }
        return .changes(Changeset(domain: domain, changes: [key: .some(try PlistBridge.value(from: value, path: key))]))
    }

    /// A typed value needs no conversion, only the check (one built by hand may hold a NaN).
    private func makeEdit(storing value: PlistValue, forKey key: String) throws(DefaultsClientError) -> Edit {
        try validate(key)
        return .changes(Changeset(domain: domain, changes: [key: .some(try PlistBridge.checked(value, path: key))]))
    }

    private func validate(_ key: String) throws(DefaultsClientError) {
        do { try DefaultsKey.validate(key) } catch { throw .invalid(error) }
    }

    // MARK: - Durability

    /// Waits until the daemon has made every earlier write of this process durable on disk: true.
    /// False if one of them was refused (since the previous `synchronize`), the disk write failed,
    /// or the daemon could not be reached (a connection attempt made at that moment failed), or
    /// after `synchronizeTimeout`. On the client's event loop it cannot wait and returns false.
    @discardableResult
    public func synchronize() -> Bool {
        if engine.eventLoop.inEventLoop { return false }
        let ticket = engine.synchronizeTicket()
        switch engine.wait(for: ticket, timeout: configuration.synchronizeTimeout) {
        case .success: return true
        case .failure(let error):
            engine.logger.warning("synchronize failed", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// ``synchronize()`` that says why: the first refused write, `notDurable`, `unavailable` or `timedOut`.
    public func flush() async throws(DefaultsClientError) {
        let ticket = engine.synchronizeTicket()
        try await engine.await(ticket, timeout: configuration.synchronizeTimeout)
    }

}
