import DefaultsCore
import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The daemon: binds the socket, serves connections and shuts down without losing a write.
///
/// All state lives on one event loop (`store.eventLoop`); this type only starts and stops it.
///
/// ```swift
/// let daemon = DefaultsDaemon(configuration: .standard(environment: ProcessInfo.processInfo.environment), logger: logger)
/// try await daemon.start()
/// // ... until SIGTERM
/// await daemon.stop()
/// ```
public final class DefaultsDaemon: Sendable {
    public let configuration: DaemonConfiguration
    private let logger: Logger
    private let group: MultiThreadedEventLoopGroup
    private let writer: NIOThreadPool
    private let server: ServerContext
    private let listener = NIOLockedValueBox<Channel?>(nil)

    public init(configuration: DaemonConfiguration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        // One loop owns all state, as in Redis; the writer thread does the disk work.
        self.group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.writer = NIOThreadPool(numberOfThreads: 1)
        let loop = group.next()
        let store = DefaultsStore(eventLoop: loop, writer: writer, configuration: configuration, logger: logger)
        self.server = ServerContext(store: store, configuration: configuration, logger: logger, daemonUID: getuid())
    }

    /// Checks the storage directory and starts listening. Throws a readable error if either fails.
    public func start() async throws {
        writer.start()
        try DomainFiles(directory: configuration.storageDirectory, format: configuration.fileFormat).prepare()
        try await SocketPath.prepare(
            configuration.socketPath,
            requirePrivateParent: configuration.socketPath == DefaultPaths.socketPath(environment: [:], uid: getuid()),
            uid: getuid(), group: group)
        let server = self.server
        let maximumLine = configuration.maximumLineBytes
        let channel = try await ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: 256)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelOption(ChannelOptions.writeBufferWaterMark, value: .init(low: 32 * 1024, high: 256 * 1024))
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandlers([
                        ByteToMessageHandler(LineFrameDecoder(maximumLineBytes: maximumLine), maximumBufferSize: maximumLine + 1),
                        RequestDecoder(),
                        ResponseEncoder(),
                        ConnectionHandler(server: server),
                    ])
                }
            }
            .bind(unixDomainSocketPath: configuration.socketPath)
            .get()
        chmod(configuration.socketPath, 0o600)
        listener.withLockedValue { $0 = channel }
        logger.info(
            "defaultsd \(ProtocolVersion.serverVersion) listening",
            metadata: ["socket": "\(configuration.socketPath)", "storage": "\(configuration.storageDirectory)"])
    }

    /// Stops accepting, refuses new writes, makes every accepted write durable, then closes.
    public func stop() async {
        let server = self.server
        let loop = server.store.eventLoop
        let listening = listener.withLockedValue { $0 }
        try? await listening?.close()
        do {
            try await loop.flatSubmit {
                server.isStopping = true
                return server.store.synchronize()
            }.get()
        } catch {
            logger.error("final flush failed", metadata: ["error": "\(error)"])
        }
        let channels = (try? await loop.submit { Array(server.channels.values) }.get()) ?? []
        for channel in channels { try? await channel.close() }
        if listening != nil { unlink(configuration.socketPath) }
        try? await writer.shutdownGracefully()
        try? await group.shutdownGracefully()
        logger.info("defaultsd stopped; every write is on disk")
    }
}
