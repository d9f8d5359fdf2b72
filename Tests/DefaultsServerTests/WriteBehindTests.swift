import DefaultsCore
@testable import DefaultsServer
import Foundation
import Logging
import NIOCore
import NIOEmbedded
import TestThreads
import Testing

/// WriteBehind's timing on an `EmbeddedEventLoop`, whose clock moves only when the test says:
/// the coalescing delay, the maximum delay, group commit and retries after a failed write.
@Suite(.ownThreads) struct WriteBehindTests {
    /// A writer whose writes complete when the test says, recording each snapshot and when it came.
    final class ControlledWriter: DurableWriter {
        let loop: EmbeddedEventLoop
        private(set) var writes: [(at: NIODeadline, domains: [DomainName])] = []
        private var pending: [EventLoopPromise<FlushOutcome>] = []
        /// Complete every write at once with success, unless told to fail.
        var completesAtOnce = true
        var failuresLeft = 0
        var deferralsLeft = 0
        /// Defer every write of `com.a` unless the snapshot keeps unseen versions aside: a file
        /// that never settles.
        var defersUntilKeptAside = false
        private(set) var keptAside: [Set<DomainName>] = []

        init(loop: EmbeddedEventLoop) { self.loop = loop }

        func write(_ snapshot: WriteBehind.Snapshot) -> EventLoopFuture<FlushOutcome> {
            writes.append((loop.now, snapshot.domains.map(\.0).sorted()))
            keptAside.append(snapshot.keepUnseenAside)
            let promise = loop.makePromise(of: FlushOutcome.self)
            if defersUntilKeptAside {
                let domain = try! DomainName("com.a")
                promise.succeed(FlushOutcome(deferred: snapshot.keepUnseenAside.contains(domain) ? [] : [domain]))
                return promise.futureResult
            }
            pending.append(promise)
            if completesAtOnce { completeAll() }
            return promise.futureResult
        }

        /// Completes the writes in flight: failed (`io_error`) while `failuresLeft` lasts, then
        /// deferred (an edit on disk not read yet) while `deferralsLeft` lasts.
        func completeAll() {
            let promises = pending
            pending = []
            for promise in promises {
                if failuresLeft > 0 {
                    failuresLeft -= 1
                    promise.succeed(FlushOutcome(failures: [try! DomainName("com.a"): DefaultsError(.ioError, "disk full")]))
                } else if deferralsLeft > 0 {
                    deferralsLeft -= 1
                    promise.succeed(FlushOutcome(deferred: [try! DomainName("com.a")]))
                } else {
                    promise.succeed(FlushOutcome())
                }
            }
        }
    }

    final class Table: SnapshotSource {
        private(set) var recorded: [FlushOutcome] = []

        func snapshot(of dirty: Set<DomainName>) -> WriteBehind.Snapshot {
            WriteBehind.Snapshot(domains: dirty.map { ($0, [:]) }, generations: [:])
        }

        func record(_ outcome: FlushOutcome, of snapshot: WriteBehind.Snapshot) { recorded.append(outcome) }
    }

    let a = try! DomainName("com.a")
    let b = try! DomainName("com.b")

    func make(coalesce: Int64 = 50, maximum: Int64 = 1000) -> (EmbeddedEventLoop, ControlledWriter, WriteBehind, Table) {
        let loop = EmbeddedEventLoop()
        let writer = ControlledWriter(loop: loop)
        let table = Table()
        let writeBehind = WriteBehind(
            eventLoop: loop, source: table, writer: writer, coalesceDelay: .milliseconds(coalesce),
            maximumCoalesceDelay: .milliseconds(maximum), logger: Logger(label: "test"))
        return (loop, writer, writeBehind, table)
    }

    func elapsed(_ writer: ControlledWriter, since start: NIODeadline) -> [Int64] {
        writer.writes.map { ($0.at - start).nanoseconds / 1_000_000 }
    }

