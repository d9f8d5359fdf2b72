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
    /// The stored form of the key's default, registered; nil when it has none (an `Optional`
    /// nil) or the key does not register it (a `@Default` named by a string).
    let registeredDefault: PlistValue?
    /// The key's path for Swift's Observation (``ObservationAnchor``), made once.
    @usableFromInline let observationPath: KeyPath<ObservationAnchor, Int>
    /// The `SharedDefaults` (by identity) this key's default was last registered with: one
    /// comparison on every read, and registration happens once per instance in practice.
    let registeredWith = Atomic<Int>(0)
    /// Whether a stored value that does not decode was logged: once per key.
    let failureLogged = Atomic<Bool>(false)

    @usableFromInline
    init(name: String, registeredDefault: PlistValue?) {
        self.name = name
        self.registeredDefault = registeredDefault
        self.observationPath = ObservationAnchor.path(of: name)
    }

    /// Registers the key's default with `defaults`, and remembers that it did.
    func register(with defaults: SharedDefaults) {
        registeredWith.store(defaults.identity, ordering: .relaxed)
        if let registeredDefault { defaults.registerTypedDefault(registeredDefault, forKey: name) }
    }
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
    @usableFromInline let decode: @Sendable (PlistValue) throws -> Value
    @usableFromInline let encode: @Sendable (Value) throws -> PlistValue?

    /// A key whose value converts as the typed getters do (`Double` reads an integer `5` as `5.0`).
    @inlinable
    public convenience init(_ name: String, default defaultValue: Value) where Value: DefaultsValue {
        self.init(name, default: defaultValue, registers: true)
    }

    /// A key whose value is any `Codable` type, stored as its property-list structure.
    @_disfavoredOverload
    @inlinable
    public convenience init(_ name: String, default defaultValue: Value) where Value: Codable {
        self.init(name, default: defaultValue, registers: true)
    }

    /// Inlinable, so that the conversions are specialized for `Value` where the key is made: an
    /// unspecialized conversion looks up `Optional<Value>`'s metadata on every read, which costs
    /// as much as the rest of the read.
    @inlinable
    convenience init(_ name: String, default defaultValue: Value, registers: Bool) where Value: DefaultsValue {
        self.init(
            name, default: defaultValue, registeredDefault: registers ? defaultValue.defaultsValue : nil,
            decode: { value in
                guard let converted = Value(defaultsValue: value) else { throw KeyDecodingError(value: value, type: Value.self) }
                return converted
            },
            encode: { value in
                if let stored = value.defaultsValue { return stored }
                // A nil `Optional` removes the key; anything else without a form is refused.
                guard isNoneOptional(value) else { throw NoPropertyListForm() }
                return nil
            })
    }

    @usableFromInline
    init(
        _ name: String, default defaultValue: Value, registeredDefault: PlistValue?,
        decode: @escaping @Sendable (PlistValue) throws -> Value, encode: @escaping @Sendable (Value) throws -> PlistValue?
    ) {
        self.defaultValue = defaultValue
        self.decode = decode
        self.encode = encode
        super.init(name: name, registeredDefault: registeredDefault)
    }

    @_disfavoredOverload
    @inlinable
    convenience init(_ name: String, default defaultValue: Value, registers: Bool) where Value: Codable {
        // The last value decoded, by what it was decoded from: a read of an unchanged value costs
        // one comparison of property-list values instead of a decode. Not for a class, whose
        // readers would share one instance: each read of a class decodes a new one.
        let lastDecoded = Mutex<(stored: PlistValue, value: Value)?>(nil)
        let reusesDecodedValue = !(Value.self is AnyClass)
        self.init(
            name, default: defaultValue,
            registeredDefault: registers ? (try? PlistValueEncoder().encode(defaultValue)) ?? nil : nil,
            decode: { stored in
                guard reusesDecodedValue else { return try PlistValueDecoder().decode(Value.self, from: stored) }
                if let last = lastDecoded.withLock({ $0 }), last.stored == stored { return last.value }
                let value = try PlistValueDecoder().decode(Value.self, from: stored)
                lastDecoded.withLock { $0 = (stored, value) }
                return value
            },
            encode: { try PlistValueEncoder().encode($0) })
    }

    /// The value `stored` stands for: it decoded, or the default (a failure logged once per
    /// key). Inlinable, so that a typed read is specialized for `Value` where it is made.
    @inlinable
    func value(from stored: PlistValue?, reportingTo defaults: SharedDefaults) -> Value {
        guard let stored else { return defaultValue }
        do {
            return try decode(stored)
        } catch {
            defaults.reportDecodeFailure(of: self, error, type: Value.self)
            return defaultValue
        }
    }
}

/// A value with no property-list form (an infinity, nil inside an array).
@usableFromInline
struct NoPropertyListForm: Error, CustomStringConvertible {
    @usableFromInline init() {}
    @usableFromInline var description: String { "it has no property-list form" }
}

/// A stored value that is not a key's `Value`.
@usableFromInline
struct KeyDecodingError: Error, CustomStringConvertible {
    let value: PlistValue
    let type: Any.Type
    @usableFromInline init(value: PlistValue, type: Any.Type) {
        self.value = value
        self.type = type
    }
    @usableFromInline var description: String { "\(value.plistType.nameWithArticle) is not a \(type)" }
}

extension SharedDefaults {
    /// The key's value along the search list; its default while it is absent or not a `Value`.
    /// Setting a value stores it (nil, for an `Optional`, removes the key); a value with no
    /// property-list form is refused and logged, and the stored value stays.
    @inlinable
    public subscript<Value>(key: Key<Value>) -> Value {
        get { key.value(from: storedValue(typed: key), reportingTo: self) }
        set {
            registerDefault(of: key)
            store(newValue, for: key)
        }
    }

    /// What a typed read starts from: the key's default registered once, the read recorded for
    /// Swift's Observation, and the stored value along the search list.
    @usableFromInline
    func storedValue(typed key: Keys) -> PlistValue? {
        registerDefault(of: key)
        observationAnchor.access(key.observationPath)
        return value(forKey: key.name)
    }

    /// Logs, once per key, that a stored value does not decode as the key's type.
    @usableFromInline
    func reportDecodeFailure(of key: Keys, _ error: any Error, type: Any.Type) {
        guard !key.failureLogged.exchange(true, ordering: .relaxed) else { return }
        engine.logger.error("the stored value of \(key.name) does not decode as \(type); reading the default instead: \(error)")
    }

    /// Registers typed keys' defaults at once (each is registered at its first use anyway), so
    /// that `defaults read-effective` and the Settings app show them before the program reads them.
    public func register(_ keys: Keys...) {
        for key in keys { key.register(with: self) }
    }

    /// This instance's identity, as the keys remember whom they registered with.
    var identity: Int { Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self))) }

    /// Registers the key's default with this instance once. The key remembers the last instance
    /// it registered with (one comparison per read); this instance remembers every key it
    /// registered, for a key used by several instances in turn.
    @usableFromInline
    func registerDefault(of key: Keys) {
        guard key.registeredWith.load(ordering: .relaxed) != identity else { return }
        let isNew = registeredKeys.withLock { $0.insert(ObjectIdentifier(key)).inserted }
        if isNew {
            key.register(with: self)
        } else {
            key.registeredWith.store(identity, ordering: .relaxed)
        }
    }

    @usableFromInline
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
        return stream(forKey: key.name) { [self] stored in key.value(from: stored, reportingTo: self) }
    }
}

