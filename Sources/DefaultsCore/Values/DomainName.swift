/// A validated defaults domain name such as `com.example.app` or `NSGlobalDomain`.
///
/// Names are 1–255 bytes of `[A-Za-z0-9._-]`, do not start with `.` and never contain `..`,
/// so a name can never leave the storage directory when it becomes a file name.
///
/// ```swift
/// let domain = try DomainName("com.example.bridge")
/// domain.fileName // "com.example.bridge.plist"
/// ```
public struct DomainName: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String

    /// The domain every application sees, stored as `.GlobalPreferences.plist` as on macOS.
    public static let global = DomainName(unchecked: "NSGlobalDomain")
    /// Names of volatile domains that are never stored.
    public static let volatileNames: Set<String> = ["NSRegistrationDomain", "NSArgumentDomain"]

    public init(_ name: String) throws(DefaultsError) {
        guard let problem = DomainName.problem(with: name) else {
            self.rawValue = name
            return
        }
        throw DefaultsError(.invalidDomain, "invalid domain name \(DomainName.quoted(name)): \(problem)")
    }

    init(unchecked name: String) {
        self.rawValue = name
    }

    /// The file that holds this domain inside the storage directory.
    public var fileName: String {
        self == .global ? ".GlobalPreferences.plist" : rawValue + ".plist"
    }

    /// The domain stored in `fileName`, or nil when the file is not a domain file.
    public static func fromFileName(_ fileName: String) -> DomainName? {
        if fileName == ".GlobalPreferences.plist" { return .global }
        guard fileName.hasSuffix(".plist") else { return nil }
        return try? DomainName(String(fileName.dropLast(6)))
    }

    public var description: String { rawValue }
    public static func < (lhs: DomainName, rhs: DomainName) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Why `name` is not a domain name; nil when it is one.
    static func problem(with name: String) -> String? {
        var name = name
        return name.withUTF8 { utf8 -> String? in
            if utf8.isEmpty { return "it is empty" }
            if utf8.count > 255 { return "it is longer than 255 bytes" }
            if utf8[0] == UInt8(ascii: ".") { return "it starts with '.'" }
            var previousWasDot = false
            for byte in utf8 {
                let isDot = byte == UInt8(ascii: ".")
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    if isDot && previousWasDot { return "it contains '..'" }
                default:
                    return "only letters, digits, '.', '_' and '-' are allowed"
                }
                previousWasDot = isDot
            }
            if volatileNames.contains(where: { $0.utf8.elementsEqual(utf8) }) {
                return "\(String(decoding: utf8, as: UTF8.self)) is a volatile domain and is never stored"
            }
            return nil
        }
    }

    static func quoted(_ name: String) -> String {
        let shown = name.utf8.count > 80 ? String(name.prefix(80)) + "…" : name
        return "\"" + shown.unicodeScalars.map { $0.value < 0x20 ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined() + "\""
    }
}

/// Key rules shared by every operation: any non-empty string up to 1 KiB of UTF-8.
public enum DefaultsKey {
    public static let maximumBytes = 1024

    public static func validate(_ key: String) throws(DefaultsError) {
        if key.isEmpty { throw DefaultsError(.invalidKey, "keys must not be empty") }
        if key.utf8.count > maximumBytes {
            throw DefaultsError(.invalidKey, "key is \(key.utf8.count) bytes; the limit is \(maximumBytes)")
        }
    }
}