    @Test func aDomainIsWrittenOnceItHasBeenQuietForTheCoalescingDelay() {
        let (loop, writer, writeBehind, _) = make()
        let start = loop.now
        writeBehind.markDirty(a)
        loop.advanceTime(by: .milliseconds(30))
        writeBehind.markDirty(a)
        writeBehind.markDirty(b)
        loop.advanceTime(by: .milliseconds(49))
        #expect(writer.writes.isEmpty, "quiet for 49 ms only")
        loop.advanceTime(by: .milliseconds(1))
        #expect(elapsed(writer, since: start) == [80])
        #expect(writer.writes.first?.domains == [a, b])
        #expect(writeBehind.dirtyCount == 0 && writeBehind.flushCount == 1 && writeBehind.fileWrites == 2)
        loop.advanceTime(by: .seconds(5))
        #expect(writer.writes.count == 1, "nothing more to write")
    }

    @Test func aDomainThatNeverGoesQuietIsWrittenAtTheMaximumDelay() {
        let (loop, writer, writeBehind, _) = make(coalesce: 50, maximum: 200)
        let start = loop.now
        for _ in 0..<12 {
            writeBehind.markDirty(a)
            loop.advanceTime(by: .milliseconds(40))
        }
        // Written at 200 ms though never quiet; the change made at 200 ms, just after that write,
        // starts the next period: written at 400 ms. The last change (440 ms) waits for quiet.
        #expect(elapsed(writer, since: start) == [200, 400])
        loop.advanceTime(by: .milliseconds(10))
        #expect(elapsed(writer, since: start) == [200, 400, 490])
    }

    /// A file event for a domain being written waits until the writer has answered and the
    /// loop has recorded what it wrote: its own write must not be read as someone else's.
    @Test func whatWaitsForAFlushRunsOnceItsOutcomeIsRecorded() {
        let (loop, writer, writeBehind, table) = make()
        writer.completesAtOnce = false
        var ran: [Int] = []
        writeBehind.afterFlush { ran.append(table.recorded.count) }
        #expect(ran == [0], "no flush in flight: at once")
        writeBehind.markDirty(a)
        _ = writeBehind.synchronize()
        #expect(writeBehind.domainsInFlight == [a])
        writeBehind.afterFlush { ran.append(table.recorded.count) }
        writeBehind.afterFlush { ran.append(table.recorded.count) }
        loop.run()
        #expect(ran == [0], "the flush is still in flight")
        writer.completeAll()
        loop.run()
        #expect(ran == [0, 1, 1], "each ran once, after the outcome was recorded")
        #expect(writeBehind.domainsInFlight.isEmpty)
    }

    @Test func synchronizeIsAGroupCommit() throws {
        let (loop, writer, writeBehind, _) = make()
        writer.completesAtOnce = false
        writeBehind.markDirty(a)
        let first = writeBehind.synchronize()
        writeBehind.markDirty(b)
        // b was marked while a's flush is in flight: it waits for a second flush.
        let second = writeBehind.synchronize()
        #expect(writer.writes.count == 1 && writer.writes[0].domains == [a])
        var answered: [String] = []
        first.assumeIsolated().whenSuccess { answered.append("first") }
        second.assumeIsolated().whenSuccess { answered.append("second") }
        writer.completeAll()
        loop.run()
        #expect(answered == ["first"])
        // The second waiter starts the next flush after the group-commit window, not the
        // coalescing delay; a caller that comes within the window joins that flush.
        #expect(writer.writes.count == 1)
        loop.advanceTime(by: WriteBehind.groupCommitWindow - .microseconds(1))
        writeBehind.markDirty(a)
        let joined = writeBehind.synchronize()
        #expect(writer.writes.count == 1)
        loop.advanceTime(by: .microseconds(1))
        #expect(writer.writes.count == 2 && Set(writer.writes[1].domains) == [a, b])
        joined.assumeIsolated().whenSuccess { answered.append("joined") }
        writer.completeAll()
        loop.run()
        #expect(answered == ["first", "second", "joined"])
        // Nothing dirty: answered at once.
        var third = false
        writeBehind.synchronize().assumeIsolated().whenSuccess { third = true }
        #expect(third && writer.writes.count == 2)
        // A lone caller's flush starts at once, with no window.
        // Several waiters on one flush: one write answers them all.
        writeBehind.markDirty(a)
        let waiters = (0..<3).map { _ in writeBehind.synchronize() }
        var done = 0
        for waiter in waiters { waiter.assumeIsolated().whenSuccess { done += 1 } }
        writer.completeAll()
        loop.run()
        #expect(done == 3 && writer.writes.count == 3)
    }

