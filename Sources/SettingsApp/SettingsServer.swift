import DefaultsCore
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOConcurrencyHelpers
import NIOCore
import ServiceLifecycle

/// The Settings app's web server: the page, its assets, its JSON API and its live WebSocket,
/// over one connection to defaultsd (``DaemonRelay``), on loopback only, behind the token
/// (``AccessGuard``).
///
/// ```swift
/// let server = SettingsServer(configuration: .init(port: 7641, socketPath: socket))
/// try await server.run { opening in print(opening.line(toTerminal: isatty(STDOUT_FILENO) == 1)) }
/// // a terminal: http://127.0.0.1:7641/?token=...
/// // elsewhere:  http://127.0.0.1:7641/ (open it with: xdg-open /run/user/1000/defaultsd/settings.html)
/// ```
///
/// Owns the relay, the hub of live pages and the token; lives for the life of the process.
public final class SettingsServer: Sendable {
    public struct Configuration: Sendable {
        /// 0 picks a free port.
        public var port: Int
        public var socketPath: String
        /// Where the address with its token is written (mode 0600), and written anew with each
        /// token that replaces a traded one; nil writes none.
        public var addressFile: String?
        /// Where the launch page is written (mode 0600): a page a browser opens (`xdg-open` on its
        /// path) that posts the token to the app, so the token is on no command line. Once its
        /// token is traded, a page with the next token replaces it; nil writes none.
        public var launchFile: String?
        /// The addresses listened on; the first decides the port when `port` is 0.
        public var hosts: [String]
        /// `defaultsd-schema`, which reads GSettings schemas; nil shows none.
        public var schemaTool: String?
        /// Connections served at once on each address: a person's tabs need a few each (one live
        /// WebSocket, a few requests); past it new ones wait in the listen backlog.
        public var maximumConnections: Int
        /// A connection with nothing read or written for this long is closed: an HTTP connection
        /// with no request (a page opens another), or one that never sends one. The live
        /// WebSocket stays open, as the app pings it every 30 s.
        public var idleTimeout: Duration

        public init(
            port: Int = SettingsServer.defaultPort, socketPath: String, addressFile: String? = nil, launchFile: String? = nil,
            hosts: [String] = ["127.0.0.1", "::1"], schemaTool: String? = HelperProgram.schemaTool.path(),
            maximumConnections: Int = 256, idleTimeout: Duration = .seconds(75)
        ) {
            self.port = port
            self.socketPath = socketPath
            self.addressFile = addressFile
            self.launchFile = launchFile
            self.hosts = hosts
            self.schemaTool = schemaTool
            self.maximumConnections = maximumConnections
            self.idleTimeout = idleTimeout
        }
    }

    public static let defaultPort = 7641

    public let configuration: Configuration
    /// The launch token, the path prefix and the session secret, made when the server is.
    let keys: SessionKeys
    /// The launch token not yet traded: 128 random bits, in hex. Each trade replaces it.
    public var token: String { keys.launch.value }
    /// The page, with the prefix written in.
    let page: [UInt8]
    let hub = LiveHub()
    let relay: DaemonRelay
    let logger: Logger
    let boundPort: NIOLockedValueBox<Int>

    public init(configuration: Configuration, logger: Logger = Logger(label: "defaultsd-settings")) {
        self.configuration = configuration
        self.logger = logger
        keys = SessionKeys.random()
        page = Array(String(decoding: Assets.page, as: UTF8.self).replacingOccurrences(of: "{{base}}", with: keys.prefix).utf8)
        relay = DaemonRelay(socketPath: configuration.socketPath, hub: hub, logger: logger)
        boundPort = NIOLockedValueBox(configuration.port)
    }

    /// Where the app is and how it is opened, once every listener is bound: what
    /// `defaultsd-settings` prints.
    public struct Opening: Sendable, Equatable, CustomStringConvertible {
        /// `http://127.0.0.1:<port>/`, which by itself is refused.
        public let address: String
        /// The launch token not yet traded.
        public let token: String
        /// The launch page, when one is written.
        public let launchFile: String?

        public init(address: String, token: String, launchFile: String?) {
            self.address = address
            self.token = token
            self.launchFile = launchFile
        }

        /// The line printed at start. The address with its token goes only to a terminal, which
        /// the person who started the app reads. Anywhere else (a pipe, a file, or the journal a
        /// systemd unit's output goes to, which the `adm` and `systemd-journal` groups can read)
        /// it gets the address alone and the launch page to open instead.
        public func line(toTerminal: Bool) -> String {
            if toTerminal { return address + "?token=" + token }
            guard let launchFile else { return address + " (its token is printed only to a terminal)" }
            return address + " (open it with: xdg-open " + Self.shellWord(launchFile) + ")"
        }

