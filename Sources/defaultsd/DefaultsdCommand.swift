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
            With no options it stores domains in $XDG_CONFIG_HOME/defaultsd and listens on \
            $XDG_RUNTIME_DIR/defaultsd/socket. Configuration comes from --config, else \
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

    @Option(name: .customLong("max-pending-reply-bytes"), help: "Answers a connection may leave unread before its requests wait.")
    var maximumPendingReplyBytes: Int?

    @Option(name: .customLong("max-domain-bytes"), help: "Largest domain, in bytes of its JSON encoding.")
    var maximumDomainBytes: Int?

    @Option(name: .customLong("max-connections"), help: "Most connections served at once.")
    var maximumConnections: Int?

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String?

    @Option(name: .customLong("managed-dir"), help: "The administrator's managed (forced) preferences.")
    var managedPreferencesDirectory: String?

    @Option(name: .customLong("machine-id-file"), help: "The file holding this machine's id (by-host domains).")
    var machineIDFile: String?

    /// Command-line values, applied over the configuration file through the same checks.
    var overrides: [(flag: String, key: String, value: ConfigurationValue)] {
        var result: [(flag: String, key: String, value: ConfigurationValue)] = []
        if let socket { result.append(("--socket", "socket", .string(socket))) }
        if let storageDirectory { result.append(("--storage-dir", "storageDirectory", .string(storageDirectory))) }
        if let format { result.append(("--format", "fileFormat", .string(format))) }
        if let coalesceMilliseconds { result.append(("--coalesce-ms", "coalesceMilliseconds", .integer(coalesceMilliseconds))) }
        if let maximumLineBytes { result.append(("--max-line-bytes", "maximumLineBytes", .integer(maximumLineBytes))) }
        if let maximumPendingReplyBytes {
            result.append(("--max-pending-reply-bytes", "maximumPendingReplyBytes", .integer(maximumPendingReplyBytes)))
        }
        if let maximumDomainBytes { result.append(("--max-domain-bytes", "maximumDomainBytes", .integer(maximumDomainBytes))) }
        if let maximumConnections { result.append(("--max-connections", "maximumConnections", .integer(maximumConnections))) }
        if let logLevel { result.append(("--log-level", "logLevel", .string(logLevel))) }
        if let managedPreferencesDirectory {
            result.append(("--managed-dir", "managedPreferencesDirectory", .string(managedPreferencesDirectory)))
        }
        if let machineIDFile { result.append(("--machine-id-file", "machineIDFile", .string(machineIDFile))) }
        return result
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
struct DaemonService: Service {
    let daemon: DefaultsDaemon
    let listeningSocket: Int32?
    let loader: ConfigurationLoader
    let level: SharedLogLevel
    let logger: Logger

    func run() async throws {
        let hangups = await UnixSignalsSequence(trapping: .sighup)
        do {
            try await daemon.start(listeningSocket: listeningSocket)
        } catch {
            await daemon.stop()
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
        await daemon.stop()
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