    @Test func aFailedWriteIsRetriedWithBackoffAndItsWaitersAreTold() throws {
        let (loop, writer, writeBehind, _) = make()
        writer.failuresLeft = 3
        let start = loop.now
        writeBehind.markDirty(a)
        var failure: DefaultsError?
        writeBehind.synchronize().assumeIsolated().whenFailure { failure = $0 as? DefaultsError }
        #expect(failure?.code == .ioError && failure?.message == "disk full")
        #expect(writeBehind.dirtyCount == 1, "still dirty after a failed write")
        // Retries after 100 ms, then 200, then 400, with no new change.
        loop.advanceTime(by: .milliseconds(99))
        #expect(writer.writes.count == 1)
        #expect(writeBehind.failing == [a], "the failure is known, and was logged once")
        loop.advanceTime(by: .milliseconds(1))
        #expect(writer.writes.count == 2)
        loop.advanceTime(by: .milliseconds(600))
        #expect(elapsed(writer, since: start) == [0, 100, 300, 700])
        #expect(writeBehind.dirtyCount == 0 && writeBehind.fileWrites == 1)
        #expect(writeBehind.failing.isEmpty, "written again")
        #expect(writeBehind.retryDelay == WriteBehind.firstRetryDelay, "the backoff starts again after a success")
        var synchronized = false
        writeBehind.synchronize().assumeIsolated().whenSuccess { synchronized = true }
        #expect(synchronized)
    }

    @Test func aDomainThatKeepsFailingIsSetAsideAndTriedAgainOnlyWhenAsked() throws {
        let (loop, writer, writeBehind, _) = make()
        writer.failuresLeft = 1_000
        let start = loop.now
        writeBehind.markDirty(a)
        loop.advanceTime(by: .seconds(60))
        #expect(elapsed(writer, since: start) == [50, 150, 350, 750, 1550], "five attempts, then no more on the clock")
        #expect(Array(writeBehind.setAside.keys) == [a] && writeBehind.dirtyCount == 0)

        // synchronize tries once more and tells the caller; the clock still does not retry.
        var failure: DefaultsError?
        writeBehind.synchronize().assumeIsolated().whenFailure { failure = $0 as? DefaultsError }
        #expect(writer.writes.count == 6 && failure?.code == .ioError)
        loop.advanceTime(by: .seconds(60))
        #expect(writer.writes.count == 6 && Array(writeBehind.setAside.keys) == [a])

        // Another domain is written on its usual schedule, but synchronize cannot promise a.
        writer.failuresLeft = 0
        writeBehind.markDirty(b)
        loop.advanceTime(by: .milliseconds(50))
        #expect(writer.writes.last?.domains == [b] && writeBehind.fileWritesByDomain[b] == 1)
        writer.failuresLeft = 1
        failure = nil
        writeBehind.synchronize().assumeIsolated().whenFailure { failure = $0 as? DefaultsError }
        #expect(writer.writes.last?.domains == [a] && failure?.code == .ioError)

        // A change to a is tried once; once it is written, all is well again.
        writeBehind.markDirty(a)
        loop.advanceTime(by: .milliseconds(50))
        #expect(writeBehind.setAside.isEmpty && writeBehind.failing.isEmpty && writeBehind.fileWritesByDomain[a] == 1)
        var synchronized = false
        writeBehind.synchronize().assumeIsolated().whenSuccess { synchronized = true }
        #expect(synchronized)
    }

