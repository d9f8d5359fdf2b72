import DefaultsCore
import EtcdWire
import FoundationEssentials
import Logging
import NIOCore
import NIOPosix

/// What this machine knows of the roaming domains' keys in etcd: the last revision applied, the
/// revision of each key it holds, and the local changes not yet in etcd (the queue).
///
/// Owned by the store (`DefaultsStore.roaming`), on the state-owning event loop: the store
/// records local changes here as it applies them, and the ``RoamingLink``, on its own thread,
/// reaches this type through one channel, its reports (``take(_:in:)``), each one hop to that
/// loop. It keeps no reference to the store: each method that reads or changes the store is
/// handed it by its caller, so nothing points back at the owner; the journal waits for the
/// write-behind, the store's collaborator, not for the store. Every method checks the loop. Its
/// parts live in four files, one job each: this one (the state, and the local changes to send),
/// `RoamingState+Reports.swift` (what the link reports), `RoamingState+Remote.swift` (the
/// changes of other machines to apply) and `RoamingState+Journal.swift` (what is written to
/// disk, and the reachability log); no other type changes its state.
///
/// The rules (docs/ROAMING.md): etcd's order decides, so every machine converges on the value
/// with the highest revision. A local change is queued and sent in a transaction that holds
/// only if the key is still at the revision this machine last saw; a write from another machine
/// in between wins, and replaces the local value. A machine's own writes coming back through the
/// watch are known by their host name and change nothing.
final class RoamingState {
    /// A key of a roaming domain.
    struct LocalKey: Hashable, Sendable {
        var domain: DomainName
        var key: String
    }

    /// A transaction's worth of queued changes, read from the store when it is built so that
    /// the latest value of each key is sent.
    struct Batch: Sendable {
        struct Item: Sendable {
            var local: LocalKey
            var etcdKey: String
            /// The queue's sequence number of the change sent; a later change keeps the key queued.
            var sequence: UInt64
            /// The key's revision as this machine last saw it (0: absent).
            var expectedRevision: Int64
            var entry: String
            /// ``RoamingKeys/digest(_:)`` of the value sent.
            var digest: UInt64
        }
        var items: [Item]
    }

    let eventLoop: EventLoop
    let hostName: String
    let endpoints: [String]
    let keys: RoamingKeys
    let journal: RoamingJournal
    let journalWriter: NIOThreadPool
    /// Whose `synchronize` the journal waits for: it is written after the domain files it describes.
    let writeBehind: WriteBehind
    let logger: Logger
    var roamingDomains: Set<DomainName>
    /// Domains configured to roam that stopped, with the reason: a remote change would have
    /// made one larger than this machine's limit. A reload that still names one tries again.
    var stopped: [DomainName: String] = [:]

    /// The highest revision applied from the watch or a full read; the watch resumes after it.
    var revision: Int64 = 0
    /// The revision of each key's value this machine holds (its own write's, or the one applied).
    var seen: [String: Int64] = [:]
    /// A digest of each key's value as etcd holds it at `seen`, as far as this machine knows.
    var synced: [String: UInt64] = [:]
    /// Whether the journal loaded at start kept digests, so that keys changed while no journal
    /// recorded it can be found (``takeInChangesMadeWhileStopped()``).
    let journalKeptDigests: Bool
    /// Local changes not yet in etcd, with the sequence number of the latest.
    var queue: [LocalKey: UInt64] = [:]
    private var sequence: UInt64 = 0
    /// Whether the cluster answers and the watch is current, and what the checks found.
    let reachability: RoamingReachability
    /// Transactions that wrote (for `stats`, and the benchmark's count per burst).
    private(set) var transactions = 0
    /// Whether the next full read must happen before watching: no revision to resume from, or
    /// the one kept was compacted away.
    var needsFullRead: Bool

    /// Hands the link's sender a transaction to send while it waits; set by the link's first report.
    var wakeSender: (@Sendable (Batch) -> Void)?
    /// The sender waits for a wake: it was handed no batch since the queue was last found empty.
    var senderIdle = true

    var journalDirty = false
    var journalScheduled = false

    /// How many keys one transaction carries at most: etcd's default `--max-txn-ops`.
    static let keysPerTransaction = 128
    /// How many bytes of entries one transaction carries at most (one larger entry goes alone):
    /// below etcd's default request limit, `--max-request-bytes`, 1.5 MiB.
    static let bytesPerTransaction = 1 << 20
    /// After etcd refused a transaction of several keys, keys go one per transaction until one is
    /// taken, so that the key it refuses is found and the others still roam.
    var sendsOneAtATime = false
    /// How soon after a change the journal is written (with the domain files it describes).
    static let journalDelay = TimeAmount.milliseconds(100)

