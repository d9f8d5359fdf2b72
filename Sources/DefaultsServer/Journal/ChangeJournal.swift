import DefaultsCore
import FoundationEssentials
import Glibc
import GlibcExtras
import Logging
import NIOCore
import NIOPosix

/// The change journal: every change the store applies to a journaled domain, one entry per key,
/// with its time, old and new value and writer (docs/ADMINISTRATION.md, "The change journal").
///
/// Owned by the state-owning loop, like the store that records into it. Recording costs the loop
/// an append to a list. An entry is written only once its change is durable in the domain's
/// file: the write-behind reports each flush (``domainsWritten(_:)``), and the entries it covers
/// go to the journal thread ``handOverDelay`` later, one batch at a time, so the files grow in
/// the order changes were made, and a crash never leaves an entry for a change it lost (whose
/// generation, the entry's id, the next run would give again). Reads (`history`, `revert`) run
/// on the same thread, after the batch in flight, and add the entries not yet handed over, so
/// they see every change made before they were asked. A stop hands over at once and waits
/// (``finish()``). The loop never reads or writes a journal file.
final class ChangeJournal {
    let eventLoop: EventLoop
    private let files: JournalFiles
    private let thread: NIOThreadPool
    private let logger: Logger
    private(set) var configuration: JournalConfiguration
    /// Recorded, not yet handed to the journal thread, in the order they were recorded.
    /// Unchecked for overlapping access at run time, a check that costs each change a tenth of
    /// what recording it does: every access is on the loop, and none overlaps another (none
    /// calls out of the journal).
    @exclusivity(unchecked) private var recorded = RecordedChanges()
    /// Each domain's generation durable on disk, as the write-behind reported it: the entries up
    /// to it may be written.
    private var durable: [DomainName: Int64] = [:]
    /// The batch being written, and whether another is due when it is done.
    private var inFlight: EventLoopFuture<Void>?
    /// The trimming of the allocator's free memory, waiting for the journal to be quiet.
    private var trim: Scheduled<Void>?
    private var writeAgain = false
    /// The next hand-over of durable entries to the journal thread, once one is due.
    private var handOver: Scheduled<Void>?
    /// Callers of ``finish()`` waiting for the next batch to start and be written.
    private var waitingForNextBatch: [EventLoopPromise<Void>] = []
    /// What the journal thread reported of each file: unknown (nil) until its first batch of
    /// this run, which compacts the file and so learns it.
    private var fileSizes: [DomainName: JournalFileSize] = [:]
    /// Domains whose journal could not be written, logged once each until a write succeeds.
    private var failing: Set<DomainName> = []

    init(
        eventLoop: EventLoop, stateDirectory: String, thread: NIOThreadPool, configuration: JournalConfiguration,
        logger: Logger
    ) {
        self.eventLoop = eventLoop
        self.files = JournalFiles(stateDirectory: stateDirectory)
        self.thread = thread
        self.configuration = configuration
        self.logger = logger
    }

    /// Applies a new configuration (on reload): bounds, exclusions, on or off.
    func reconfigure(_ configuration: JournalConfiguration) {
        eventLoop.preconditionInEventLoop()
        self.configuration = configuration
    }

    func records(_ domain: DomainName) -> Bool { configuration.records(domain) }

    /// The Settings bundles hold these keys secret from now on (``InstalledBundles/didChangeSecureKeys``):
    /// their changes are recorded without values.
    func secureKeysChanged(_ keys: SecureKeys) {
        eventLoop.preconditionInEventLoop()
        recorded.replaceSecureKeys(keys)
    }

    // MARK: - Recording

    /// What the changed keys held before a change, read before it is applied: one key's value
    /// without a dictionary, as a single `set` changes one key.
    enum Before {
        case one(PlistValue?)
        case many([String: PlistValue])

        subscript(key: String) -> PlistValue? {
            switch self {
            case .one(let value): value
            case .many(let values): values[key]
            }
        }
    }

    /// Records the changes `effective` made to its domain, with what the keys held `before`.
    /// `domain` is the changeset's domain as the store holds it (``DomainTable/domain(at:)``).
    func record(_ effective: Changeset, before: consuming Before, in domain: DomainName, generation: Int64, origin: Origin) {
        eventLoop.preconditionInEventLoop()
        recorded.record(
            effective, before: before, in: domain, generation: generation, time: Self.now(), origin: origin,
            bounds: configuration.bounds)
    }

    /// About what an entry takes in its file: its values' encoded sizes (a string's and data's
    /// by their length, not a scan), and 256 bytes for the rest.
    static func approximateBytes(key: String, change: JournalEntry.Change) -> Int {
        guard case .values(let old, let new) = change else { return 256 }
        return approximateBytes(key: key, old: old, new: new)
    }

