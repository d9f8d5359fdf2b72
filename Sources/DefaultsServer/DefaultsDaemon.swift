import DefaultsCore
import FoundationEssentials
import Glibc
import Logging
import NIOCore
import NIOPosix

/// The daemon: binds the socket, serves connections and shuts down without losing a write.
///
/// All state lives on one event loop (`store.eventLoop`); this type only starts and stops it.
///
/// ```swift
/// let daemon = DefaultsDaemon(configuration: .standard(environment: ProcessInfo.processInfo.environment), logger: logger)
/// let listening = try await daemon.start()
/// // ... until SIGTERM
/// await daemon.stop(listening)
/// ```
public final class DefaultsDaemon: Sendable {
    /// The listening socket `start` opened, owned by whoever started the daemon (the service's
    /// `run`) and handed back to `stop`.
    public struct Listening: Sendable {
        let channel: Channel
        /// True when the socket was passed in (socket activation): it is not ours to remove.
        let adopted: Bool
    }

    /// The configuration it started with: the socket, storage and format, which only a restart
    /// changes. What a reload changes lives with the loop (`ServerContext.configuration`).
    private let configuration: DaemonConfiguration
    private let logger: Logger
    private let manager: ServiceManagerLink
    private let group: MultiThreadedEventLoopGroup
    private let writer: NIOThreadPool
    /// Reads Settings bundles off the event loop.
    private let scanner: NIOThreadPool
    /// Writes, reads and compacts the change journal off the event loop, apart from the writer so
    /// that a compaction never delays a domain's write.
    private let journalThread: NIOThreadPool
    /// The storage directory and file format the store, the write-behind and start-up share.
    private let files: DomainFiles
    /// The state-owning loop, and the state every connection shares, reachable only on that loop.
    private let loop: EventLoop
    private let state: NIOLoopBoundBox<ServerContext>
    /// The link to the etcd cluster when roaming is configured, or why it could not be made
    /// (a certificate that does not load), which `start` reports.
    private let roamingLink: Result<RoamingLink, Error>?

    public init(configuration: DaemonConfiguration, logger: Logger, manager: ServiceManagerLink = NoServiceManager()) {
        self.configuration = configuration
        self.logger = logger
        self.manager = manager
        // One loop owns all state, as in Redis; the writer thread does the disk work.
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.writer = NIOThreadPool(numberOfThreads: 1)
        self.scanner = NIOThreadPool(numberOfThreads: 1)
        self.journalThread = NIOThreadPool(numberOfThreads: 1)
        let loop = group.next()
        let machineID = MachineID.read(path: configuration.machineIDFile)
        let files = DomainFiles(
            directory: configuration.storageDirectory, stateDirectory: configuration.effectiveStateDirectory, format: configuration.fileFormat,
            hostID: DomainFiles.hostID(sharesFoundationFolder: configuration.usesSharedStorage, machineID: machineID))
        self.files = files
        // Before anything reads the ledger or the roaming journal, which may still be there.
        if configuration.usesSharedStorage {
            FormerFolderMove.run(
                former: configuration.formerStorageDirectory, shared: configuration.storageDirectory,
                state: configuration.effectiveStateDirectory, machineID: machineID, logger: logger)
        }
        let managedFiles = ManagedPreferenceFiles(
            directory: configuration.managedPreferencesDirectory, userName: DefaultsDaemon.userName, daemonUID: getuid())
        self.loop = loop
        let descriptors = DescriptorBudget.raised()
        let connections = descriptors.connectionLimit(configured: configuration.maximumConnections)
        if connections < configuration.maximumConnections {
            logger.notice("fewer connections are served than maximumConnections says: the descriptor limit leaves room for no more", metadata: [
                "connections": "\(connections)",
                "descriptorLimit": "\(descriptors.softLimit)", "reserved": "\(DescriptorBudget.reserve)"])
        }
        let server = DaemonAssembly.server(
            on: loop, configuration: configuration, files: files,
            writer: ThreadedFileWriter(eventLoop: loop, thread: writer, files: files), scannerThread: scanner,
            roamingJournalThread: writer, changeJournalThread: journalThread, managedFiles: managedFiles, daemonUID: getuid(), descriptors: descriptors,
            logger: logger)
        let state = NIOLoopBoundBox.makeBoxSendingValue(server, eventLoop: loop)
        self.state = state
        self.roamingLink = configuration.roaming.isEnabled
            ? Result { try RoamingLink(server: state, configuration: configuration.roaming, logger: logger) } : nil
    }

