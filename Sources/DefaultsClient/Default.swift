import DefaultsCore
import Foundation

/// A Swift type that can be stored in defaults.
///
/// Numbers, `Bool` and `String` convert as the typed getters do (`integer(forKey:)` ...), so a
/// `Double` default reads an integer `5` as `5.0` and a string `"7.5"` as `7.5`.
/// `RawRepresentable` types (enums) conform by declaring it: `enum Rank: String, DefaultsValue`.
public protocol DefaultsValue: Sendable {
    /// nil when `value` cannot be read as `Self` (the default is used then).
    init?(defaultsValue value: PlistValue)
    /// The value to store. nil when there is none: an `Optional` that is nil (which removes the
    /// key), or a value with no property-list form (which is refused, as `set(_:forKey:)` refuses).
    /// A value such as an infinity may be answered as it is: storing it refuses it then.
    var defaultsValue: PlistValue? { get }
}

extension PlistValue: DefaultsValue {
    public init?(defaultsValue value: PlistValue) { self = value }
    public var defaultsValue: PlistValue? { self }
}

extension Bool: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard value.isScalar else { return nil }
        self = Conversions.bool(value)
    }
    public var defaultsValue: PlistValue? { .bool(self) }
}

extension Int: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard value.isScalar else { return nil }
        self = Conversions.integer(value)
    }
    public var defaultsValue: PlistValue? { .integer(Int64(self)) }
}

extension Double: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard value.isScalar else { return nil }
        self = Conversions.double(value)
    }
    /// Not finite: refused when stored, as `set(_: Double, forKey:)` refuses it.
    public var defaultsValue: PlistValue? { .real(self) }
}

extension Float: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard value.isScalar else { return nil }
        self = Conversions.float(value)
    }
    /// Its decimal form's real (`12.34`). Not finite: refused when stored, as `set(_: Float, forKey:)` refuses it.
    public var defaultsValue: PlistValue? { .real(isFinite ? PlistValue.realValue(of: self) : Double(self)) }
}

extension String: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard let string = Conversions.string(value) else { return nil }
        self = string
    }
    public var defaultsValue: PlistValue? { .string(self) }
}

extension Date: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard case .date(let date) = value else { return nil }
        self = date
    }
    public var defaultsValue: PlistValue? { .date(self) }
}

extension Data: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard case .data(let data) = value else { return nil }
        self = data
    }
    public var defaultsValue: PlistValue? { .data(self) }
}

extension URL: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard let url = Conversions.url(value) else { return nil }
        self = url
    }
    public var defaultsValue: PlistValue? { .string(PlistBridge.urlString(self)) }
}

extension Array: DefaultsValue where Element: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard case .array(let elements) = value else { return nil }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard let converted = Element(defaultsValue: element) else { return nil }
            result.append(converted)
        }
        self = result
    }
    public var defaultsValue: PlistValue? {
        var result: [PlistValue] = []
        for element in self {
            guard let value = element.defaultsValue else { return nil }
            result.append(value)
        }
        return .array(result)
    }
}

extension Dictionary: DefaultsValue where Key == String, Value: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard case .dictionary(let members) = value else { return nil }
        var result: [String: Value] = [:]
        for (key, member) in members {
            guard let converted = Value(defaultsValue: member) else { return nil }
            result[key] = converted
        }
        self = result
    }
    public var defaultsValue: PlistValue? {
        var result: [String: PlistValue] = [:]
        for (key, member) in self {
            guard let value = member.defaultsValue else { return nil }
            result[key] = value
        }
        return .dictionary(result)
    }
}

extension Optional: DefaultsValue where Wrapped: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard let wrapped = Wrapped(defaultsValue: value) else { return nil }
        self = .some(wrapped)
    }
    public var defaultsValue: PlistValue? { self?.defaultsValue }
}

/// Whether `value` is a nil `Optional` (also nested), which removes the key, rather than a value
/// with no property-list form.
@usableFromInline
func isNoneOptional(_ value: some Any) -> Bool {
    (value as? any OptionalDefaultsValue)?.isNone == true
}

/// What tells "remove the key" (a nil `Optional`, also nested) from "no property-list form".
protocol OptionalDefaultsValue {
    var isNone: Bool { get }
}

extension Optional: OptionalDefaultsValue {
    var isNone: Bool {
        guard case .some(let wrapped) = self else { return true }
        return (wrapped as? any OptionalDefaultsValue)?.isNone ?? false
    }
}

extension DefaultsValue where Self: RawRepresentable, RawValue: DefaultsValue {
    public init?(defaultsValue value: PlistValue) {
        guard let raw = RawValue(defaultsValue: value) else { return nil }
        self.init(rawValue: raw)
    }
    public var defaultsValue: PlistValue? { rawValue.defaultsValue }
}

extension PlistValue {
    var isScalar: Bool {
        switch self {
        case .string, .integer, .real, .bool: true
        case .date, .data, .array, .dictionary: false
        }
    }
}

/// A typed default, read from and written to a ``SharedDefaults``.
///
/// ```swift
/// struct Bridge {
///     @Default(.warp) var warpFactor                // a typed key (``Key``), its default registered
///     @Default("rank") var rank = "Ensign"          // a name and a default of its own, not registered
/// }
/// let bridge = Bridge()
/// bridge.warpFactor = 7                         // stored, visible to every process
/// for await factor in bridge.$warpFactor { … }  // the value now, then each new one
/// ```
@propertyWrapper
public struct Default<Value: Sendable>: Sendable {
    public let typedKey: Key<Value>
    public let defaults: SharedDefaults

    /// The key's name.
    public var key: String { typedKey.name }
    /// What reads answer while the key is absent (or holds something that is not a `Value`).
    public var defaultValue: Value { typedKey.defaultValue }

    /// A default named here, whose initial value is what reads answer while the key is absent;
    /// it is not registered or stored.
    public init(wrappedValue: Value, _ key: String, defaults: SharedDefaults = .standard) where Value: DefaultsValue {
        self.typedKey = Key(key, default: wrappedValue, registers: false)
        self.defaults = defaults
    }

    /// A default of a Codable type named here, as ``init(wrappedValue:_:defaults:)``.
    @_disfavoredOverload
    public init(wrappedValue: Value, _ key: String, defaults: SharedDefaults = .standard) where Value: Codable {
        self.typedKey = Key(key, default: wrappedValue, registers: false)
        self.defaults = defaults
    }

    /// The typed key's value, as `defaults[key]` reads and writes it.
    public init(_ key: Key<Value>, defaults: SharedDefaults = .standard) {
        self.typedKey = key
        self.defaults = defaults
    }

    /// Setting nil (an `Optional`) removes the key. A value with no property-list form (an
    /// infinity, nil inside an array) is refused and logged, as `SharedDefaults.set(_:forKey:)`
    /// refuses it, and the stored value stays.
    public var wrappedValue: Value {
        get { defaults[typedKey] }
        nonmutating set { defaults[typedKey] = newValue }
    }

    /// The value now, then each new value (the default while the key is absent).
    public var projectedValue: AsyncStream<Value> { defaults.values(of: typedKey) }
}