    /// ``approximateBytes(key:change:)`` of an entry with these values.
    @inline(__always) static func approximateBytes(key: String, old: PlistValue?, new: PlistValue?) -> Int {
        @inline(__always) func size(_ value: PlistValue?) -> Int {
            switch value {
            case nil: 0
            case .string(let text)?: text.utf8.count + 2
            case .data(let data)?: data.count / 3 * 4 + 16
            case .array?, .dictionary?: WireValue.encodedSize(of: value!)
            default: 32
            }
        }
        return 256 + key.utf8.count + size(old) + size(new)
    }

    /// The time of a change, to the millisecond and never later than the change (a revert to
    /// "now" undoes nothing), from the kernel's coarse clock: read at every change, and a
    /// precise one costs more than the rest of recording in a virtual machine. Its tick (1 to
    /// 4 ms) is finer than a person reads a time.
    static func now() -> Date {
        var clock = timespec()
        clock_gettime(CLOCK_REALTIME_COARSE, &clock)
        return Date(timeIntervalSince1970: Double(clock.tv_sec) + Double(clock.tv_nsec / 1_000_000) / 1000)
    }

    /// How long entries whose changes are durable wait for the journal thread. Under steady
    /// changes the write-behind flushes every few milliseconds; handing each flush's entries over
    /// would wake the journal thread as often, and on a machine of few CPUs each wake-up takes a
    /// CPU from the loop or its clients. One batch a second costs the same encoding, done at
    /// once. `history` adds the entries still waiting, so readers never see the delay; a
    /// kill -9 may lose the last second of entries, never a change (docs/ADMINISTRATION.md).
    static let handOverDelay: TimeAmount = .seconds(1)

    /// The write-behind made these domains durable at these generations: their entries up to
    /// them go to the journal thread at the next hand-over.
    func domainsWritten(_ generations: [DomainName: Int64]) {
        eventLoop.preconditionInEventLoop()
        for (domain, generation) in generations where recorded.has(domain) {
            durable[domain] = max(durable[domain] ?? 0, generation)
        }
        guard handOver == nil, !durable.isEmpty else { return }
        handOver = eventLoop.assumeIsolated().scheduleTask(in: Self.handOverDelay) { [self] in
            handOver = nil
            writeNow()
        }
    }

