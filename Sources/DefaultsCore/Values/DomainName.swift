/// A validated defaults domain name such as `com.example.app` or `NSGlobalDomain`, and which
/// host's variant of it is meant: the domain every machine sharing the home directory sees, or
/// this machine's own (a by-host domain, `-currentHost` on macOS).
///
/// Names are 1–249 bytes of `[A-Za-z0-9._-]` and spaces, do not start with `.` or a space, do
/// not end with a space and never contain `..`, so a name can never leave the storage directory
/// when it becomes a file name, and `<name>.plist` fits a file name (255 bytes); a by-host name
/// is at most 216 bytes, as its file name adds the machine id.
///
/// ```swift
/// let domain = try DomainName("com.example.bridge")
/// domain.fileName                                   // "com.example.bridge.plist"
/// domain.currentHost.byHostFileName(hostID: id)  // "com.example.bridge.<id>.plist", in ByHost/
/// ```
public struct DomainName: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let rawValue: String
    /// Which host's variant of the domain this is.
    public let host: Host

    /// The variants of a domain: one for any host, one per machine.
    public enum Host: Sendable, Hashable {
        /// The domain as every machine sees it (`<domain>.plist`).
        case any
        /// This machine's variant (`ByHost/<domain>.<host id>.plist`: the host id is the machine id
        /// in a folder of the daemon's own, as macOS names by-host files, and empty in the folder
        /// shared with Foundation, as Foundation on Linux names them), searched before `any`.
        case current
    }

    /// The domain every application sees, stored as `.GlobalPreferences.plist` as on macOS.
    public static let global = DomainName(unchecked: "NSGlobalDomain")
    /// Names of volatile domains that are never stored.
    public static let volatileNames: Set<String> = ["NSRegistrationDomain", "NSArgumentDomain"]
    private static let volatileNameStarts: [UInt8] = volatileNames.compactMap(\.utf8.first)
    /// The folder of the storage directory that holds by-host domains, as on macOS.
    public static let byHostFolder = "ByHost"

    /// The longest name, and the longest of a by-host domain (`.<32-digit machine id>.plist` follows it).
    public static let maximumBytes = 249
    public static let maximumByHostBytes = 255 - 39

    public init(_ name: String, host: Host = .any) throws(DefaultsError) {
        if host == .current, name.utf8.count > DomainName.maximumByHostBytes {
            throw DefaultsError(
                .invalidDomain,
                "invalid domain name \(DomainName.quoted(name)): a by-host domain's name is at most \(DomainName.maximumByHostBytes) bytes")
        }
        guard let problem = DomainName.problem(with: name) else {
            self.rawValue = name
            self.host = host
            return
        }
        throw DefaultsError(.invalidDomain, "invalid domain name \(DomainName.quoted(name)): \(problem)")
    }

    init(unchecked name: String, host: Host = .any) {
        self.rawValue = name
        self.host = host
    }

    /// This machine's variant of the domain (see ``hasByHostVariant``).
    public var currentHost: DomainName { DomainName(unchecked: rawValue, host: .current) }
    /// The variant every machine sees.
    public var anyHost: DomainName { DomainName(unchecked: rawValue, host: .any) }
    public var isCurrentHost: Bool { host == .current }
    /// Whether the name is short enough for a by-host variant's file name.
    public var hasByHostVariant: Bool { rawValue.utf8.count <= DomainName.maximumByHostBytes }

    /// The file that holds the any-host variant inside the storage directory.
    public var fileName: String { baseName + ".plist" }

    /// The file that holds this machine's variant inside the storage directory's `ByHost` folder.
    public func byHostFileName(hostID: String) -> String { baseName + "." + hostID + ".plist" }

    private var baseName: String { anyHost == .global ? ".GlobalPreferences" : rawValue }

    /// The domain stored in `fileName`, or nil when the file is not a domain file.
    public static func fromFileName(_ fileName: String) -> DomainName? {
        if fileName == ".GlobalPreferences.plist" { return .global }
        guard fileName.hasSuffix(".plist") else { return nil }
        return try? DomainName(String(fileName.dropLast(6)))
    }

    /// The by-host domain stored in `fileName` of the `ByHost` folder for `hostID`, or nil
    /// when the file is not one (another machine's, or not a domain file).
    public static func fromByHostFileName(_ fileName: String, hostID: String) -> DomainName? {
        let suffix = "." + hostID + ".plist"
        guard fileName.hasSuffix(suffix) else { return nil }
        let base = String(fileName.dropLast(suffix.utf8.count))
        if base == ".GlobalPreferences" { return DomainName.global.currentHost }
        return (try? DomainName(base))?.currentHost
    }

    /// The name, followed by `(current host)` for a by-host domain.
    public var description: String { isCurrentHost ? rawValue + " (current host)" : rawValue }
    public static func < (lhs: DomainName, rhs: DomainName) -> Bool {
        lhs.rawValue != rhs.rawValue ? lhs.rawValue < rhs.rawValue : !lhs.isCurrentHost && rhs.isCurrentHost
    }

    /// Why `name` is not a domain name; nil when it is one.
    static func problem(with name: String) -> String? {
        var name = name
        return name.withUTF8 { utf8 -> String? in
            if utf8.isEmpty { return "it is empty" }
            if utf8.count > maximumBytes { return "it is longer than \(maximumBytes) bytes" }
            if utf8[0] == UInt8(ascii: ".") { return "it starts with '.'" }
            // Foundation takes any file name; spaces inside a name (a program called `My Tool`)
            // are the one addition to the portable file-name characters, never at an end.
            if utf8[0] == UInt8(ascii: " ") || utf8[utf8.count - 1] == UInt8(ascii: " ") { return "it starts or ends with a space" }
            var previousWasDot = false
            for byte in utf8 {
                let isDot = byte == UInt8(ascii: ".")
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: " "):
                    if isDot && previousWasDot { return "it contains '..'" }
                default:
                    return "only letters, digits, spaces, '.', '_' and '-' are allowed"
                }
                previousWasDot = isDot
            }
            // Checked by first byte before the set: every write names a domain, few a volatile one.
            if volatileNameStarts.contains(utf8[0]), volatileNames.contains(String(decoding: utf8, as: UTF8.self)) {
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
