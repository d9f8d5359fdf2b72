import DefaultsCore
import Foundation

/// The address of an app's own pane in the Settings app (`defaultsd-settings`), the Linux form
/// of iOS's `UIApplication.openSettingsURLString`: hand it to `xdg-open` and the person lands on
/// the app's settings. It carries the Settings app's token, read from the file the Settings app
/// writes when it starts (`$XDG_RUNTIME_DIR/defaultsd/settings-url`, mode 0600), so only the
/// user who runs it can open it.
///
/// ```swift
/// if let address = try? SettingsAppAddress.forDomain("com.example.BridgeControl") {
///     _ = try? Process.run(URL(fileURLWithPath: "/usr/bin/xdg-open"), arguments: [address.absoluteString])
/// }
/// ```
public enum SettingsAppAddress {
    public struct NotRunning: Error, CustomStringConvertible {
        public let file: String
        public var description: String { "the Settings app is not running (no address in \(file)); start defaultsd-settings" }
    }

    /// The root page's address, with the token.
    public static func root(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        try address(path: "/", environment: environment)
    }

    /// `/apps/<domain>`, the app's root pane, with the token.
    public static func forDomain(
        _ domain: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        let name = try DomainName(domain)
        let escaped = name.rawValue.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name.rawValue
        return try address(path: "/apps/" + escaped, environment: environment)
    }

    private static func address(path: String, environment: [String: String]) throws -> URL {
        let file = DefaultPaths.settingsAddressFile(environment: environment, uid: getuid())
        guard let text = try? String(contentsOfFile: file, encoding: .utf8),
            var parts = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            parts.queryItems?.contains(where: { $0.name == "token" }) == true
        else { throw NotRunning(file: file) }
        parts.percentEncodedPath = path
        guard let url = parts.url else { throw NotRunning(file: file) }
        return url
    }
}