    /// Succeeds once every entry whose change was durable when asked is in its file: at stop,
    /// after the last flush. An entry whose change never reached the disk is not written.
    func finish() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        let written = eventLoop.makePromise(of: Void.self)
        waitingForNextBatch.append(written)
        writeNow()
        return written.futureResult
    }

    /// Hands every entry whose change is durable to the journal thread, unless a batch is being
    /// written: then its completion does.
    private func writeNow() {
        guard inFlight == nil else {
            writeAgain = true
            return
        }
        let waiting = waitingForNextBatch
        waitingForNextBatch = []
        var entries: [DomainName: PendingEntries] = [:]
        for (domain, generation) in durable {
            entries[domain] = recorded.take(domain, upTo: generation)
        }
        durable = durable.filter { recorded.has($0.key) }
        guard !entries.isEmpty else {
            for promise in waiting { promise.succeed() }
            return
        }
        let batch = JournalBatch(
            entries: entries, sizes: entries.keys.reduce(into: [:]) { $0[$1] = fileSizes[$1] }, bounds: configuration.bounds,
            now: Date())
        let files = self.files
        let written = thread.runIfActive(eventLoop: eventLoop) { batch.write(to: files) }.assumeIsolated().map { [self] outcome in
            for (domain, size) in outcome.sizes { fileSizes[domain] = size }
            if outcome.leftMemoryFree { trimWhenQuiet() }
            for (domain, error) in outcome.failures where failing.insert(domain).inserted {
                logger.error("the change journal could not be written; these changes are not recorded", metadata: [
                    "domain": "\(domain)", "error": "\(error.message)"])
            }
            failing.subtract(outcome.sizes.keys)
        }.recover { [self] error in
            logger.error("the change journal could not be written", metadata: ["error": "\(error)"])
        }.always { [self] _ in
            inFlight = nil
            for promise in waiting { promise.succeed() }
            if writeAgain {
                writeAgain = false
                writeNow()
            }
        }
        inFlight = written.nonisolated()
    }

    /// Gives the allocator's free memory back once the journal has been quiet for
    /// ``JournalMemory/quietDelay``: each new call starts the wait again.
    private func trimWhenQuiet() {
        trim?.cancel()
        let thread = self.thread
        trim = eventLoop.assumeIsolated().scheduleTask(in: JournalMemory.quietDelay) { [self] in
            trim = nil
            guard inFlight == nil else { return trimWhenQuiet() }
            thread.submit { _ in JournalMemory.giveBack() }
        }
    }

    // MARK: - Reading

    /// The newest `query.limit` entries that match, oldest first: each domain's file, read on
    /// the journal thread after the batch in flight, then the entries not handed over yet. They
    /// are given to `answer` on that thread (an answer of thousands of entries is encoded there,
    /// not on the loop). `no_journal` for a domain the journal does not keep.
    func history<Answer: Sendable>(
        _ query: HistoryQuery, answer: @escaping @Sendable ([JournalEntry]) throws -> Answer
    ) -> EventLoopFuture<Answer> {
        eventLoop.preconditionInEventLoop()
        if let domain = query.domain, !records(domain) {
            return eventLoop.makeFailedFuture(Self.notKept(domain))
        }
        guard configuration.isEnabled else { return eventLoop.makeFailedFuture(Self.notKept(nil)) }
        let files = self.files
        let bounds = configuration.bounds
        let excluded = configuration.excludedDomains
        let unwritten = recorded.waiting(in: query.domain)
        // A read holds files' worth of entries for a moment.
        trimWhenQuiet()
        return thread.runIfActive(eventLoop: eventLoop) {
            let domains = Set(query.domain.map { [$0] } ?? files.journaledDomains() + Array(unwritten.keys))
                .filter { !excluded.contains($0.anyHost) }.sorted()
            let oldest = Date().addingTimeInterval(-bounds.maximumAge)
            var found: [JournalEntry] = []
            for domain in domains {
                // What a compaction would keep, of which what the query asks.
                let kept = (files.entries(of: domain, maximumBytes: bounds.maximumBytes) + (unwritten[domain]?.entries(of: domain) ?? []))
                    .filter { $0.time >= oldest }
                found += kept.suffix(bounds.maximumEntries).filter(query.matches)
            }
            if query.domain == nil {
                // By time; within one time, each domain's entries in their file's order.
                found = found.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
            }
            return try answer(Array(found.suffix(query.limit)))
        }
    }

    /// What undoing changes of `domain` back to `target` sets: each key the undone entries
    /// touched, to the value it held before the first of them.
    func revertPlan(of domain: DomainName, to target: RevertPlan.Target, key: String?) -> EventLoopFuture<RevertPlan> {
        history(HistoryQuery(domain: domain, key: key, limit: .max)) { entries in
            try RevertPlan(entries, to: target, domain: domain)
        }
    }

    static func notKept(_ domain: DomainName?) -> DefaultsError {
        guard let domain else { return DefaultsError(.noJournal, "the change journal is off (journal.enabled)") }
        return DefaultsError(.noJournal, "the change journal does not keep \(domain): it is off, or excludes the domain (journal.excludedDomains)")
    }
}

/// What the journal thread knows of a domain's file after writing to it.
struct JournalFileSize: Sendable, Hashable {
    var entries: Int
    var bytes: Int
}

/// One batch of entries for the journal thread, with what it needs to compact.
struct JournalBatch: Sendable {
    var entries: [DomainName: PendingEntries]
    var sizes: [DomainName: JournalFileSize?]
    var bounds: JournalBounds
    var now: Date

    struct Outcome: Sendable {
        var sizes: [DomainName: JournalFileSize] = [:]
        var failures: [DomainName: DefaultsError] = [:]
        /// Whether the batch was large enough, or compacted, to leave megabytes free.
        var leftMemoryFree = false
    }

    /// Appends each domain's entries; or, where they would take its file past the point of
    /// compaction, or the file was not compacted yet this run (which drops entries past the age
    /// bound and any torn line), writes the file again with them: the file never holds more
    /// than half as many entries or bytes again as the bounds keep.
    func write(to files: JournalFiles) -> Outcome {
        var outcome = Outcome()
        var compacted = false
        for (domain, pending) in entries {
            let entries = pending.entries(of: domain)
            do throws(DefaultsError) {
                // A domain with no file yet needs no compaction: its first file is written as it grows.
                if var size = sizes[domain].flatMap({ $0 }) ?? (files.exists(domain) ? nil : JournalFileSize(entries: 0, bytes: 0)),
                    size.entries + entries.count <= bounds.compactionEntries, size.bytes <= bounds.maximumBytes
                {
                    size.entries += entries.count
                    size.bytes = try files.append(entries, to: domain)
                    outcome.sizes[domain] = size
                } else {
                    outcome.sizes[domain] = try files.compact(domain, adding: entries, bounds: bounds, now: now)
                    compacted = true
                }
            } catch {
                outcome.failures[domain] = error
            }
        }
        outcome.leftMemoryFree = compacted || entries.values.reduce(0, { $0 + $1.count }) >= Self.entriesWorthTrimming
        return outcome
    }
}

