import DefaultsCore
import Foundation
import Synchronization

/// The namespace of typed keys: declare each key once, as a static member of `Keys`, with its
/// name, type and default; read and write it by that member.
///
/// ```swift
/// extension Keys {
///     static let warp = Key<Double>("warpFactor", default: 5)
///     static let crew = Key<Crew>("crew", default: Crew(captain: "Picard"))   // any Codable type
/// }
/// defaults[.warp]            // 5.0 until someone sets it, in this process or any other
/// defaults[.warp] = 7
/// @Default(.warp) var warp   // the same key, as a property
/// ```
///
/// A class so that the members a program adds in `extension Keys` are found through any
/// `Key<Value>` (`defaults[.warp]`); a program never makes one itself.
open class Keys: @unchecked Sendable {
    /// The key's name in its domain: any non-empty string, dots included.
    public let name: String

    fileprivate init(name: String) { self.name = name }
}

/// A typed key: its name, the type of its value and the value read while the key is absent or
/// holds something that is not a `Value`.
///
/// `Value` is any ``DefaultsValue`` (numbers, strings, dates, data, URLs, arrays and dictionaries
/// of them, `RawRepresentable` enums), converted as the typed getters convert, or any `Codable`
/// type, stored as its natural property-list structure (``PlistValueEncoder``): a struct as a
/// dictionary, so `defaults read`, the Settings app and a hand edit see its fields. A stored
/// value that no longer decodes (an old shape, after an app update) reads as the default, and
/// is logged once; it never traps.
///
/// The default is registered (``SharedDefaults/register(_:)``) the first time the key is used
/// with a `SharedDefaults`, so `defaults read-effective` and the Settings app show it too.
///
/// Owned by the program that declares it; immutable but for the record of whether a decode
/// failure was logged.
public final class Key<Value: Sendable>: Keys, @unchecked Sendable {
    public let defaultValue: Value
    /// The stored form of `defaultValue`, registered; nil when it has none (an `Optional` nil)
    /// or the key does not register it (a `@Default` named by a string).
    let registeredDefault: PlistValue?
    let decode: @Sendable (PlistValue) throws -> Value
    let encode: @Sendable (Value) throws -> PlistValue?
    private let failureLogged = Atomic<Bool>(false)
    /// The key's path for Swift's Observation (``ObservationAnchor``), made once.
    let observationPath: KeyPath<ObservationAnchor, Int>
    /// The `SharedDefaults` (by identity) this key's default was last registered with: one
    /// comparison on every read, and registration happens once per instance in practice.
    let registeredWith = Atomic<Int>(0)

    /// A key whose value converts as the typed getters do (`Double` reads an integer `5` as `5.0`).
    public convenience init(_ name: String, default defaultValue: Value) where Value: DefaultsValue {
        self.init(name, default: defaultValue, registers: true)
    }

    /// A key whose value is any `Codable` type, stored as its property-list structure.
    @_disfavoredOverload
    public convenience init(_ name: String, default defaultValue: Value) where Value: Codable {
        self.init(name, default: defaultValue, registers: true)
    }

    init(_ name: String, default defaultValue: Value, registers: Bool) where Value: DefaultsValue {
        self.defaultValue = defaultValue
        self.registeredDefault = registers ? defaultValue.defaultsValue : nil
        self.decode = { value throws(KeyDecodingError) in
            guard let converted = Value(defaultsValue: value) else { throw KeyDecodingError(value: value, type: Value.self) }
            return converted
        }
        self.encode = { value throws(NoPropertyListForm) in
            if let stored = value.defaultsValue { return stored }
            // A nil `Optional` removes the key; anything else without a form is refused.
            guard (value as? any OptionalDefaultsValue)?.isNone == true else { throw NoPropertyListForm() }
            return nil
        }
        self.observationPath = ObservationAnchor.path(of: name)
        super.init(name: name)
    }

