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
    /// FNV-1a of the name, computed while the name is validated. Domain names key every table
    /// on the request path (loaded domains, dirty set, subscribers, bundles), and hashing this
    /// one word is cheaper than hashing the whole name at every look-up. The fingerprint has no
    /// per-process seed, so names crafted to collide would slow those tables down; only the
    /// daemon's own user can connect, which makes that a user slowing down their own daemon.
    private let fingerprint: UInt64

    /// The domain every application sees, stored as `.GlobalPreferences.plist` as on macOS.
    public static let global = DomainName(unchecked: "NSGlobalDomain")
    /// Names of volatile domains that are never stored.
    public static let volatileNames: Set<String> = ["NSRegistrationDomain", "NSArgumentDomain"]

    public init(_ name: String) throws(DefaultsError) {
        let (problem, fingerprint) = DomainName.check(name)
        guard let problem else {
            self.rawValue = name
            self.fingerprint = fingerprint
            return
        }
        throw DefaultsError(.invalidDomain, "invalid domain name \(DomainName.quoted(name)): \(problem)")
    }

    init(unchecked name: String) {
        self.rawValue = name
        self.fingerprint = DomainName.check(name).fingerprint
    }

    public static func == (lhs: DomainName, rhs: DomainName) -> Bool {
        lhs.fingerprint == rhs.fingerprint && lhs.rawValue == rhs.rawValue
    }

    public func hash(into hasher: inout Hasher) { hasher.combine(fingerprint) }

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

    static func problem(with name: String) -> String? { check(name).problem }

    /// Validates the name and computes its fingerprint in one pass over its bytes.
    private static func check(_ name: String) -> (problem: String?, fingerprint: UInt64) {
        var name = name
        return name.withUTF8 { utf8 in
            var fingerprint: UInt64 = 0xcbf2_9ce4_8422_2325
            if utf8.isEmpty { return ("it is empty", fingerprint) }
            if utf8.count > 255 { return ("it is longer than 255 bytes", fingerprint) }
            if utf8[0] == UInt8(ascii: ".") { return ("it starts with '.'", fingerprint) }
            var previousWasDot = false
            for byte in utf8 {
                let isDot = byte == UInt8(ascii: ".")
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
                    if isDot && previousWasDot { return ("it contains '..'", fingerprint) }
                default:
                    return ("only letters, digits, '.', '_' and '-' are allowed", fingerprint)
                }
                previousWasDot = isDot
                fingerprint = (fingerprint ^ UInt64(byte)) &* 0x100_0000_01b3
            }
            // Compared by length first: a set look-up would hash the name.
            if volatileNames.contains(where: { $0.utf8.count == utf8.count && $0.utf8.elementsEqual(utf8) }) {
                return ("\(String(decoding: utf8, as: UTF8.self)) is a volatile domain and is never stored", fingerprint)
            }
            return (nil, fingerprint)
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