    @Test func aCallerWaitingWhileADomainIsSetAsideIsAnsweredWithTheFailure() throws {
        let (loop, writer, writeBehind, _) = make()
        writer.failuresLeft = 1_000
        writer.completesAtOnce = false
        writeBehind.markDirty(a)
        loop.advanceTime(by: .milliseconds(50))
        for _ in 1..<WriteBehind.attemptsBeforeSettingAside {
            writer.completeAll()
            loop.advanceTime(by: .seconds(2))
        }
        // The last attempt is in flight; a caller arrives, then the attempt fails.
        var failure: DefaultsError?
        writeBehind.synchronize().assumeIsolated().whenFailure { failure = $0 as? DefaultsError }
        writer.completeAll()
        loop.run()
        #expect(writeBehind.setAside[a] != nil)
        #expect(failure?.code == .ioError, "answered at once, not left waiting")
    }

    @Test func aDomainDeferredForAnUnreadEditIsWrittenAtTheNextFlushAndItsWaitersWaitForIt() throws {
        let (loop, writer, writeBehind, _) = make()
        writer.deferralsLeft = 1
        let start = loop.now
        writeBehind.markDirty(a)
        var answered = false
        var failed = false
        let waiter = writeBehind.synchronize().assumeIsolated()
        waiter.whenSuccess { answered = true }
        waiter.whenFailure { _ in failed = true }
        #expect(writer.writes.count == 1)
        #expect(!answered && !failed, "a deferred domain is not durable yet, and no error")
        #expect(writeBehind.dirtyCount == 1 && writeBehind.fileWrites == 0)
        // Written again after the coalescing delay (50 ms), not after the retry backoff.
        loop.advanceTime(by: .milliseconds(49))
        #expect(writer.writes.count == 1)
        loop.advanceTime(by: .milliseconds(1))
        #expect(elapsed(writer, since: start) == [0, 50])
        #expect(answered && writeBehind.fileWrites == 1 && writeBehind.dirtyCount == 0)
    }

    /// A file that never settles holds a write no longer than `longestDeferral`: then the unseen
    /// version is kept aside, the domain written, and `synchronize` answered.
    @Test func aDeferralEndsAtTheLongestDeferral() {
        let (loop, writer, writeBehind, _) = make()
        writer.defersUntilKeptAside = true
        let start = loop.now
        writeBehind.markDirty(a)
        var answered = false
        writeBehind.synchronize().assumeIsolated().whenSuccess { answered = true }
        loop.advanceTime(by: WriteBehind.longestDeferral - .milliseconds(1))
        #expect(!answered)
        #expect(writer.keptAside.allSatisfy { $0.isEmpty }, "nothing is kept aside before the bound")
        loop.advanceTime(by: .milliseconds(60))
        #expect(answered)
        #expect(writer.keptAside.last == [a])
        #expect(writer.keptAside.filter { !$0.isEmpty }.count == 1)
        let last = (writer.writes.last!.at - start)
        #expect(last >= WriteBehind.longestDeferral && last < WriteBehind.longestDeferral + .milliseconds(60))
        #expect(writeBehind.fileWrites == 1 && writeBehind.dirtyCount == 0)
    }

    /// `completes(within:)`, the bounded wait of the daemon's start for its Settings bundles.
    @Test func aBoundedWaitAnswersAtItsLimitOrWithTheFuture() {
        let loop = EmbeddedEventLoop()
        let slow = loop.makePromise(of: Void.self)
        var slowAnswer: Bool?
        slow.futureResult.completes(within: .seconds(5)).assumeIsolated().whenSuccess { slowAnswer = $0 }
        loop.advanceTime(by: .milliseconds(4999))
        #expect(slowAnswer == nil)
        loop.advanceTime(by: .milliseconds(1))
        #expect(slowAnswer == false)
        slow.succeed()
        #expect(slowAnswer == false, "a late completion changes nothing")

        let quick = loop.makePromise(of: Void.self)
        var quickAnswer: Bool?
        quick.futureResult.completes(within: .seconds(5)).assumeIsolated().whenSuccess { quickAnswer = $0 }
        quick.succeed()
        loop.run()
        #expect(quickAnswer == true)
        loop.advanceTime(by: .seconds(10))
        #expect(quickAnswer == true)

        let failing = loop.makePromise(of: Void.self)
        var failed = false
        failing.futureResult.completes(within: .seconds(5)).assumeIsolated().whenFailure { _ in failed = true }
        failing.fail(DefaultsError(.ioError, "unreadable"))
        loop.run()
        #expect(failed)
    }
}