    @_disfavoredOverload
    init(_ name: String, default defaultValue: Value, registers: Bool) where Value: Codable {
        self.defaultValue = defaultValue
        self.registeredDefault = registers ? (try? PlistValueEncoder().encode(defaultValue)) ?? nil : nil
        // The last value decoded, by what it was decoded from: a read of an unchanged value costs
        // one comparison of property-list values instead of a decode.
        let lastDecoded = Mutex<(stored: PlistValue, value: Value)?>(nil)
        self.decode = { stored in
            if let last = lastDecoded.withLock({ $0 }), last.stored == stored { return last.value }
            let value = try PlistValueDecoder().decode(Value.self, from: stored)
            lastDecoded.withLock { $0 = (stored, value) }
            return value
        }
        self.encode = { try PlistValueEncoder().encode($0) }
        self.observationPath = ObservationAnchor.path(of: name)
        super.init(name: name)
    }

    /// The value `stored` stands for: it decoded, or the default (a failure logged once per key).
    @inline(__always)
    func value(from stored: PlistValue?, logger: (String) -> Void) -> Value {
        guard let stored else { return defaultValue }
        do {
            return try decode(stored)
        } catch {
            if !failureLogged.exchange(true, ordering: .relaxed) {
                logger("the stored value of \(name) does not decode as \(Value.self); reading the default instead: \(error)")
            }
            return defaultValue
        }
    }
}

/// A value with no property-list form (an infinity, nil inside an array).
struct NoPropertyListForm: Error, CustomStringConvertible {
    var description: String { "it has no property-list form" }
}

/// A stored value that is not a key's `Value`.
struct KeyDecodingError: Error, CustomStringConvertible {
    let value: PlistValue
    let type: Any.Type
    var description: String { "\(value.plistType.nameWithArticle) is not a \(type)" }
}

extension SharedDefaults {
    /// The key's value along the search list; its default while it is absent or not a `Value`.
    /// Setting a value stores it (nil, for an `Optional`, removes the key); a value with no
    /// property-list form is refused and logged, and the stored value stays.
    public subscript<Value>(key: Key<Value>) -> Value {
        get {
            registerDefault(of: key)
            observationAnchor.access(key.observationPath)
            return key.value(from: value(forKey: key.name)) { [engine] in engine.logger.error("\($0)") }
        }
        set {
            registerDefault(of: key)
            store(newValue, for: key)
        }
    }

    /// Registers typed keys' defaults at once (each is registered at its first use anyway), so
    /// that `defaults read-effective` and the Settings app show them before the program reads them.
    public func register(_ keys: Keys...) {
        for key in keys { (key as? any RegistrableKey)?.register(with: self) }
    }

    @inline(__always)
    func registerDefault<Value>(of key: Key<Value>) {
        let identity = Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self)))
        guard key.registeredWith.load(ordering: .relaxed) != identity else { return }
        key.register(with: self)
    }

    func store<Value>(_ newValue: Value, for key: Key<Value>) {
        do {
            if let value = try key.encode(newValue) {
                setValue(value, forKey: key.name)  // refuses (and logs) a NaN or an infinity
            } else {
                removeObject(forKey: key.name)
            }
        } catch {
            logRefusal(forKey: key.name, "\(newValue) has no property-list value")
        }
    }

    /// The key's value now, then each new value (the default while it is absent or undecodable).
    public func values<Value>(of key: Key<Value>) -> AsyncStream<Value> {
        registerDefault(of: key)
        let logger = engine.logger
        return stream(forKey: key.name) { stored in key.value(from: stored) { logger.error("\($0)") } }
    }
}

/// A key of any value type, for registering several at once.
protocol RegistrableKey {
    func register(with defaults: SharedDefaults)
}

extension Key: RegistrableKey {
    func register(with defaults: SharedDefaults) {
        registeredWith.store(Int(bitPattern: UInt(bitPattern: ObjectIdentifier(defaults))), ordering: .relaxed)
        if let registeredDefault { defaults.registerTypedDefault(registeredDefault, forKey: name) }
    }
}
