import DefaultsCore
import Logging
import NIOCore
import NIOPosix

/// Turns changes held in memory into coalesced, durable file writes.
///
/// Owned by the store's event loop: every method runs there. The files are written on a
/// single writer thread from immutable snapshots (copy-on-write dictionaries), so the event
/// loop never waits for the disk and the writer never touches live state.
///
/// Timing: a dirty domain is written once it has been quiet for `coalesceDelay`, or at the
/// latest `maximumCoalesceDelay` after it first became dirty. A burst of any length is
/// therefore one write (two when it straddles the maximum delay). `synchronize` is a group
/// commit: every caller waiting when a flush starts is answered by that one flush. A flush
/// that follows another because callers are waiting starts ``groupCommitWindow`` later, so the
/// callers the last flush just answered, whose next `synchronize` is usually on its way, join it
/// instead of waiting for the one after (as PostgreSQL's `commit_delay`). A lone caller never
/// waits for the window: its flush starts at once.
///
/// Owned by the state-owning event loop: every method checks it, in release builds too. Time is
/// the loop's (`eventLoop.now`), so `EmbeddedEventLoop.advanceTime` drives it in tests.
final class WriteBehind {
    struct Snapshot: Sendable {
        var domains: [(DomainName, [String: PlistValue])]
        var generations: [DomainName: Int64]
        /// Write `generations` themselves as the ledger, not ceilings above them (a clean stop).
        var exactGenerations = false
        /// Domains whose write waited ``WriteBehind/longestDeferral`` for an edit on disk to be
        /// read: a file the daemon has not seen is kept aside as `.rejected-<time>`, not waited for.
        var keepUnseenAside: Set<DomainName> = []
        /// The versions of the domain files that memory holds, as the loop knows them now.
        var versions = KnownFileVersions()
        /// The ledger on disk, nil until this process has written it.
        var durableLedger: [DomainName: Int64]?
    }

    private let eventLoop: EventLoop
    private let source: SnapshotSource
    private let writer: DurableWriter
    private let logger: Logger
    var coalesceDelay: TimeAmount
    var maximumCoalesceDelay: TimeAmount

    private var dirty: Set<DomainName> = []
    private var writeSequence: UInt64 = 0
    private var durableSequence: UInt64 = 0
    private var firstDirtyAt: NIODeadline?
    private var lastWriteAt: NIODeadline
    private var timer: Scheduled<Void>?
    private var flushInFlight = false
    /// The next flush is due at the end of the group-commit window: callers join it meanwhile.
    private var gathering = false
    private(set) var retryDelay = WriteBehind.firstRetryDelay
    private var waiters: [(sequence: UInt64, promise: EventLoopPromise<Void>)] = []
    /// When each domain's write was first deferred for an edit on disk not yet read.
    private var deferredSince: [DomainName: NIODeadline] = [:]
    /// The domains of the flush in flight: until the writer answers, their files may hold its
    /// write, which the loop has not recorded yet.
    private(set) var domainsInFlight: Set<DomainName> = []
    /// What waits for the flush in flight to be answered and recorded.
    private var afterFlushActions: [() -> Void] = []

    /// The longest a domain's write waits for an edit on disk to be read. The file watcher judges
    /// every file within ``DomainFileWatcher/standardTornDelay``; past this bound the file is kept
    /// aside unread, so that no `synchronize`, and no stop, waits for a file nobody finishes.
    static let longestDeferral = TimeAmount.seconds(3)

    /// How long a flush that follows another waits for more callers to join it.
    static let groupCommitWindow = TimeAmount.microseconds(200)

    /// The wait before the first retry of a failed write; it doubles with each failure.
    static let firstRetryDelay = TimeAmount.milliseconds(100)
    /// How many writes of a domain may fail in a row before it is set aside: about 1.5 s of
    /// retries. A store that refuses this many writes (read-only, or full) is not retried by the
    /// clock any more, so a daemon never spins on a disk that will not change by itself.
    static let attemptsBeforeSettingAside = 5

    private(set) var flushCount = 0
    private(set) var fileWrites = 0
    private(set) var fileWritesByDomain: [DomainName: Int] = [:]
    /// The writes that failed in a row, per domain: each failure is logged when it starts, and
    /// its end once, not at every retry.
    private(set) var failedAttempts: [DomainName: Int] = [:]
    /// Domains whose writes failed ``attemptsBeforeSettingAside`` times. Their values stay in
    /// memory and are served; each is tried once more when it changes, at every `synchronize`
    /// (which fails while one stays unwritten) and at stop, never on a timer.
    private(set) var setAside: [DomainName: DefaultsError] = [:]
    var failing: Set<DomainName> { Set(failedAttempts.keys) }
    var dirtyCount: Int { dirty.count }