        /// Without the token, so that a value logged or interpolated by mistake does not spill it.
        public var description: String { line(toTerminal: false) }

        /// `path` as one shell word, so the printed command can be pasted: as it is when a shell
        /// leaves every character alone, else in single quotes.
        static func shellWord(_ path: String) -> String {
            let plain = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:@%,".utf8)
            return path.utf8.allSatisfy(plain.contains) ? path : "'" + path.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
        }
    }

    /// Serves until SIGTERM or SIGINT. `ready` gets the address and the token once every
    /// listener is bound (and the address file and the launch page are written).
    /// Throws ``AlreadyRunning`` when the address file names an instance that still answers:
    /// the file belongs to that one, and is neither replaced nor removed.
    public func run(ready: @escaping @Sendable (Opening) -> Void) async throws {
        guard let first = configuration.hosts.first else { return }
        if let file = configuration.addressFile, let running = Self.runningInstance(addressFile: file) { throw running }
        // Before anything is bound: a folder others may write stops the app at once, rather than
        // after it has started serving and must shut down again.
        for file in [configuration.addressFile, configuration.launchFile].compactMap({ $0 }) { try Self.makePrivateFolder(of: file) }
        let (port, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let primary = application(host: first, port: configuration.port) { port in
            portContinuation.yield(port)
            portContinuation.finish()
        }
        let others = OtherListeners(server: self, hosts: Array(configuration.hosts.dropFirst()), port: port, ready: ready)
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: relay), .init(service: primary), .init(service: others)],
                gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        try await group.run()
        // Removed only while they are still this instance's own: each holds this instance's token.
        let bound = boundPort.withLockedValue { $0 }
        for (file, contents) in launchFiles(port: bound, token: token) where Self.contents(of: file) == contents {
            unlink(file)
        }
    }

    /// Another instance of the Settings app serves this user: its address file is there and its
    /// port answers.
    public struct AlreadyRunning: Error, CustomStringConvertible {
        public let port: Int
        public let addressFile: String
        public var description: String { "the Settings app is already running on port \(port); its address is in \(addressFile)" }
    }

    /// The instance the address file names, when its port still accepts a connection; nil for
    /// no file, or a file left by one that is gone (which this instance then replaces).
    static func runningInstance(addressFile: String) -> AlreadyRunning? {
        guard let text = contents(of: addressFile), let parts = URLComponents(string: text.trimmingCharacters(in: .whitespacesAndNewlines)),
            let port = parts.port, (1...65535).contains(port)
        else { return nil }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        return connected == 0 ? AlreadyRunning(port: port, addressFile: addressFile) : nil
    }

    /// The largest address file or launch page read back (to find a running instance, or to
    /// know a file is still this instance's own): each is under a kilobyte.
    static let maximumOwnFileBytes = 64 << 10

    private static func contents(of path: String) -> String? {
        guard case .success(let file) = RegularFile.read(atPath: path, maximumBytes: maximumOwnFileBytes) else { return nil }
        return String(decoding: file.data, as: UTF8.self)
    }

    /// Whether `run` failed because another program holds the port.
    public static func portIsTaken(_ error: any Error) -> Bool {
        if let failure = error as? IOError { return failure.errnoCode == EADDRINUSE }
        return "\(error)".contains("Address already in use")
    }

    /// The app's address, once the port is known; by itself it is refused.
    func address(port: Int) -> String { "http://127.0.0.1:\(port)/" }

    /// The address with `token`, as the address file holds it.
    func address(port: Int, token: String) -> String { address(port: port) + "?token=" + token }

    /// Binds the remaining hosts on the first one's port, writes the address file, reports ready.
    private struct OtherListeners: Service {
        let server: SettingsServer
        let hosts: [String]
        let port: AsyncStream<Int>
        let ready: @Sendable (Opening) -> Void

        func run() async throws {
            var ports = port.makeAsyncIterator()
            guard let port = await ports.next() else { return }
            server.boundPort.withLockedValue { $0 = port }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for host in hosts {
                    let bound = AsyncStream.makeStream(of: Int.self)
                    group.addTask {
                        do {
                            try await server.application(host: host, port: port) { _ in bound.continuation.finish() }.run()
                        } catch {
                            // ::1 is missing where IPv6 is off; 127.0.0.1 still serves.
                            server.logger.notice("not listening on \(host)", metadata: ["error": "\(error)"])
                            bound.continuation.finish()
                        }
                    }
                    for await _ in bound.stream {}
                }
                for await _ in server.relay.firstAttempt {}
                let opening = try server.keys.launch.withValue { (token: String) throws -> Opening in
                    for (file, contents) in server.launchFiles(port: port, token: token) { try server.writePrivateFile(file, contents) }
                    return Opening(address: server.address(port: port), token: token, launchFile: server.configuration.launchFile)
                }
                ready(opening)
                // Each application shuts down by itself when the service group does (graceful
                // shutdown reaches the child tasks), so a stop logs no error.
                try await group.waitForAll()
            }
        }
    }

    /// The files that hold `token`, each with what it holds: the address file and the launch page,
    /// those the configuration names.
    func launchFiles(port: Int, token: String) -> [(path: String, contents: String)] {
        var files: [(path: String, contents: String)] = []
        if let file = configuration.addressFile { files.append((file, address(port: port, token: token) + "\n")) }
        if let file = configuration.launchFile { files.append((file, launchPage(port: port, token: token))) }
        return files
    }

    /// Writes `token`, which has just replaced a traded one, where that one was; called under the
    /// token's lock (``LaunchToken/trade(_:replace:)``), so it is handed the token rather than
    /// reading it. Each file is replaced whole, a new file renamed over it: the page that held the
    /// traded token is gone. A file that cannot be written anew is removed rather than left
    /// holding the traded token.
    func replaceLaunchToken(with token: String) {
        let port = boundPort.withLockedValue { $0 }
        for (file, contents) in launchFiles(port: port, token: token) {
            do {
                try writePrivateFile(file, contents)
            } catch {
                unlink(file)
                logger.warning(
                    "cannot write the next launch token; the file that held the used one is removed",
                    metadata: ["file": "\(file)", "error": "\(error)"])
            }
        }
        logger.info("a launch token was traded for a session; the launch page holds the next one")
    }

    /// The launch page: its form posts the token and the page to open (`#/apps/<domain>` after
    /// the file's address, else the root) to `/launch`.
    func launchPage(port: Int, token: String) -> String {
        """
        <!doctype html>
        <meta charset="utf-8">
        <title>Settings</title>
        <form id="launch" method="post" action="http://127.0.0.1:\(port)/launch">
        <input type="hidden" name="token" value="\(token)">
        <input type="hidden" name="next" value="/">
        <noscript><button>Open Settings</button></noscript>
        </form>
        <script>
        const form = document.getElementById("launch");
        if (location.hash.startsWith("#/")) form.next.value = decodeURIComponent(location.hash.slice(1));
        form.submit();
        </script>

        """
    }

    /// Makes the folder of `path` (mode 700) where it is missing, and refuses one that another
    /// user could change: the files written there hold the launch token.
    private static func makePrivateFolder(of path: String) throws {
        mkdir(SystemText.parentDirectory(of: path), 0o700)
        try SocketTrust.checkDirectory(ofSocket: path)
    }

    /// Writes a file in the daemon's runtime folder, which must be trusted as the socket's is
    /// (``SocketTrust``): made here with mode 0700 when missing, and otherwise the user's or
    /// root's, writable by no one else. The temporary file has a random name and is created new
    /// (`O_EXCL`), never through a link (`O_NOFOLLOW`), then renamed over the old one.
    private func writePrivateFile(_ path: String, _ contents: String) throws {
        try Self.makePrivateFolder(of: path)
        let temporary = path + ".tmp-" + SystemText.hex((0..<8).map { _ in UInt8.random(in: 0...255) })
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DefaultsError(.ioError, "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        fchmod(fd, 0o600)
        guard FileDescriptorIO.write(contents, to: fd), rename(temporary, path) == 0 else {
            unlink(temporary)
            throw DefaultsError(.ioError, "cannot write \(path): \(String(cString: strerror(errno)))")
        }
    }

}

/// The page's files, compiled into the program (SwiftPM `embedInCode`): nothing is read from
/// disk or fetched at run time.
enum Assets {
    static var page: [UInt8] { PackageResources.index_html }
    /// The page's script modules by file name, each served at `/assets/<name>`: `app.js` is the
    /// one `index.html` loads, and it imports the others by relative path, so a module missing
    /// here (or from Package.swift) stops the page from starting.
    static var scripts: [(name: String, bytes: [UInt8])] {
        [
            ("app.js", PackageResources.app_js), ("api.js", PackageResources.api_js), ("dom.js", PackageResources.dom_js),
            ("domains.js", PackageResources.domains_js), ("live.js", PackageResources.live_js),
            ("navigation.js", PackageResources.navigation_js), ("panes.js", PackageResources.panes_js),
            ("root.js", PackageResources.root_js), ("schema.js", PackageResources.schema_js), ("tree.js", PackageResources.tree_js),
            ("words.js", PackageResources.words_js),
        ]
    }
    static var style: [UInt8] { PackageResources.app_css }
    static var icon: [UInt8] { PackageResources.icon_svg }
}
