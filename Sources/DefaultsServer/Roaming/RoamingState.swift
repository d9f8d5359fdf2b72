import DefaultsCore
import EtcdWire
import EtcdGateway
import FoundationEssentials
import Logging
import NIOCore
import NIOPosix

/// What this machine knows of the roaming domains' keys in etcd: the last revision applied, the
/// revision of each key it holds, and the local changes not yet in etcd (the queue).
///
/// Owned by the store (`DefaultsStore.roaming`), on the state-owning event loop: the store
/// records local changes here as it applies them, and the ``RoamingLink``, on its own thread,
/// reaches this type only by submitting to that loop. It keeps no reference to the store: each
/// method that reads or changes the store is handed it by its caller, so nothing points back at
/// the owner. Every method checks the loop.
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
    private let journal: RoamingJournal
    private let journalWriter: NIOThreadPool
    private let logger: Logger
    private var roamingDomains: Set<DomainName>
    /// Domains configured to roam that stopped, with the reason: a remote change would have
    /// made one larger than this machine's limit. A reload that still names one tries again.
    private(set) var stopped: [DomainName: String] = [:]

    /// The highest revision applied from the watch or a full read; the watch resumes after it.
    private(set) var revision: Int64 = 0
    /// The revision of each key's value this machine holds (its own write's, or the one applied).
    private var seen: [String: Int64] = [:]
    /// A digest of each key's value as etcd holds it at `seen`, as far as this machine knows.
    private var synced: [String: UInt64] = [:]
    /// Whether the journal loaded at start kept digests, so that keys changed while no journal
    /// recorded it can be found (``takeInChangesMadeWhileStopped()``).
    private let journalKeptDigests: Bool
    /// Local changes not yet in etcd, with the sequence number of the latest.
    private var queue: [LocalKey: UInt64] = [:]
    private var sequence: UInt64 = 0
    /// Whether the cluster answers and the watch is current, and what the checks found.
    let reachability: RoamingReachability
    /// Transactions that wrote (for `stats`, and the benchmark's count per burst).
    private(set) var transactions = 0
    /// Whether the next full read must happen before watching: no revision to resume from, or
    /// the one kept was compacted away.
    private(set) var needsFullRead: Bool

    /// Tells the link's sender there is something to send; set by the link.
    var wakeSender: (@Sendable () -> Void)?
    /// The sender waits for a wake (it found the queue empty).
    var senderIdle = true

    private var journalDirty = false
    private var journalScheduled = false

    /// How many keys one transaction carries at most: etcd's default `--max-txn-ops`.
    static let keysPerTransaction = 128
    /// How soon after a change the journal is written (with the domain files it describes).
    static let journalDelay = TimeAmount.milliseconds(100)

    init(
        eventLoop: EventLoop, configuration: RoamingConfiguration, files: DomainFiles, journalWriter: NIOThreadPool,
        logger: Logger
    ) {
        self.eventLoop = eventLoop
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
    /// and wakes the sender if it waits.
    private func enqueue(_ keys: [String], of domain: DomainName, in store: DefaultsStore) {
        for key in keys {
            sequence += 1
            queue[LocalKey(domain: domain, key: key)] = sequence
        }
        markJournal(store)
        if senderIdle {
            senderIdle = false
            wakeSender?()
        }
    }

    /// The next transaction's changes, or nil when the queue is empty (the sender then waits
    /// for a wake).
    func nextBatch(from store: DefaultsStore) -> Batch? {
        eventLoop.preconditionInEventLoop()
        guard !queue.isEmpty else {
            senderIdle = true
            return nil
        }
        var items: [Batch.Item] = []
        for (local, sequence) in queue.prefix(RoamingState.keysPerTransaction) {
            let values = try? store.values(of: local.domain)
            let etcdKey = keys.etcdKey(domain: local.domain, key: local.key)
            let value = values?[local.key]
            items.append(Batch.Item(
                local: local, etcdKey: etcdKey, sequence: sequence, expectedRevision: seen[etcdKey] ?? 0,
                entry: RoamingKeys.encode(.init(value: value, host: hostName)), digest: RoamingKeys.digest(value)))
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
        markJournal(store)
    }

    // MARK: - Remote changes

    /// Applies a watch message: each revision's changes, one changeset per domain, announced
    /// with the writing machine's host name. Our own writes and what this machine already has
    /// are skipped.
    func apply(_ message: EtcdWatchMessage, to store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        var remote = RemoteChanges()
        var currentRevision: Int64 = 0
        for event in message.events {
            let revisionOfEvent = event.keyValue.modRevision
            if revisionOfEvent != currentRevision {
                apply(remote, to: store)
                remote = RemoteChanges()
                currentRevision = revisionOfEvent
            }
            revision = max(revision, revisionOfEvent)
            let etcdKey = event.keyValue.key
            guard let local = keys.locate(etcdKey), roams(local.domain) else { continue }
            let entry: RoamingKeys.Entry
            if event.kind == .delete {
                entry = RoamingKeys.Entry(value: nil, host: "")  // removed outside defaultsd
            } else if let decoded = RoamingKeys.decode(event.keyValue.value) {
                entry = decoded
            } else {
                logger.warning("ignoring an etcd value that is not a defaultsd entry", metadata: ["key": "\(etcdKey)"])
                continue
            }
            if entry.host == hostName {
                // Our own write coming back: etcd holds what this machine sent.
                if (seen[etcdKey] ?? 0) < revisionOfEvent { synced[etcdKey] = RoamingKeys.digest(entry.value) }
                seen[etcdKey] = max(seen[etcdKey] ?? 0, revisionOfEvent)
                continue
            }
            guard (seen[etcdKey] ?? 0) < revisionOfEvent else { continue }
            seen[etcdKey] = revisionOfEvent
            synced[etcdKey] = RoamingKeys.digest(entry.value)
            queue[LocalKey(domain: local.domain, key: local.key)] = nil
            remote.add(LocalKey(domain: local.domain, key: local.key), entry, revision: revisionOfEvent)
        }
        apply(remote, to: store)
        markJournal(store)
    }

    /// Makes the given domains equal to what etcd holds (`range`), as one changeset per domain:
    /// after a compaction, at the first start, and for a domain that starts roaming. Keys only
    /// this machine has are queued to be sent; keys with a queued change are left to the guarded
    /// transaction. A full read (every roaming domain) also moves the watch to its revision.
    func resynchronize(_ range: EtcdRange, domains: [DomainName]? = nil, in store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        let chosen = Set(domains ?? Array(roamingDomains)).intersection(roamingDomains)
        var inEtcd: [DomainName: [String: (entry: RoamingKeys.Entry, revision: Int64)]] = [:]
        for pair in range.keyValues {
            guard let local = keys.locate(pair.key), chosen.contains(local.domain),
                let entry = RoamingKeys.decode(pair.value)
            else { continue }
            inEtcd[local.domain, default: [:]][local.key] = (entry, pair.modRevision)
        }
        for domain in chosen.sorted() {
            let values = (try? store.values(of: domain)) ?? [:]
            let remoteKeys = inEtcd[domain] ?? [:]
            var remote = RemoteChanges()
            for (key, found) in remoteKeys {
                let local = LocalKey(domain: domain, key: key)
                if queue[local] != nil { continue }
                seen[keys.etcdKey(domain: domain, key: key)] = found.revision
                synced[keys.etcdKey(domain: domain, key: key)] = RoamingKeys.digest(found.entry.value)
                if values[key] != found.entry.value { remote.add(local, found.entry, revision: found.revision) }
            }
            apply(remote, to: store)
            let onlyHere = values.keys.filter { remoteKeys[$0] == nil && queue[LocalKey(domain: domain, key: $0)] == nil }
            if !onlyHere.isEmpty { enqueue(onlyHere, of: domain, in: store) }
        }
        if domains == nil {
            revision = max(revision, range.revision)
            needsFullRead = false
        }
        markJournal(store)
    }

    /// Queues the keys of roaming domains whose value differs from the one this machine last
    /// exchanged with etcd: changes that reached a domain file while no journal recorded them,
    /// because the daemon was killed between the two, or because the file was edited while the
    /// daemon was stopped. Called once at start, before the sender runs; each is then sent,
    /// guarded like any local change, so a newer write from another machine still wins.
    func takeInChangesMadeWhileStopped(in store: DefaultsStore) {
        eventLoop.preconditionInEventLoop()
        guard journalKeptDigests else { return }
        var found = 0
        for domain in roamingDomains.sorted() {
            let values = (try? store.values(of: domain)) ?? [:]
            let domainPrefix = keys.domainPrefix(domain)
            var candidates = Set(values.keys)
            for etcdKey in synced.keys where etcdKey.hasPrefix(domainPrefix) {
                if let local = keys.locate(etcdKey), local.domain == domain { candidates.insert(local.key) }
            }
            let changed = candidates.filter { key in
                let local = LocalKey(domain: domain, key: key)
                guard queue[local] == nil else { return false }
                let known = synced[keys.etcdKey(domain: domain, key: key)]
                return known.map { $0 != RoamingKeys.digest(values[key]) } ?? (values[key] != nil)
            }
            guard !changed.isEmpty else { continue }
            found += changed.count
            enqueue(changed.sorted(), of: domain, in: store)
        }
        if found > 0 {
            logger.notice("sending changes that reached the domain files while no journal recorded them", metadata: ["keys": "\(found)"])
        }
    }

    /// The next watch start reads everything first: the revision to resume from was compacted
    /// away.
    func readEverythingBeforeWatching() {
        eventLoop.preconditionInEventLoop()
        needsFullRead = true
    }

    /// Changes of other machines gathered for one revision (or one full read).
    private struct RemoteChanges {
        var byDomain: [DomainName: (changes: Changeset, host: String, revision: Int64)] = [:]

        mutating func add(_ local: LocalKey, _ entry: RoamingKeys.Entry, revision: Int64) {
            var current = byDomain[local.domain] ?? (Changeset(domain: local.domain), entry.host, revision)
            if let value = entry.value { current.changes.set(local.key, to: value) } else { current.changes.remove(local.key) }
            if revision >= current.revision { (current.host, current.revision) = (entry.host, revision) }
            byDomain[local.domain] = current
        }
    }

    private func apply(_ remote: RemoteChanges, to store: DefaultsStore) {
        for (_, change) in remote.byDomain.sorted(by: { $0.key < $1.key }) {
            let domain = change.changes.domain
            guard roamingDomains.contains(domain) else { continue }
            do {
                try store.applyRoaming(change.changes, host: change.host.isEmpty ? nil : change.host)
            } catch where error.code == .tooLarge {
                roamingDomains.remove(domain)
                queue = queue.filter { $0.key.domain != domain }
                stopped[domain] = error.message
                logger.error("a domain stopped roaming: a change from another machine would pass this machine's size limit", metadata: [
                    "domain": "\(domain)", "host": "\(change.host)", "error": "\(error.message)"])
            } catch {
                logger.error("could not apply a roaming change", metadata: [
                    "domain": "\(change.changes.domain)", "error": "\(error.message)"])
            }
        }
    }

    // MARK: - Reachability

    /// Records whether the cluster answered (``RoamingReachability/reached(_:problem:queued:domains:revision:)``),
    /// with what this machine has queued and applied for the log.
    func reached(_ answered: Bool, problem: String? = nil) {
        reachability.reached(answered, problem: problem, queued: queue.count, domains: domains, revision: revision)
    }

    // MARK: - The journal

    /// Writes the journal soon, after the domain files it describes are durable: never a
    /// revision ahead of the values applied from it, nor a queue behind what it must send.
    private func markJournal(_ store: DefaultsStore) {
        journalDirty = true
        guard !journalScheduled else { return }
        journalScheduled = true
        eventLoop.assumeIsolated().scheduleTask(in: RoamingState.journalDelay) { [self] in writeJournal(store) }
    }

    private func writeJournal(_ store: DefaultsStore) {
        journalDirty = false
        let contents = journalContents
        let journal = self.journal
        store.synchronize().flatMap { [journalWriter, eventLoop] in
            journalWriter.runIfActive(eventLoop: eventLoop) { try journal.write(contents) }
        }.assumeIsolated().whenComplete { [self] result in
            if case .failure(let error) = result {
                logger.error("could not write the roaming journal", metadata: ["error": "\(error)"])
                journalDirty = true
            }
            journalScheduled = false
            if journalDirty { markJournal(store) }
        }
    }

    private var journalContents: RoamingJournal.Contents {
        RoamingJournal.Contents(prefix: keys.prefix, revision: revision, seen: seen, synced: synced, queue: Array(queue.keys))
    }

    /// The last write of the journal, at stop, after the last flush of the domain files.
    func writeJournalNow() {
        eventLoop.preconditionInEventLoop()
        do { try journal.write(journalContents) } catch {
            logger.error("could not write the roaming journal", metadata: ["error": "\(error.message)"])
        }
    }
}