    /// The name of the daemon's user, which names its own managed preferences directory.
    static var userName: String {
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return String(getuid()) }
        return String(cString: name)
    }

    /// Checks the storage directory and starts listening, on `listeningSocket` when one was passed
    /// in (socket activation), else on the configured path. Throws a readable error if either fails.
    public func start(listeningSocket: Int32? = nil) async throws -> Listening {
        JournalMemory.keepLargeBuffersMapped()
        writer.start()
        scanner.start()
        journalThread.start()
        // The journal is written behind the changes: where it competes with the loop for a CPU
        // (a burst of changes), the loop, which answers clients, goes first, nearly always
        // (nice 19 weighs 1.5 % of nice 0), yet the journal is never starved. On Linux a nice
        // value is a thread's own, and 0 names the calling thread.
        _ = try? await journalThread.runIfActive { _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19) }
        try files.prepare()
        if files.hostID == nil {
            logger.warning("by-host domains read as empty and cannot be written: this machine has no id", metadata: [
                "file": "\(configuration.machineIDFile)"])
        }
        let leftovers = files.removeTemporaryFiles()
        if !leftovers.isEmpty {
            logger.notice("removed temporary files left by an earlier run", metadata: ["files": "\(leftovers.joined(separator: ", "))"])
        }
        let state = self.state
        try await loop.flatSubmit {
            guard let outside = state.value.outside else { return state.value.store.eventLoop.makeSucceededVoidFuture() }
            outside.domainFiles.start()
            outside.managed.start()
            return outside.watcher.start()
        }.get()
        // Settings bundles are read before the socket opens, so the first client sees their layer;
        // but for `settingsBundleWait` at most, so that no bundle holds the start.
        let scanInterval = configuration.settingsBundleScanInterval
        let startWait = configuration.settingsBundleWait
        let bundlesRead = try await loop.flatSubmit {
            state.value.bundles.start(interval: scanInterval).completes(within: startWait)
        }.get()
        if !bundlesRead {
            logger.warning("Settings bundles are still being read; the socket opens now, and their defaults apply once they are read", metadata: [
                "waitedMilliseconds": "\(startWait.nanoseconds / 1_000_000)"])
        }
        let bootstrap = ServerBootstrap(group: group)
            .defaultsdChannelOptions()
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers(DaemonAssembly.connectionHandlers(for: state.value))
                }
            }
        let channel: Channel
        if let listeningSocket {
            channel = try await bootstrap.withBoundSocket(listeningSocket).get()
            logger.info("defaultsd \(ProtocolVersion.serverVersion) listening on a socket passed by the service manager",
                        metadata: ["storage": "\(configuration.storageDirectory)"])
        } else {
            try await SocketPath.prepare(configuration.socketPath, uid: getuid(), group: group)
            channel = try await bootstrap.bind(unixDomainSocketPath: configuration.socketPath).get()
            chmod(configuration.socketPath, 0o600)
            logger.info(
                "defaultsd \(ProtocolVersion.serverVersion) listening",
                metadata: ["socket": "\(configuration.socketPath)", "storage": "\(configuration.storageDirectory)"])
        }
        let listening = Listening(channel: channel, adopted: listeningSocket != nil)
        do {
            if let link = try roamingLink?.get() { await link.start() }
            let manager = self.manager
            try await loop.submit {
                manager.ready(status: state.value.statusLine)
                state.value.startReporting(to: manager)
            }.get()
        } catch {
            // Not started after all: the socket goes, and `stop(nil)` does the rest.
            try? await channel.close()
            if !listening.adopted { unlink(configuration.socketPath) }
            throw error
        }
        return listening
    }

    /// Applies a new configuration: what can change at run time changes now; the rest is
    /// logged as needing a restart.
    public func reload(_ configuration: DaemonConfiguration) async {
        manager.reloading()
        let state = self.state
        do {
            let startRoaming = try await loop.submit {
                let server = state.value
                server.configuration = configuration
                server.store.reconfigure(configuration)
                server.bundles.reconfigure(configuration)
                return server.store.roaming?.reconfigure(domains: configuration.roaming.domains) ?? []
            }.get()
            if case .success(let link)? = roamingLink { await link.startRoaming(startRoaming) }
            // Compared with the configuration the daemon started with, which these options keep
            // until a restart, not with the last reload's.
            let restart = ConfigurationOption.all
                .filter { $0.needsRestart && $0.current(self.configuration) != $0.current(configuration) }.map(\.key)
            if !restart.isEmpty {
                logger.warning("changes that take effect after a restart", metadata: ["keys": "\(restart.joined(separator: ", "))"])
            }
        } catch {
            // The loop is shutting down: there is nothing left to reconfigure.
        }
        logger.info("configuration reloaded")
        let manager = self.manager
        _ = try? await loop.submit { manager.ready(status: state.value.statusLine) }.get()
    }

    /// Completes a reload cycle for the service manager when the new configuration was refused.
    public func reloadFailed() async {
        manager.reloading()
        let state = self.state
        let manager = self.manager
        _ = try? await loop.submit {
            manager.ready(status: state.value.statusLine + "; configuration error, previous configuration kept")
        }.get()
    }

    /// Stops accepting (`listening`, nil when `start` did not finish), refuses new writes, makes
    /// every accepted write durable, then closes.
    public func stop(_ listening: Listening?) async {
        manager.stopping()
        let state = self.state
        let loop = self.loop
        try? await listening?.channel.close()
        if case .success(let link)? = roamingLink { await link.stop() }
        var everythingWritten = true
        do {
            try await loop.flatSubmit {
                state.value.isStopping = true
                return state.value.store.finish()
            }.get()
            try await loop.submit { state.value.store.roaming?.writeJournalNow() }.get()
            try await loop.flatSubmit { state.value.store.journal?.finish() ?? loop.makeSucceededVoidFuture() }.get()
        } catch {
            everythingWritten = false
            logger.error("final flush failed", metadata: ["error": "\(error)"])
        }
        let channels = (try? await loop.submit { () -> [Channel] in
            let server = state.value
            server.stopReporting()
            server.bundles.stop()
            _ = server.outside?.watcher.stop()
            return Array(server.channels.values)
        }.get()) ?? []
        for channel in channels { try? await channel.close() }
        if let listening, !listening.adopted { unlink(configuration.socketPath) }
        try? await scanner.shutdownGracefully()
        try? await journalThread.shutdownGracefully()
        try? await writer.shutdownGracefully()
        try? await group.shutdownGracefully()
        // After a failed start the reason follows (`defaultsd: …` on standard error), and this
        // line must not read as an orderly stop.
        switch (listening, everythingWritten) {
        case (nil, _): logger.info("defaultsd did not start")
        case (_, true): logger.info("defaultsd stopped; every write is on disk")
        case (_, false): logger.warning("defaultsd stopped; the writes that failed are named above and are not on disk")
        }
    }
}

extension ServerBootstrap {
    /// The options of defaultsd's listening socket and of every connection. The benchmark's
    /// bare SwiftNIO server (`defaultsd-bench --serve-floor`) takes them from here, so that it
    /// measures the same transport.
    public func defaultsdChannelOptions() -> ServerBootstrap {
        serverChannelOption(ChannelOptions.backlog, value: 256)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            // A subscriber that stops reading becomes unwritable here; its events then merge.
            .childChannelOption(
                ChannelOptions.writeBufferWaterMark,
                value: .init(low: BufferSizes.writeWaterMarks.low, high: BufferSizes.writeWaterMarks.high))
    }
}
