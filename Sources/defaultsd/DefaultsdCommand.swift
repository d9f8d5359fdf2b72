import ArgumentParser
import DefaultsCore
import DefaultsServer
import FoundationEssentials
import Glibc
import Logging
import ServiceLifecycle
import SystemdSupport
import UnixSignals

@main
struct DefaultsdCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "defaultsd",
        abstract: "The user-defaults daemon: one property-list file per domain, served on a Unix socket.",
        discussion: """
            With no options it stores domains in $XDG_CONFIG_HOME, where Foundation's UserDefaults keeps \
            them, its own files in $XDG_STATE_HOME/defaultsd, and listens on $XDG_RUNTIME_DIR/defaultsd/socket. Configuration comes from --config, else \
            $XDG_CONFIG_HOME/defaultsd/defaultsd.json, else /etc/defaultsd/defaultsd.json; flags override it. \
            SIGHUP reloads the configuration; SIGTERM or SIGINT writes everything to disk, then exits. \
            Under systemd it reports readiness (Type=notify), adopts a socket passed by socket activation \
            and answers the watchdog.
            """,
        version: ProtocolVersion.serverVersion)

    @Option(help: "The configuration file (JSON, comments allowed).")
    var config: String?

    @Flag(name: .customLong("print-config"), help: "Print the effective configuration and where each value came from, then exit.")
    var printConfig = false

    // Each option's flag and help come from its `ConfigurationOption`, the one place that
    // names it; the property only holds what was typed, and `overrides` hands it back to it.
    @Option(name: Self.flag(.socket), help: Self.help(.socket)) var socket: String?
    @Option(name: Self.flag(.storageDirectory), help: Self.help(.storageDirectory)) var storageDirectory: String?
    @Option(name: Self.flag(.stateDirectory), help: Self.help(.stateDirectory)) var stateDirectory: String?
    @Option(name: Self.flag(.fileFormat), help: Self.help(.fileFormat)) var fileFormat: String?
    @Option(name: Self.flag(.coalesceMilliseconds), help: Self.help(.coalesceMilliseconds)) var coalesceMilliseconds: Int?
    @Option(name: Self.flag(.maximumLineBytes), help: Self.help(.maximumLineBytes)) var maximumLineBytes: Int?
    @Option(name: Self.flag(.maximumPendingReplyBytes), help: Self.help(.maximumPendingReplyBytes)) var maximumPendingReplyBytes: Int?
    @Option(name: Self.flag(.maximumDomainBytes), help: Self.help(.maximumDomainBytes)) var maximumDomainBytes: Int?
    @Option(name: Self.flag(.maximumConnections), help: Self.help(.maximumConnections)) var maximumConnections: Int?
    @Option(name: Self.flag(.logLevel), help: Self.help(.logLevel)) var logLevel: String?
    @Option(name: Self.flag(.managedPreferencesDirectory), help: Self.help(.managedPreferencesDirectory)) var managedPreferencesDirectory: String?
    @Option(name: Self.flag(.machineIDFile), help: Self.help(.machineIDFile)) var machineIDFile: String?

    /// The long flag of a configuration option, as the option names it.
    static func flag(_ option: ConfigurationOption) -> NameSpecification {
        option.flag.map { .customLong(String($0.dropFirst(2))) } ?? .long
    }

    static func help(_ option: ConfigurationOption) -> ArgumentHelp { ArgumentHelp(option.summary) }

    /// Command-line values by configuration option, applied over the configuration file through
    /// the same checks.
    var overrides: [(option: ConfigurationOption, value: ConfigurationValue)] {
        let given: [(ConfigurationOption, ConfigurationValue?)] = [
            (.socket, socket.map { .string($0) }),
            (.storageDirectory, storageDirectory.map { .string($0) }),
            (.stateDirectory, stateDirectory.map { .string($0) }),
            (.fileFormat, fileFormat.map { .string($0) }),
            (.coalesceMilliseconds, coalesceMilliseconds.map { .integer($0) }),
            (.maximumLineBytes, maximumLineBytes.map { .integer($0) }),
            (.maximumPendingReplyBytes, maximumPendingReplyBytes.map { .integer($0) }),
            (.maximumDomainBytes, maximumDomainBytes.map { .integer($0) }),
            (.maximumConnections, maximumConnections.map { .integer($0) }),
            (.logLevel, logLevel.map { .string($0) }),
            (.managedPreferencesDirectory, managedPreferencesDirectory.map { .string($0) }),
            (.machineIDFile, machineIDFile.map { .string($0) }),
        ]
        return given.compactMap { option, value in value.map { (option, $0) } }
    }

    func run() async throws {
        umask(0o077)
        let loader = ConfigurationLoader(
            environment: ProcessInfo.processInfo.environment, explicitFile: config, overrides: overrides)
        let resolved: ResolvedConfiguration
        do {
            resolved = try loader.load()
        } catch {
            FileDescriptorIO.write("defaultsd: \(error)\n", to: STDERR_FILENO)
            throw ExitCode(78)  // EX_CONFIG
        }
        if printConfig {
            print(resolved.printed, terminator: "")
            return
        }

        let level = SharedLogLevel(resolved.configuration.logLevel)
        let journal = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in DaemonLogHandler(label: label, sharedLevel: level, journal: journal) }
        let logger = Logger(label: "defaultsd")
        if let file = resolved.file { logger.info("configuration read", metadata: ["file": "\(file)"]) }

        var listeningSocket: Int32?
        if let passed = Systemd.listeningSockets().first {
            guard Systemd.isListeningUnixStreamSocket(passed) else {
                FileDescriptorIO.write("defaultsd: the socket passed by the service manager (fd \(passed)) is not a listening Unix stream socket\n", to: STDERR_FILENO)
                throw ExitCode.failure
            }
            listeningSocket = passed
        }

        let daemon = DefaultsDaemon(configuration: resolved.configuration, logger: logger, manager: SystemdLink())
        // The service group installs the SIGTERM/SIGINT handlers before the daemon starts listening,
        // so a signal that arrives as soon as the socket exists still shuts down gracefully.
        let service = DaemonService(daemon: daemon, listeningSocket: listeningSocket, loader: loader, level: level, logger: logger)
        let group = ServiceGroup(configuration: .init(
            services: [.init(service: service)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        do {
            try await group.run()
        } catch {
            let message = (error as? DefaultsError)?.message ?? "\(error)"
            FileDescriptorIO.write("defaultsd: \(message)\n", to: STDERR_FILENO)
            throw ExitCode.failure
        }
    }
}

/// Runs the daemon until a graceful shutdown (SIGTERM, SIGINT), reloading on SIGHUP.
struct DaemonService: Service, CustomStringConvertible {
    /// How swift-service-lifecycle names the service in its debug log: never the loader, whose
    /// environment may hold secrets.
    var description: String { "defaultsd" }

    let daemon: DefaultsDaemon
    let listeningSocket: Int32?
    let loader: ConfigurationLoader
    let level: SharedLogLevel
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        let listening: DefaultsDaemon.Listening
        do {
            listening = try await daemon.start(listeningSocket: listeningSocket)
        } catch {
            await daemon.stop(nil)
            throw error
        }
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await _ in hangups { await reload() }
            }
            group.addTask {
                // Start-up has settled a moment after the daemon is ready; its code need not stay mapped.
                if (try? await cancelWhenGracefulShutdown { try await Task.sleep(for: StartupCode.settleTime) }) != nil {
                    // Logged first: the logging code faulted back in after the release would stay resident.
                    logger.info("start-up settled; releasing the mappings of code used only to start")
                    StartupCode.release()
                }
                try? await gracefulShutdown()
            }
            await group.next()
            group.cancelAll()
        }
        await daemon.stop(listening)
    }

    /// Re-reads the configuration; a configuration that does not load leaves the old one in force.
    func reload() async {
        do {
            let resolved = try loader.load()
            level.level = resolved.configuration.logLevel
            await daemon.reload(resolved.configuration)
        } catch {
            logger.error("configuration not reloaded; the previous one stays in force", metadata: ["error": "\(error)"])
            await daemon.reloadFailed()
        }
    }
}
