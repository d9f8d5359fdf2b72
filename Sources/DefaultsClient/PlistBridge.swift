import DefaultsCore
import Foundation

// MARK: - Foundation objects → PlistValue

/// Converts what callers hand to `set(_:forKey:)` into a ``PlistValue``, refusing anything that is
/// not a property-list value instead of crashing (Foundation's `UserDefaults` calls `fatalError`).
enum PlistBridge {
    static func value(from object: Any, path: String) throws(DefaultsClientError) -> PlistValue {
        if isNil(object) { throw .notAPropertyList(path: path, reason: "nil is not a value (use removeObject(forKey:))") }
        // NSNumber first: on Linux it would also cast to Bool and Int, losing its real type.
        if type(of: object) is NSNumber.Type, let number = object as? NSNumber { return try value(of: number, path: path) }
        switch object {
        case let value as PlistValue: return try checked(value, path: path)
        case let value as Bool: return .bool(value)
        case let value as String: return .string(value)
        case let value as Int: return .integer(Int64(value))
        case let value as Double: return try real(value, path: path)
        // Its decimal form's real (`12.34`), as Foundation stores a `Float`; an infinity is refused.
        case let value as Float: return try real(value.isFinite ? PlistValue.realValue(of: value) : Double(value), path: path)
        case let value as Date: return .date(value)
        case let value as Data: return .data(value)
        case let value as URL: return .string(urlString(value))
        case let value as Int64: return .integer(value)
        case let value as Int32: return .integer(Int64(value))
        case let value as Int16: return .integer(Int64(value))
        case let value as Int8: return .integer(Int64(value))
        case let value as UInt8: return .integer(Int64(value))
        case let value as UInt16: return .integer(Int64(value))
        case let value as UInt32: return .integer(Int64(value))
        case let value as UInt: return try unsigned(UInt64(value), path: path)
        case let value as UInt64: return try unsigned(value, path: path)
        case let value as CGFloat: return try real(Double(value), path: path)
        case let value as Substring: return .string(String(value))
        case let array as [Any]:
            var result: [PlistValue] = []
            result.reserveCapacity(array.count)
            for (index, element) in array.enumerated() { result.append(try self.value(from: element, path: "\(path)[\(index)]")) }
            return .array(result)
        case let dictionary as [String: Any]:
            var result: [String: PlistValue] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, element) in dictionary { result[key] = try self.value(from: element, path: "\(path).\(key)") }
            return .dictionary(result)
        case let dictionary as [AnyHashable: Any]:
            var result: [String: PlistValue] = [:]
            for (key, element) in dictionary {
                guard let key = key.base as? String else {
                    throw .notAPropertyList(path: path, reason: "dictionary key \(key) is a \(type(of: key.base)), not a String")
                }
                result[key] = try self.value(from: element, path: "\(path).\(key)")
            }
            return .dictionary(result)
        default:
            throw .notAPropertyList(path: path, reason: "\(type(of: object)) is not a property-list type")
        }
    }

    /// A file URL is stored as its path (as Foundation on Linux does), any other URL as its absolute string.
    static func urlString(_ url: URL) -> String { url.isFileURL ? url.path : url.absoluteString }

    private static func isNil(_ object: Any) -> Bool {
        let mirror = Mirror(reflecting: object)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    private static func real(_ value: Double, path: String) throws(DefaultsClientError) -> PlistValue {
        guard value.isFinite else { throw .notAPropertyList(path: path, reason: "\(value) is not a finite number") }
        return .real(value)
    }

    private static func unsigned(_ value: UInt64, path: String) throws(DefaultsClientError) -> PlistValue {
        guard value <= UInt64(Int64.max) else {
            throw .notAPropertyList(path: path, reason: "\(value) does not fit a 64-bit signed integer")
        }
        return .integer(Int64(value))
    }

    /// The number's real type, read from its `objCType`: `as? Int` / `as? Bool` cannot tell an
    /// integer, a real and a bool apart.
    private static func value(of number: NSNumber, path: String) throws(DefaultsClientError) -> PlistValue {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "c"), UInt8(ascii: "B"): return .bool(number.boolValue)
        case UInt8(ascii: "d"), UInt8(ascii: "f"): return try real(number.doubleValue, path: path)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"): return try unsigned(number.uint64Value, path: path)
        default: return .integer(number.int64Value)
        }
    }

    /// A ``PlistValue`` built by hand may still hold a NaN.
    static func checked(_ value: PlistValue, path: String) throws(DefaultsClientError) -> PlistValue {
        switch value {
        case .real(let d): return try real(d, path: path)
        case .array(let elements):
            for (index, element) in elements.enumerated() { _ = try checked(element, path: "\(path)[\(index)]") }
        case .dictionary(let members):
            for (key, element) in members { _ = try checked(element, path: "\(path).\(key)") }
        default: break
        }
        return value
    }
}
