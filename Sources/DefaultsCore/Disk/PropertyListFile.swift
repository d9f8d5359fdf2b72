import Foundation

/// The on-disk format of a domain: a property list whose root is a dictionary,
/// read and written with Foundation's `PropertyListSerialization`.
///
/// Foundation hands numbers back as `NSNumber`; `as? Int` / `as? Bool` cannot tell
/// `<integer>1</integer>`, `<real>1</real>` and `<true/>` apart, so the type is
/// recovered from the number's `objCType`.
///
/// ```swift
/// let bytes = try PropertyListFile.encode(["warp": true], format: .xml)
/// let values = try PropertyListFile.decode(bytes) // ["warp": .bool(true)]
/// ```
public enum PropertyListFile {
    public enum Format: String, Sendable, CaseIterable {
        case xml, binary

        var foundation: PropertyListSerialization.PropertyListFormat {
            self == .xml ? .xml : .binary
        }
    }

    /// Reads a property list (XML, binary or old-style text) whose root is a dictionary.
    public static func decode(_ data: Data) throws(DefaultsError) -> [String: PlistValue] {
        let object: Any
        do {
            object = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        } catch {
            throw DefaultsError(.invalidPlist, "not a property list: \(error.localizedDescription)")
        }
        guard case .dictionary(let values) = try plistValue(from: object) else {
            throw DefaultsError(.invalidPlist, "the property list's root is not a dictionary")
        }
        return values
    }

    public static func encode(_ values: [String: PlistValue], format: Format) throws(DefaultsError) -> Data {
        do {
            return try PropertyListSerialization.data(
                fromPropertyList: foundationObject(.dictionary(values)), format: format.foundation, options: 0)
        } catch {
            throw DefaultsError(.internal, "could not serialize a property list: \(error.localizedDescription)")
        }
    }

    /// Converts a Foundation property-list object to a ``PlistValue``.
    public static func plistValue(from object: Any) throws(DefaultsError) -> PlistValue {
        switch object {
        case let string as String: return .string(string)
        case let date as Date: return .date(date)
        case let data as Data: return .data(data)
        case let number as NSNumber: return try value(of: number)
        case let array as [Any]:
            var result: [PlistValue] = []
            result.reserveCapacity(array.count)
            for element in array { result.append(try plistValue(from: element)) }
            return .array(result)
        case let dictionary as [String: Any]:
            var result: [String: PlistValue] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, element) in dictionary { result[key] = try plistValue(from: element) }
            return .dictionary(result)
        case let dictionary as [AnyHashable: Any]:
            var result: [String: PlistValue] = [:]
            for (key, element) in dictionary {
                guard let key = key.base as? String else {
                    throw DefaultsError(.invalidPlist, "a dictionary key is not a string")
                }
                result[key] = try plistValue(from: element)
            }
            return .dictionary(result)
        default:
            throw DefaultsError(.invalidPlist, "unsupported property-list object of type \(type(of: object))")
        }
    }

    package static func value(of number: NSNumber) throws(DefaultsError) -> PlistValue {
        switch UInt8(bitPattern: number.objCType.pointee) {
        case UInt8(ascii: "c"), UInt8(ascii: "B"): return .bool(number.boolValue)
        case UInt8(ascii: "d"), UInt8(ascii: "f"):
            let double = number.doubleValue
            guard double.isFinite else { throw DefaultsError(.invalidPlist, "a real is not finite") }
            return .real(double)
        case UInt8(ascii: "Q"), UInt8(ascii: "L"), UInt8(ascii: "I"):
            // Unsigned values come back as `Q`; those above Int64.max have no exact integer here.
            let unsigned = number.uint64Value
            guard unsigned <= UInt64(Int64.max) else {
                throw DefaultsError(.invalidPlist, "the integer \(unsigned) is larger than a 64-bit signed integer")
            }
            return .integer(Int64(unsigned))
        default: return .integer(number.int64Value)
        }
    }

    /// Converts a ``PlistValue`` to the Foundation object `PropertyListSerialization` writes.
    public static func foundationObject(_ value: PlistValue) -> Any {
        switch value {
        case .string(let s): return s
        case .integer(let i): return NSNumber(value: i)
        case .real(let d): return NSNumber(value: d)
        case .bool(let b): return b
        case .date(let d): return d
        case .data(let d): return d
        case .array(let a): return a.map(foundationObject)
        case .dictionary(let d): return d.mapValues(foundationObject)
        }
    }
}
