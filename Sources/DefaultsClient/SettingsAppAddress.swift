import DefaultsCore
import Foundation

/// The address of an app's own pane in the Settings app (`defaultsd-settings`), the Linux form
/// of iOS's `UIApplication.openSettingsURLString`: hand it to `xdg-open` and the person lands on
/// the app's settings. It is the Settings app's launch page (`$XDG_RUNTIME_DIR/defaultsd/settings.html`,
/// mode 0600, written when the app starts), with the pane after `#`: the page holds the token
/// and posts it, so the token is never on a command line, where every user could read it. A
/// token opens the app once; the app then puts a new page with the next token at the same path,
/// so the same address opens it again.
///
/// ```swift
/// if let address = try? SettingsAppAddress.forDomain("com.example.BridgeControl") {
///     _ = try? Process.run(URL(fileURLWithPath: "/usr/bin/xdg-open"), arguments: [address.absoluteString])
/// }
/// ```
public enum SettingsAppAddress {
    public struct NotRunning: Error, CustomStringConvertible {
        public let file: String
        public var description: String { "the Settings app is not running (no launch page at \(file)); start defaultsd-settings" }
    }

    /// The root page: the launch page itself.
    public static func root(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> URL {
        try address(path: nil, environment: environment)
    }

    /// `/apps/<domain>`, the app's root pane: the launch page with `#/apps/<domain>`.
    public static func forDomain(
        _ domain: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> URL {
        let name = try DomainName(domain)
        let escaped = name.rawValue.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name.rawValue
        return try address(path: "/apps/" + escaped, environment: environment)
    }

    private static func address(path: String?, environment: [String: String]) throws -> URL {
        let file = DefaultPaths.settingsLaunchFile(environment: environment, uid: getuid())
        guard FileManager.default.isReadableFile(atPath: file) else { throw NotRunning(file: file) }
        let page = URL(fileURLWithPath: file)
        guard let path else { return page }
        guard let url = URL(string: page.absoluteString + "#" + path) else { throw NotRunning(file: file) }
        return url
    }
}