    init(
        eventLoop: EventLoop, source: SnapshotSource, writer: DurableWriter, coalesceDelay: TimeAmount,
        maximumCoalesceDelay: TimeAmount, logger: Logger
    ) {
        self.eventLoop = eventLoop
        self.source = source
        self.writer = writer
        self.logger = logger
        self.coalesceDelay = coalesceDelay
        self.maximumCoalesceDelay = maximumCoalesceDelay
        self.lastWriteAt = eventLoop.now
    }

    /// Records that a domain changed in memory.
    func markDirty(_ domain: DomainName) {
        eventLoop.preconditionInEventLoop()
        // Most writes find nothing set aside: they skip hashing the name for it.
        if !setAside.isEmpty { setAside[domain] = nil }
        dirty.insert(domain)
        writeSequence &+= 1
        let now = eventLoop.now
        lastWriteAt = now
        if firstDirtyAt == nil { firstDirtyAt = now }
        if !flushInFlight && timer == nil { arm(at: now + coalesceDelay) }
    }

    /// Succeeds once every change recorded before the call is durable on disk.
    func synchronize() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        if !setAside.isEmpty {
            dirty.formUnion(setAside.keys)
            setAside.removeAll()
            if firstDirtyAt == nil { firstDirtyAt = eventLoop.now }
            writeSequence &+= 1
        }
        if writeSequence == durableSequence { return eventLoop.makeSucceededVoidFuture() }
        let promise = eventLoop.makePromise(of: Void.self)
        waiters.append((writeSequence, promise))
        if !flushInFlight && !gathering { startFlush() }
        return promise.futureResult
    }

    /// Writes every change still in memory, then the exact generations as the ledger, so a
    /// clean restart continues every domain's generation where it stopped. Called once, at stop:
    /// the last write is a flush like any other, so none starts beside it.
    func finish() -> EventLoopFuture<Void> {
        eventLoop.preconditionInEventLoop()
        return synchronize().assumeIsolated().flatMap { [self] in
            timer?.cancel()
            timer = nil
            gathering = false
            flushInFlight = true
            var snapshot = source.snapshot(of: [])
            snapshot.exactGenerations = true
            return writer.write(snapshot).assumeIsolated().flatMapThrowing { [self] outcome in
                flushAnswered(outcome, of: snapshot)
                runAfterFlushActions()
                if let failure = outcome.failures.values.first { throw failure }
            }.nonisolated()
        }.nonisolated()
    }

    /// Runs `action` once the flush in flight, if any, is answered and recorded; at once when
    /// none is. A file event for a domain being written waits for it: the file may hold the
    /// daemon's own write, not yet known as its own.
    func afterFlush(_ action: @escaping () -> Void) {
        eventLoop.preconditionInEventLoop()
        guard flushInFlight else { return action() }
        afterFlushActions.append(action)
    }

    /// Records what the writer did and ends the flush.
    private func flushAnswered(_ outcome: FlushOutcome, of snapshot: Snapshot) {
        source.record(outcome, of: snapshot)
        flushInFlight = false
        domainsInFlight = []
    }

    /// Runs what waited for the flush just answered, before the next can start.
    private func runAfterFlushActions() {
        let actions = afterFlushActions
        afterFlushActions = []
        for action in actions { action() }
    }

    // MARK: - Timing

    private func arm(at deadline: NIODeadline) {
        timer?.cancel()
        timer = eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [self] in
            timer = nil
            timerFired()
        }
    }

    /// Rather than re-arming the timer on every write, the timer checks on firing whether
    /// the domain has been quiet long enough, and re-arms itself if not.
    private func timerFired() {
        if gathering {
            gathering = false
            return startFlush()
        }
        guard !dirty.isEmpty, !flushInFlight else { return }
        let now = eventLoop.now
        let quietAt = lastWriteAt + coalesceDelay
        let latest = (firstDirtyAt ?? now) + maximumCoalesceDelay
        if quietAt > now && latest > now {
            arm(at: min(quietAt, latest))
        } else {
            startFlush()
        }
    }

    // MARK: - Flushing

    private func startFlush() {
        gathering = false
        guard !dirty.isEmpty else {
            durableSequence = writeSequence
            answerWaiters()
            return
        }
        timer?.cancel()
        timer = nil
        flushInFlight = true
        let sequence = writeSequence
        var snapshot = source.snapshot(of: dirty)
        // Almost every flush defers nothing: it skips the look.
        if !deferredSince.isEmpty {
            let now = eventLoop.now
            snapshot.keepUnseenAside = Set(deferredSince.lazy.filter { now - $0.value >= WriteBehind.longestDeferral }.map(\.key))
                .intersection(dirty)
        }
        if !snapshot.keepUnseenAside.isEmpty {
            logger.warning("a domain file edited outside the daemon could not be read in time; it is kept as <file>.rejected-<time> and the domain written", metadata: [
                "domains": "\(snapshot.keepUnseenAside.sorted().map(\.rawValue).joined(separator: ", "))"])
        }
        domainsInFlight = dirty
        dirty.removeAll()
        firstDirtyAt = nil
        flushCount += 1
        writer.write(snapshot).assumeIsolated().whenSuccess { [self] outcome in
            flushAnswered(outcome, of: snapshot)
            runAfterFlushActions()
            flushEnded(snapshot, upTo: sequence, outcome)
        }
    }

    /// Counts what a flush wrote, keeps dirty what it did not, answers the callers it made
    /// durable, and schedules the next.
    private func flushEnded(_ snapshot: Snapshot, upTo sequence: UInt64, _ outcome: FlushOutcome) {
        let failures = outcome.failures
        let unwritten = Set(failures.keys).union(outcome.deferred)
        for (domain, _) in snapshot.domains where !unwritten.contains(domain) {
            fileWrites += 1
            fileWritesByDomain[domain, default: 0] += 1
            if failedAttempts.removeValue(forKey: domain) != nil {
                logger.notice("domain written again after failed writes", metadata: ["domain": "\(domain)"])
            }
        }
        dirty.formUnion(outcome.deferred)
        for domain in outcome.deferred where deferredSince[domain] == nil { deferredSince[domain] = eventLoop.now }
        for (domain, _) in snapshot.domains where !outcome.deferred.contains(domain) { deferredSince[domain] = nil }
        var retrying = false
        for (domain, error) in failures {
            let attempts = failedAttempts[domain, default: 0] + 1
            failedAttempts[domain] = attempts
            if attempts == 1 {
                logger.error("could not write domain; retrying with a growing delay, logged again only once it is written", metadata: [
                    "domain": "\(domain)", "error": "\(error.message)"])
            }
            if attempts >= WriteBehind.attemptsBeforeSettingAside {
                if attempts == WriteBehind.attemptsBeforeSettingAside {
                    logger.error("domain set aside after failed writes: its values stay in memory, and it is written again only when it changes, at synchronize or at stop", metadata: [
                        "domain": "\(domain)", "attempts": "\(attempts)", "error": "\(error.message)"])
                }
                setAside[domain] = error
            } else {
                dirty.insert(domain)
                retrying = true
            }
        }
        if !dirty.isEmpty, firstDirtyAt == nil { firstDirtyAt = eventLoop.now }
        if !failures.isEmpty {
            if let (_, failure) = failures.first { failWaiters(upTo: sequence, DefaultsError(.ioError, failure.message)) }
            if retrying {
                arm(at: eventLoop.now + retryDelay)
                retryDelay = retryDelay * 2
            } else {
                retryDelay = WriteBehind.firstRetryDelay
                // Whatever else changed meanwhile is written on its usual schedule; callers
                // who came during this flush are answered (with the failure) now.
                if !dirty.isEmpty {
                    arm(at: max(lastWriteAt + coalesceDelay, eventLoop.now))
                } else if !waiters.isEmpty {
                    startFlush()
                }
            }
            return
        }
        retryDelay = WriteBehind.firstRetryDelay
        if !outcome.deferred.isEmpty {
            // Written at the next flush, once the edit on disk has been read; whoever waits
            // for this flush waits for that one.
            logger.debug("domain file edited outside the daemon; writing after reading it", metadata: [
                "domains": "\(outcome.deferred.sorted().map(\.rawValue).joined(separator: ", "))"])
            arm(at: eventLoop.now + coalesceDelay)
            return
        }
        durableSequence = max(durableSequence, sequence)
        answerWaiters()
        if !dirty.isEmpty {
            if !waiters.isEmpty {
                gathering = true
                arm(at: eventLoop.now + WriteBehind.groupCommitWindow)
            } else {
                arm(at: max(lastWriteAt + coalesceDelay, eventLoop.now))
            }
        }
    }

    /// Answers the callers whose changes are all written: with success, or, while a domain is set
    /// aside, with its failure, since what they asked to be durable is not.
    private func answerWaiters() {
        if let (domain, error) = setAside.first {
            return failWaiters(upTo: durableSequence, DefaultsError(.ioError, "\(domain) cannot be written: \(error.message)"))
        }
        var remaining: [(sequence: UInt64, promise: EventLoopPromise<Void>)] = []
        for waiter in waiters {
            if waiter.sequence <= durableSequence { waiter.promise.succeed() } else { remaining.append(waiter) }
        }
        waiters = remaining
    }

    private func failWaiters(upTo sequence: UInt64, _ error: DefaultsError) {
        var remaining: [(sequence: UInt64, promise: EventLoopPromise<Void>)] = []
        for waiter in waiters {
            if waiter.sequence <= sequence { waiter.promise.fail(error) } else { remaining.append(waiter) }
        }
        waiters = remaining
    }
}