    init(
        eventLoop: EventLoop, configuration: RoamingConfiguration, files: DomainFiles, journalWriter: NIOThreadPool,
        writeBehind: WriteBehind, logger: Logger
    ) {
        self.eventLoop = eventLoop
        self.writeBehind = writeBehind
        self.hostName = configuration.hostName
        self.endpoints = configuration.endpoints
        self.keys = RoamingKeys(prefix: configuration.prefix)
        self.roamingDomains = Set(configuration.domains.filter { !$0.isCurrentHost })
        self.journal = RoamingJournal(files: files)
        self.journalWriter = journalWriter
        self.logger = logger
        self.reachability = RoamingReachability(endpoints: configuration.endpoints, eventLoop: eventLoop, logger: logger)
        let kept = journal.load(prefix: configuration.prefix)
        revision = kept.revision
        seen = kept.seen
        synced = kept.synced ?? [:]
        journalKeptDigests = kept.synced != nil
        for local in kept.queue {
            sequence += 1
            queue[local] = sequence
        }
        needsFullRead = kept.revision == 0
    }

    var queueLength: Int { queue.count }
    var domains: [DomainName] { roamingDomains.sorted() }

    func roams(_ domain: DomainName) -> Bool { roamingDomains.contains(domain) }

    /// Applies a reloaded `roaming.domains`; returns the domains that start roaming, which the
    /// link reads from etcd.
    func reconfigure(domains: [DomainName]) -> [DomainName] {
        eventLoop.preconditionInEventLoop()
        let updated = Set(domains.filter { !$0.isCurrentHost })
        let added = updated.subtracting(roamingDomains)
        roamingDomains = updated
        stopped = [:]
        queue = queue.filter { updated.contains($0.key.domain) }
        return added.sorted()
    }

    // MARK: - Local changes

    /// Queues the effective changes of a roaming domain made on this machine (any source but
    /// roaming itself). Called by the store as it applies them.
    func recordLocal(_ changes: Changeset, in store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        var keys: [String] = []
        changes.forEachChange { key, _ in keys.append(key) }
        enqueue(keys, of: changes.domain, in: store)
    }

    /// Queues keys of a domain to be sent (their values are read when the transaction is built),
    /// and hands the sender its transaction if it waits.
    func enqueue(_ keys: [String], of domain: DomainName, in store: DefaultsStore) {
        for key in keys {
            sequence += 1
            queue[LocalKey(domain: domain, key: key)] = sequence
        }
        markJournal()
        wakeSenderIfIdle(store)
    }

    /// Hands a waiting sender the next transaction, built here, on the loop: the link then goes
    /// straight to the cluster.
    func wakeSenderIfIdle(_ store: DefaultsStore) {
        guard senderIdle, let wakeSender, let batch = nextBatch(from: store) else { return }
        wakeSender(batch)
    }

    /// The next transaction's changes, or nil when the queue is empty (the sender then waits
    /// for a wake).
    func nextBatch(from store: DefaultsStore) -> Batch? {
        eventLoop.preconditionInEventLoop()
        guard !queue.isEmpty else {
            senderIdle = true
            return nil
        }
        senderIdle = false
        var items: [Batch.Item] = []
        var bytes = 0
        for (local, sequence) in queue.prefix(sendsOneAtATime ? 1 : RoamingState.keysPerTransaction) {
            let values = try? store.values(of: local.domain)
            let etcdKey = keys.etcdKey(domain: local.domain, key: local.key)
            let value = values?[local.key]
            let entry = RoamingKeys.encode(.init(value: value, host: hostName))
            bytes += etcdKey.utf8.count + entry.utf8.count
            if !items.isEmpty && bytes > RoamingState.bytesPerTransaction { break }
            items.append(Batch.Item(
                local: local, etcdKey: etcdKey, sequence: sequence, expectedRevision: seen[etcdKey] ?? 0,
                entry: entry, digest: RoamingKeys.digest(value)))
        }
        return Batch(items: items)
    }

    /// Takes in a transaction's outcome. On success the keys are at its revision; on failure,
    /// each key whose guard failed holds a newer write: another machine's wins and replaces the
    /// local value (one changeset per domain), a lost answer about our own keeps it queued.
    func finish(_ batch: Batch, _ result: EtcdTransactionResult, in store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        if result.succeeded {
            transactions += 1
            for item in batch.items {
                seen[item.etcdKey] = max(seen[item.etcdKey] ?? 0, result.revision)
                synced[item.etcdKey] = item.digest
                if queue[item.local] == item.sequence { queue[item.local] = nil }
            }
        } else {
            var remote = RemoteChanges()
            for (item, current) in zip(batch.items, result.reads) {
                let found = current?.modRevision ?? 0
                guard found != item.expectedRevision else { continue }
                guard let current, let entry = RoamingKeys.decode(current.value), entry.host != hostName else {
                    seen[item.etcdKey] = found
                    if current?.value == item.entry {
                        // Our own write of this very value, whose answer was lost: it is there.
                        synced[item.etcdKey] = item.digest
                        if queue[item.local] == item.sequence { queue[item.local] = nil }
                    }
                    // Otherwise a key removed outside defaultsd, or an older write of ours:
                    // still queued, now guarded by what is there.
                    continue
                }
                seen[item.etcdKey] = found
                synced[item.etcdKey] = RoamingKeys.digest(entry.value)
                queue[item.local] = nil
                remote.add(item.local, entry, revision: found)
            }
            apply(remote, to: store)
        }
        markJournal()
    }
}
