import DefaultsCore
import EtcdWire
import EtcdGateway
import Logging
import NIOCore
import NIOPosix

/// The daemon's link to the etcd cluster: one watch on the user's prefix, and a sender that
/// turns the queue of local changes into guarded transactions (docs/ROAMING.md).
///
/// Owned by `DefaultsDaemon`, started after the socket and stopped before the last flush. It
/// runs on a thread of its own: an event loop that is both this actor's executor and the HTTP
/// client's. It never touches the store: everything it learns, and everything it sends, goes
/// through ``RoamingState`` on the state-owning loop (`submit`), so the store keeps one owner.
actor RoamingLink {
    private let group: MultiThreadedEventLoopGroup
    private let loop: EventLoop
    private let etcd: EtcdClient
    /// The daemon's shared state, whose store holds the ``RoamingState``; reachable only on its loop.
    private let server: NIOLoopBoundBox<ServerContext>
    private let stateLoop: EventLoop
    private let keys: RoamingKeys
    private let logger: Logger
    private var tasks: [Task<Void, Never>] = []
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// The wait before retrying a cluster that did not answer; doubled up to ``longestRetryDelay``.
    static let firstRetryDelay = Duration.milliseconds(100)
    static let longestRetryDelay = Duration.seconds(2)

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.executor.asUnownedSerialExecutor() }

    init(server: NIOLoopBoundBox<ServerContext>, configuration: RoamingConfiguration, logger: Logger) throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.group = group
        self.loop = group.next()
        self.etcd = try EtcdClient(configuration: configuration.etcd, eventLoopGroup: group)
        self.stateLoop = server.eventLoop
        self.server = server
        self.keys = RoamingKeys(prefix: configuration.prefix)
        self.logger = logger
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Starts watching and sending; returns at once.
    func start() async {
        let wake = self.wake
        _ = try? await onState { $0.wakeSender = { wake.yield() } }
        wake.yield()  // the queue kept from the last run
        tasks.append(Task { await self.watchForever() })
        tasks.append(Task { await self.sendForever() })
    }

    /// Stops both; the queue stays in the journal for the next run.
    func stop() async {
        for task in tasks { task.cancel() }
        wake.finish()
        for task in tasks { await task.value }
        tasks = []
        try? await etcd.shutdown()
        try? await group.shutdownGracefully()
    }

    /// Reads the domains that just started roaming (a reload) and takes in what etcd holds,
    /// trying again until the cluster answers; returns at once.
    func startRoaming(_ domains: [DomainName]) {
        guard !domains.isEmpty else { return }
        tasks.append(Task {
            var delay = RoamingLink.firstRetryDelay
            while !Task.isCancelled {
                do { return try await self.read(domains) } catch {
                    try? await Task.sleep(for: delay)
                    delay = min(delay * 2, RoamingLink.longestRetryDelay)
                }
            }
        })
    }

    // MARK: - Watching

    private func watchForever() async {
        var delay = RoamingLink.firstRetryDelay
        while !Task.isCancelled {
            do {
                if try await onState({ $0.needsFullRead }) { try await read(nil) }
                let from = try await onState { $0.revision } + 1
                try await etcd.watch(prefix: keys.prefix, from: from) { message in try await self.received(message) }
                delay = RoamingLink.firstRetryDelay
            } catch let error as EtcdError {
                // No member answered, or the cluster refused: that is the loss of the cluster.
                if Task.isCancelled { return }
                _ = try? await onState { $0.reached(false, problem: "\(error)") }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, RoamingLink.longestRetryDelay)
            } catch {
                // The stream broke (its member stopped): the next attempt goes to another member
                // and resumes after the last revision applied. Only a repeated break waits.
                if Task.isCancelled { return }
                try? await Task.sleep(for: delay - RoamingLink.firstRetryDelay)
                delay = min(delay * 2, RoamingLink.longestRetryDelay)
            }
        }
    }

    private func received(_ message: EtcdWatchMessage) async throws {
        if message.canceled {
            if let compacted = message.compactRevision {
                logger.notice("the revision to resume from was compacted; reading every roaming key again", metadata: [
                    "oldestKept": "\(compacted)"])
                try await onState { $0.readEverythingBeforeWatching() }
            }
            return
        }
        try await onState { state in
            state.reached(true)
            if !message.events.isEmpty { state.apply(message) }
        }
    }

    /// Reads the prefix (or the given domains' parts of it) and makes the local domains equal.
    private func read(_ domains: [DomainName]?) async throws {
        guard let domains else {
            let range = try await etcd.range(prefix: keys.prefix)
            try await onState { $0.resynchronize(range) }
            return
        }
        for domain in domains {
            let range = try await etcd.range(prefix: keys.domainPrefix(domain))
            try await onState { $0.resynchronize(range, domains: [domain]) }
        }
    }

    // MARK: - Sending

    private func sendForever() async {
        for await _ in wakes {
            await sendQueue()
        }
    }

    /// Sends transactions until the queue is empty. Changes made while one is on its way
    /// gather in the queue and leave together in the next: a burst becomes a few transactions.
    private func sendQueue() async {
        var delay = RoamingLink.firstRetryDelay
        while !Task.isCancelled {
            guard let batch = try? await onState({ $0.nextBatch() }) else { return }
            do {
                let result = try await etcd.transaction(
                    comparing: batch.items.map { EtcdCompare(key: $0.etcdKey, modRevision: $0.expectedRevision) },
                    success: batch.items.map { .put(key: $0.etcdKey, value: $0.entry) },
                    failure: batch.items.map { .get(key: $0.etcdKey) })
                try await onState { state in
                    state.finish(batch, result)
                    state.reached(true)
                }
                delay = RoamingLink.firstRetryDelay
            } catch {
                if Task.isCancelled { return }
                _ = try? await onState { $0.reached(false, problem: "\(error)") }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, RoamingLink.longestRetryDelay)
            }
        }
    }

    /// Runs `body` on the state-owning loop, the only way this type reaches the roaming state.
    private func onState<Result: Sendable>(_ body: @escaping @Sendable (RoamingState) -> Result) async throws -> Result {
        let server = self.server
        return try await stateLoop.submit { body(server.value.store.roaming!) }.get()
    }
}
