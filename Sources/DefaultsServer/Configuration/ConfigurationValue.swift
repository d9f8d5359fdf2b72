import FoundationEssentials
import Glibc

/// A value read from the configuration file (JSON with comments, read by Foundation's
/// `JSONDecoder` with `allowsJSON5`) or given as a command-line flag.
public enum ConfigurationValue: Sendable, Equatable, Decodable, CustomStringConvertible {
    case null
    case bool(Bool)
    case integer(Int)
    case real(Double)
    case string(String)
    case array([ConfigurationValue])
    case object([String: ConfigurationValue])

    public init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let bool = try? container.decode(Bool.self) {
            self = .bool(bool)
        } else if let integer = try? container.decode(Int.self) {
            self = .integer(integer)
        } else if let real = try? container.decode(Double.self) {
            self = .real(real)
        } else if let string = try? container.decode(String.self) {
            self = .string(string)
        } else if let array = try? container.decode([ConfigurationValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: ConfigurationValue].self))
        }
    }

    /// The elements of an array of strings; nil for anything else.
    var strings: [String]? {
        guard case .array(let items) = self else { return nil }
        var strings: [String] = []
        for item in items {
            guard case .string(let text) = item else { return nil }
            strings.append(text)
        }
        return strings
    }

    /// The value as it would be written in the file, for messages and `--print-config`.
    public var description: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .integer(let i): String(i)
        case .real(let d): String(d)
        case .string(let s): "\"" + s.replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") + "\""
        case .array(let a): "[" + a.map(\.description).joined(separator: ", ") + "]"
        case .object(let o): "{" + o.keys.sorted().map { "\"\($0)\": \(o[$0]!)" }.joined(separator: ", ") + "}"
        }
    }
}
