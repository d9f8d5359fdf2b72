import ArgumentParser
import DefaultsCore
import DefaultsServer
import Foundation
import Logging
import ServiceLifecycle

@main
struct DefaultsdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaultsd",
        abstract: "The user-defaults daemon: one property-list file per domain, served on a Unix socket.",
        discussion: "With no options it stores domains in $XDG_CONFIG_HOME/defaultsd and listens on "
            + "$XDG_RUNTIME_DIR/defaultsd/socket. SIGTERM or SIGINT writes everything to disk, then exits.",
        version: ProtocolVersion.serverVersion)

    @Option(help: "The Unix socket to listen on.")
    var socket: String?

    @Option(name: .customLong("storage-dir"), help: "The directory holding one property-list file per domain.")
    var storageDirectory: String?

    @Option(help: "The format domain files are written in: xml or binary.")
    var format: String?

    @Option(name: .customLong("coalesce-ms"), help: "Quiet time, in milliseconds, before changes are written.")
    var coalesceMilliseconds: Int?

    @Option(name: .customLong("max-line-bytes"), help: "Longest request line accepted.")
    var maximumLineBytes: Int?

    @Option(name: .customLong("max-domain-bytes"), help: "Largest domain, in bytes of its JSON encoding.")
    var maximumDomainBytes: Int?

    @Option(name: .customLong("max-connections"), help: "Most connections served at once.")
    var maximumConnections: Int?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    func validate() throws {
        if let format, PropertyListFile.Format(rawValue: format) == nil {
            throw ValidationError("--format must be xml or binary, not \(format)")
        }
        if Logger.Level(rawValue: logLevel) == nil { throw ValidationError("unknown --log-level \(logLevel)") }
        for (name, value) in [("--coalesce-ms", coalesceMilliseconds), ("--max-line-bytes", maximumLineBytes),
                              ("--max-domain-bytes", maximumDomainBytes), ("--max-connections", maximumConnections)] {
            if let value, value < (name == "--coalesce-ms" ? 0 : 1) {
                throw ValidationError("\(name) must be positive, not \(value)")
            }
        }
    }

    func run() async throws {
        umask(0o077)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "defaultsd")

        var configuration = DaemonConfiguration.standard(environment: ProcessInfo.processInfo.environment)
        if let socket { configuration.socketPath = socket }
        if let storageDirectory { configuration.storageDirectory = storageDirectory }
        if let format { configuration.fileFormat = PropertyListFile.Format(rawValue: format)! }
        if let coalesceMilliseconds { configuration.coalesceDelay = .milliseconds(Int64(coalesceMilliseconds)) }
        if let maximumLineBytes { configuration.maximumLineBytes = maximumLineBytes }
        if let maximumDomainBytes { configuration.maximumDomainBytes = maximumDomainBytes }
        if let maximumConnections { configuration.maximumConnections = maximumConnections }

        let daemon = DefaultsDaemon(configuration: configuration, logger: logger)
        // The service group installs the SIGTERM/SIGINT handlers before the daemon starts listening,
        // so a signal that arrives as soon as the socket exists still shuts down gracefully.
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: DaemonService(daemon: daemon))],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
        } catch {
            let message = (error as? DefaultsError)?.message ?? "\(error)"
            FileHandle.standardError.write(Data("defaultsd: \(message)\n".utf8))
            throw ExitCode.failure
        }
    }
}

/// Keeps the daemon running until a graceful shutdown (SIGTERM, SIGINT), then stops it.
struct DaemonService: Service {
    let daemon: DefaultsDaemon

    func run() async throws {
        do {
            try await daemon.start()
        } catch {
            await daemon.stop()
            throw error
        }
        try? await gracefulShutdown()
        await daemon.stop()
    }
}
