import ArgumentParser
import DefaultsCore
import Foundation
import Logging
import SettingsApp

/// `defaultsd-settings`: the Settings app, a local web page over defaultsd.
@main
struct SettingsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaultsd-settings",
        abstract: "The Settings app: every installed Settings bundle as a local web page, edited through defaultsd and updated live.",
        discussion: """
            Listens on 127.0.0.1 and ::1 only. Open the app with \
            `xdg-open $XDG_RUNTIME_DIR/defaultsd/settings.html`, its launch page (mode 0600): the token stays off every \
            command line. The page's address with its token is printed only when standard output is a terminal; \
            elsewhere (a pipe, a file, the journal) the address alone and the launch page are. \
            The address with the token is also in $XDG_RUNTIME_DIR/defaultsd/settings-url (mode 0600). \
            A token opens the app once: it is traded for a session that lives under a secret path, and both files \
            then hold a new one.
            """)

    @Option(help: "The port to listen on (0: any free port).")
    var port: Int = SettingsServer.defaultPort

    @Option(help: "defaultsd's socket (default: $DEFAULTSD_SOCKET, else the daemon's default).")
    var socket: String?

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = .info
            return handler
        }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        let server = SettingsServer(
            configuration: .init(
                port: port,
                socketPath: socket ?? DefaultPaths.clientSocketPath(environment: environment, uid: getuid()),
                addressFile: DefaultPaths.settingsAddressFile(environment: environment, uid: getuid()),
                launchFile: DefaultPaths.settingsLaunchFile(environment: environment, uid: getuid())))
        do {
            try await server.run { opening in
                // One write, unbuffered: a script or test reading the address gets it at once. The
                // token only to a terminal: a unit's output goes to the journal, which others read.
                _ = FileDescriptorIO.write(opening.line(toTerminal: isatty(STDOUT_FILENO) == 1) + "\n", to: STDOUT_FILENO)
            }
        } catch let running as SettingsServer.AlreadyRunning {
            FileDescriptorIO.write("defaultsd-settings: \(running)\n", to: STDERR_FILENO)
            throw ExitCode(69)  // EX_UNAVAILABLE
        } catch where SettingsServer.portIsTaken(error) {
            FileDescriptorIO.write(
                "defaultsd-settings: port \(port) is in use by another program (another Settings app?); --port 0 takes any free port\n",
                to: STDERR_FILENO)
            throw ExitCode(69)  // EX_UNAVAILABLE
        }
    }
}