extension JournalBatch {
    /// A batch this large, or a compaction, leaves megabytes free in the allocator.
    static let entriesWorthTrimming = 1000
}

/// The memory a batch or a read of the journal leaves free, given back to the kernel. Its
/// buffers are megabytes at a time (a burst's entries, a file's tail), and glibc keeps freed
/// memory in its arenas for the next allocation: without this, a daemon that once wrote a burst
/// stays that much larger. Trimming locks each arena in turn, the loop's too, so it runs once
/// the journal has been quiet for ``quietDelay``, never during a burst.
enum JournalMemory {
    static let quietDelay: TimeAmount = .seconds(1)

    static func giveBack() { _ = malloc_trim(0) }

    /// The size from which glibc gives a buffer a mapping of its own, returned to the kernel
    /// when it is freed: glibc's default, held fixed (``keepLargeBuffersMapped()``).
    static let mappedBufferBytes: Int32 = 128 << 10

    /// Holds glibc's mmap threshold at its default, once, as the daemon starts.
    /// Left to itself glibc raises the threshold to the size of each large mapped buffer freed
    /// (a journal batch's encoding takes megabytes), and from then on carves such buffers from
    /// the arena, whose top `malloc_trim` does not give back for a thread's arena: a daemon that
    /// had written one batch stayed 2 MiB larger for good. Buffers this large are few (a batch
    /// a second at most), so a mapping each costs nothing measurable.
    static func keepLargeBuffersMapped() { _ = mallopt(M_MMAP_THRESHOLD, mappedBufferBytes) }
}

/// What `history` asks for.
struct HistoryQuery: Sendable {
    var domain: DomainName?
    var key: String?
    var since: Date?
    var until: Date?
    /// A writer's name, process, executable, `hello` name or source (``Origin/isWriter(named:)``).
    var writer: String?
    var limit: Int

    static let defaultLimit = 1000
    static let maximumLimit = 10_000

    init(domain: DomainName?, key: String? = nil, since: Date? = nil, until: Date? = nil, writer: String? = nil, limit: Int) {
        self.domain = domain
        self.key = key
        self.since = since
        self.until = until
        self.writer = writer
        self.limit = limit
    }

    func matches(_ entry: JournalEntry) -> Bool {
        if let key, entry.key != key { return false }
        if let since, entry.time < since { return false }
        if let until, entry.time > until { return false }
        if let writer, !entry.origin.isWriter(named: writer) { return false }
        return true
    }
}

/// The changeset a `revert` applies, worked out from a domain's journal: each key the undone
/// entries touched, set to what it held before the first of them (nil: removed).
struct RevertPlan: Sendable, Equatable {
    enum Target: Sendable, Equatable {
        /// Undo this entry and every later one.
        case entry(Int64)
        /// Undo every change made after this time.
        case time(Date)
        /// Undo the latest change.
        case latest
    }

    /// The first entry undone; nil when there is nothing to undo.
    var from: Int64?
    var values: [String: PlistValue?]
    /// Secure keys among them, whose earlier values the journal never kept: left as they are.
    var skipped: [String]

    /// `entries`: the domain's journal (or one key's part of it), oldest first.
    init(_ entries: [JournalEntry], to target: Target, domain: DomainName) throws(DefaultsError) {
        let first: Int64?
        switch target {
        case .latest:
            guard let last = entries.last else {
                throw DefaultsError(.invalidParameter, "the change journal has no change of \(domain) to undo")
            }
            first = last.id
        case .entry(let id):
            guard entries.contains(where: { $0.id == id }) else {
                throw DefaultsError(.invalidParameter, "the change journal has no entry \(id) for \(domain)")
            }
            first = id
        case .time(let time):
            if let oldest = entries.first, oldest.time > time {
                throw DefaultsError(
                    .invalidParameter,
                    "the change journal of \(domain) goes back to \(RFC3339.format(oldest.time)); what the domain held before is not known")
            }
            first = entries.first { $0.time > time }?.id
        }
        self.from = first
        var values: [String: PlistValue?] = [:]
        var skipped: Set<String> = []
        if let first {
            for entry in entries where entry.id >= first && values[entry.key] == nil && !skipped.contains(entry.key) {
                switch entry.change {
                case .values(let old, _): values[entry.key] = .some(old)
                case .secure: skipped.insert(entry.key)
                }
            }
        }
        self.values = values
        self.skipped = skipped.sorted()
    }
}
