import DefaultsCore
import EtcdGateway
import EtcdWire
import Logging
import NIOCore
import NIOPosix

/// The daemon's link to the etcd cluster: one watch on the user's prefix, a periodic check
/// that the watch is current (``WatchHealth``), and a sender that turns the queue of local
/// changes into guarded transactions (docs/ROAMING.md).
///
/// Owned by `DefaultsDaemon`, started after the socket and stopped before the last flush. It
/// runs on a thread of its own: an event loop that is both this actor's executor and the HTTP
/// client's. It never touches the store: everything it learns goes to ``RoamingState`` on the
/// state-owning loop as a report (``report(_:)``, the one channel, one hop each), and what it
/// sends is what the state hands it, so the store keeps one owner.
actor RoamingLink {
    let group: MultiThreadedEventLoopGroup
    let loop: EventLoop
    let etcd: EtcdClient
    /// The daemon's shared state, whose store holds the ``RoamingState``; reachable only on its loop.
    private let server: NIOLoopBoundBox<ServerContext>
    private let stateLoop: EventLoop
    let keys: RoamingKeys
    private let logger: Logger
    private var tasks: [Task<Void, Never>] = []
    /// The transactions the state hands the sender while it waits.
    private let wakes: AsyncStream<RoamingState.Batch>
    private let wake: AsyncStream<RoamingState.Batch>.Continuation

    /// The watch running now: its number (one per start), its member, and its task, which a
    /// stale verdict cancels.
    var watch: (number: Int, member: Int, task: Task<Void, any Error>)?
    private var watchesStarted = 0
    /// The watch found stale by a check: its end is a move to another member, not a failure.
    var abandonedWatch: Int?
    /// The watch in flight ended because its start revision was compacted: it starts again at once.
    private var watchEndedForCompaction = false
    /// The member the next watch runs through: the first configured, then the next after one
    /// that failed or went stale.
    var nextMember = 0
    var health = WatchHealth()
    var lastCheck: WatchHealth.Check?

    /// The wait before retrying a cluster that did not answer; doubled up to ``longestRetryDelay``.
    static let firstRetryDelay = Duration.milliseconds(100)
    static let longestRetryDelay = Duration.seconds(2)
    /// How often the members are asked whether the watch is current. Each check is one status
    /// request per member and one read of a single key, each within the client's request
    /// timeout; a stale watch is found within two of these and a timeout (``WatchHealth``).
    static let checkInterval = Duration.seconds(2)

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
        // The state hands out one batch at a time (it then waits for the sender's report), so
        // nothing is ever dropped here.
        (wakes, wake) = AsyncStream.makeStream(of: RoamingState.Batch.self)
    }

    /// Starts watching and sending; returns at once.
    func start() async {
        let wake = self.wake
        _ = try? await report(.started(wake: { wake.yield($0) }))
        tasks.append(Task { await self.watchForever() })
        tasks.append(Task { await self.checkForever() })
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
            watchesStarted += 1
            let number = watchesStarted
            let member = nextMember
            let task = Task { try await self.watchOnce(through: member) }
            watch = (number, member, task)
            health.watchRestarted()
            let result = await withTaskCancellationHandler { await task.result } onCancel: { task.cancel() }
            watch = nil
            if Task.isCancelled { return }
            if abandonedWatch == number {
                // A check found it stale: another member, at once.
                delay = RoamingLink.firstRetryDelay
                continue
            }
            let compacted = watchEndedForCompaction
            watchEndedForCompaction = false
            let end: WatchEnd
            switch result {
            case .success: end = compacted ? .compacted : .endedByMember
            case .failure(let error as EtcdError):
                end = .refused
                _ = try? await report(.unreachable(problem: "\(error)"))
            case .failure: end = .broken
            }
            let next = RoamingLink.restart(after: end, delay: delay)
            if next.anotherMember {
                nextMember = WatchHealth.nextMember(after: member, of: etcd.endpoints.count, check: lastCheck)
            }
            if next.wait > .zero { try? await Task.sleep(for: next.wait) }
            delay = next.delay
        }
    }

    /// How a watch ended.
    enum WatchEnd: Equatable {
        /// Its start revision was compacted away.
        case compacted
        /// The member ended the stream without saying why.
        case endedByMember
        /// The member refused (it has no leader), or no member answered the read before it.
        case refused
        /// The stream broke (its member stopped).
        case broken
    }

    /// When the next watch starts, through which member, and the wait after it if that one ends
    /// too: the rule that keeps a member ending watches from being asked again in a tight loop.
    /// - A compaction: a full read, then a watch at once.
    /// - A stream the member ended: the same member, after a wait that doubles each time.
    /// - A refusal: another member, after that wait.
    /// - A break: another member at once the first time; only a repeated break waits.
    static func restart(after end: WatchEnd, delay: Duration) -> (wait: Duration, delay: Duration, anotherMember: Bool) {
        let longer = min(delay * 2, longestRetryDelay)
        switch end {
        case .compacted: return (.zero, firstRetryDelay, false)
        case .endedByMember: return (delay, longer, false)
        case .refused: return (delay, longer, true)
        case .broken: return (delay - firstRetryDelay, longer, true)
        }
    }

    /// One watch through `member`, after a full read when one is due; resumes after the last
    /// revision applied, so that nothing is missed and nothing is applied twice.
    private func watchOnce(through member: Int) async throws {
        var progress = try await report(.watching(member: member))
        if progress.needsFullRead {
            progress = try await report(.read(try await etcd.range(prefix: keys.prefix), domains: nil))
        }
        try await etcd.watch(prefix: keys.prefix, from: progress.revision + 1, member: member) { message in
            try await self.received(message, through: member)
        }
    }

    private func received(_ message: EtcdWatchMessage, through member: Int) async throws {
        if message.canceled {
            guard let compacted = message.compactRevision else {
                // Cancelled for another reason (permission denied, say): a failure, retried after a wait.
                throw EtcdError.refused(code: 0, message: "the member cancelled the watch")
            }
            watchEndedForCompaction = true
            _ = try await report(.compacted(oldestKept: compacted))
            return
        }
        _ = try await report(.delivered(message, member: member))
    }

    // MARK: - Sending

    private func sendForever() async {
        for await batch in wakes {
            await send(batch)
        }
    }

    /// Sends transactions, each the state's next, until it has none (it then wakes the sender
    /// again). Changes made while one is on its way gather in the queue and leave together in
    /// the next: a burst becomes a few transactions.
    private func send(_ first: RoamingState.Batch) async {
        var next: RoamingState.Batch? = first
        var delay = RoamingLink.firstRetryDelay
        while let batch = next, !Task.isCancelled {
            do {
                let result = try await etcd.transaction(
                    comparing: batch.items.map { EtcdCompare(key: $0.etcdKey, modRevision: $0.expectedRevision) },
                    success: batch.items.map { .put(key: $0.etcdKey, value: $0.entry) },
                    failure: batch.items.map { .get(key: $0.etcdKey) })
                next = try await report(.sent(batch, result)).batch
                delay = RoamingLink.firstRetryDelay
            } catch EtcdError.refused(_, let message) {
                // Refused, not unanswered: sending it again as it is would be refused again.
                next = try? await report(.sendRefused(batch, reason: message)).batch
            } catch {
                if Task.isCancelled { return }
                next = try? await report(.sendFailed(problem: "\(error)")).batch
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, RoamingLink.longestRetryDelay)
            }
        }
    }

    /// Hands a report to the state on the state-owning loop: the one way this type reaches it.
    func report(_ report: RoamingState.Report) async throws -> RoamingState.Progress {
        let server = self.server
        return try await stateLoop.submit {
            let store = server.value.store
            // The daemon makes the state with the link, and neither outlives the other.
            guard let state = store.roaming else { throw CancellationError() }
            return state.take(report, in: store)
        }.get()
    }
}
