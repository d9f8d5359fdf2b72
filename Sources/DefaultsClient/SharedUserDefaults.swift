import DefaultsCore
import Foundation

/// A `UserDefaults` whose every open member is answered by a ``SharedDefaults``, so code written
/// against `UserDefaults` runs unchanged on defaultsd when it is handed this instance:
///
/// ```swift
/// let defaults: UserDefaults = SharedUserDefaults.standard   // was: UserDefaults.standard
/// ```
///
/// What cannot be redirected: `UserDefaults.standard` itself (a private instance of the base
/// class; overriding `standard` only changes `SharedUserDefaults.standard`), so code that calls
/// `UserDefaults.standard` directly keeps using Foundation's own plist files. KVC/KVO do not exist
/// on Linux; use `didChangeNotification` or ``SharedDefaults/changes()``.
///
/// Owner: shared, like the ``SharedDefaults`` it wraps (Foundation declares `UserDefaults` not
/// `Sendable`, but every member here forwards to the thread-safe ``SharedDefaults``); Foundation's
/// base-class state is unused.
public final class SharedUserDefaults: UserDefaults {
    /// The instance every member forwards to.
    public let shared: SharedDefaults
    /// Foundation's `init(suiteName:)` calls `setVolatileDomain(_:forName: NSArgumentDomain)` on
    /// the instance being built; the argument domain is already parsed, so that call is ignored.
    /// Written once, at the end of `init`, before the instance is shared.
    private var initializing: Bool
    nonisolated(unsafe) private static let standardInstance = SharedUserDefaults(SharedDefaults.standard)

    /// ``SharedDefaults/standard`` as a `UserDefaults`.
    public override class var standard: UserDefaults { standardInstance }

    /// Wraps `shared`; `didChangeNotification` is then posted with this object.
    public init(_ shared: SharedDefaults) {
        self.shared = shared
        self.initializing = true
        // Foundation refuses only the app's own name and NSGlobalDomain as a suite, never nil.
        super.init(suiteName: nil)!
        initializing = false
        shared.setNotificationObject(self)
    }

    /// A suite on the default daemon (nil: the app domain); nil for the app's own domain and
    /// `NSGlobalDomain`. Also makes `SharedUserDefaults()` available.
    public override convenience init?(suiteName suitename: String?) {
        guard let shared = SharedDefaults(suiteName: suitename) else { return nil }
        self.init(shared)
    }

    // MARK: Reading: Swift-native values and Apple's conversions

    public override func object(forKey defaultName: String) -> Any? { shared.object(forKey: defaultName) }
    public override func string(forKey defaultName: String) -> String? { shared.string(forKey: defaultName) }
    public override func array(forKey defaultName: String) -> [Any]? { shared.array(forKey: defaultName) }
    public override func dictionary(forKey defaultName: String) -> [String: Any]? { shared.dictionary(forKey: defaultName) }
    public override func data(forKey defaultName: String) -> Data? { shared.data(forKey: defaultName) }
    public override func stringArray(forKey defaultName: String) -> [String]? { shared.stringArray(forKey: defaultName) }
    public override func integer(forKey defaultName: String) -> Int { shared.integer(forKey: defaultName) }
    public override func float(forKey defaultName: String) -> Float { shared.float(forKey: defaultName) }
    public override func double(forKey defaultName: String) -> Double { shared.double(forKey: defaultName) }
    public override func bool(forKey defaultName: String) -> Bool { shared.bool(forKey: defaultName) }
    public override func url(forKey defaultName: String) -> URL? { shared.url(forKey: defaultName) }
    public override func dictionaryRepresentation() -> [String: Any] { shared.dictionaryRepresentation() }
    public override func objectIsForced(forKey key: String) -> Bool { shared.objectIsForced(forKey: key) }
    public override func objectIsForced(forKey key: String, inDomain domain: String) -> Bool {
        shared.objectIsForced(forKey: key, inDomain: domain)
    }

    // MARK: Writing: never forwarded to Foundation, which calls fatalError on a non-plist value

    /// Foundation's typed setters arrive here as `NSNumber`; the value's own type is kept
    /// (`objCType`: bool, integer or real). A value that is not a property-list value is logged
    /// and ignored (Apple raises an exception; nothing here crashes).
    public override func set(_ value: Any?, forKey defaultName: String) { shared.set(value, forKey: defaultName) }
    public override func set(_ value: Int, forKey defaultName: String) { shared.set(value, forKey: defaultName) }
    public override func set(_ value: Float, forKey defaultName: String) { shared.set(value, forKey: defaultName) }
    public override func set(_ value: Double, forKey defaultName: String) { shared.set(value, forKey: defaultName) }
    public override func set(_ value: Bool, forKey defaultName: String) { shared.set(value, forKey: defaultName) }
    public override func set(_ url: URL?, forKey defaultName: String) { shared.set(url, forKey: defaultName) }
    /// Foundation's own `removeObject` does not go through `set(nil)`, so it is overridden too.
    public override func removeObject(forKey defaultName: String) { shared.removeObject(forKey: defaultName) }
    public override func register(defaults registrationDictionary: [String: Any]) {
        shared.register(defaults: registrationDictionary)
    }

    // MARK: Domains

    public override func addSuite(named suiteName: String) { shared.addSuite(named: suiteName) }
    public override func removeSuite(named suiteName: String) { shared.removeSuite(named: suiteName) }
    public override var volatileDomainNames: [String] { shared.volatileDomainNames }
    public override func volatileDomain(forName domainName: String) -> [String: Any] {
        shared.volatileDomain(forName: domainName)
    }
    public override func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        if initializing, domainName == SharedDefaults.argumentDomain { return }
        shared.setVolatileDomain(domain, forName: domainName)
    }
    public override func removeVolatileDomain(forName domainName: String) { shared.removeVolatileDomain(forName: domainName) }
    public override func persistentDomain(forName domainName: String) -> [String: Any]? {
        shared.persistentDomain(forName: domainName)
    }
    public override func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        shared.setPersistentDomain(domain, forName: domainName)
    }
    public override func removePersistentDomain(forName domainName: String) {
        shared.removePersistentDomain(forName: domainName)
    }

    /// Returns once the daemon has made every earlier write durable (true), or could not (false).
    @discardableResult
    public override func synchronize() -> Bool { shared.synchronize() }
}
