import DefaultsCore
import Foundation

/// Where the client finds the daemon, which domain is the application's, and how patient it is.
///
/// ``SharedDefaults/standard`` uses ``DefaultsConfiguration/fromEnvironment()``; every other
/// value can be given explicitly:
///
/// ```swift
/// let defaults = SharedDefaults(configuration: .init(appDomain: "com.example.BridgeControl"))
/// ```
public struct DefaultsConfiguration: Sendable, Hashable {
    /// The daemon's Unix socket.
    public var socketPath: String
    /// The application's domain: the first persistent domain searched and the one written to.
    public var appDomain: String
    /// The name the daemon shows in the `origin.client` of this process's changes.
    public var clientName: String
    /// How long the first read of a domain waits for the daemon before answering from the
    /// registration and argument domains alone (the domain is still loaded later, with notifications).
    public var loadTimeout: Duration
    /// How long `synchronize()` and the `async` writes wait for the daemon's answer.
    public var synchronizeTimeout: Duration
    /// The first and the longest delay between two connection attempts (doubling in between).
    public var reconnectDelay: ClosedRange<Duration>

    public init(
        socketPath: String = DefaultsConfiguration.defaultSocketPath(),
        appDomain: String = DefaultsConfiguration.defaultAppDomain(),
        clientName: String? = nil,
        loadTimeout: Duration = .seconds(5),
        synchronizeTimeout: Duration = .seconds(30),
        reconnectDelay: ClosedRange<Duration> = .milliseconds(20) ... .seconds(2)
    ) {
        self.socketPath = socketPath
        self.appDomain = appDomain
        self.clientName = clientName ?? ProcessInfo.processInfo.processName
        self.loadTimeout = loadTimeout
        self.synchronizeTimeout = synchronizeTimeout
        self.reconnectDelay = reconnectDelay
    }

    /// The configuration of ``SharedDefaults/standard``: `$DEFAULTSD_SOCKET` and
    /// `$DEFAULTSD_APP_DOMAIN` when set, else the daemon's default socket and
    /// ``defaultAppDomain(environment:)``.
    public static func fromEnvironment(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> Self {
        DefaultsConfiguration(
            socketPath: defaultSocketPath(environment: environment),
            appDomain: defaultAppDomain(environment: environment))
    }

    /// `$DEFAULTSD_SOCKET`, else `$XDG_RUNTIME_DIR/defaultsd/socket`, else `/tmp/defaultsd-<uid>/socket`
    /// (the daemon's own default, see docs/PROTOCOL.md).
    public static func defaultSocketPath(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        DefaultPaths.clientSocketPath(environment: environment, uid: getuid())
    }

    /// `$DEFAULTSD_APP_DOMAIN`, else the main bundle's identifier, else the process name
    /// (as Foundation does), with characters a domain name may not hold replaced by `_` (a
    /// program called `My Tool` keeps its name, as Foundation's `.standard` does).
    public static func defaultAppDomain(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let domain = environment["DEFAULTSD_APP_DOMAIN"], !domain.isEmpty { return domain }
        if let identifier = Bundle.main.bundleIdentifier, !identifier.isEmpty { return sanitized(identifier) }
        return sanitized(ProcessInfo.processInfo.processName)
    }

    static func sanitized(_ name: String) -> String {
        var result = String(String.UnicodeScalarView(name.unicodeScalars.map { scalar in
            switch scalar {
            case "a"..."z", "A"..."Z", "0"..."9", ".", "_", "-", " ": scalar
            default: "_"
            }
        }))
        while result.hasPrefix(".") { result.removeFirst() }
        // A space may only be inside a name (DomainName): one at either end becomes `_`.
        if result.hasPrefix(" ") { result = "_" + result.dropFirst() }
        if result.hasSuffix(" ") { result = result.dropLast() + "_" }
        while result.contains("..") { result = result.replacingOccurrences(of: "..", with: ".") }
        if result.isEmpty { result = "app" }
        return String(result.prefix(255))
    }
}
