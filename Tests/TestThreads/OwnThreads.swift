import Glibc
import NIOPosix
import Testing

/// Runs each test case on threads of its own, never on Swift's shared concurrency pool.
///
/// That pool has one thread per core: two on the machines this project is tested on. A test that
/// blocks (waits for a process, reads a socket, sleeps) holds a pool thread for as long as it
/// blocks, and with two such tests at once every other test's awaits (a timer, an answer, an
/// HTTP body) wait behind them: a deadline of five seconds then fails a test that was answered
/// in milliseconds. Under this trait a test blocks only its own threads, so no test can starve
/// another, whatever it calls.
///
/// Every suite carries it (`OwnThreadsTests.everySuiteCarriesTheTrait` holds each file to that):
///
/// ```swift
/// @Suite(.ownThreads) struct StoreTests { … }
/// @Suite("Roaming under network faults", .ownThreads, .serialized) struct NetworkFaultTests { … }
/// ```
///
/// How many test cases run at once is bounded by ``TestSlots`` instead.
public struct OwnThreadsTrait: SuiteTrait, TestTrait, TestScoping {
    /// Two threads, as the shared pool has here: a test that blocks one of them while a child task
    /// of its own runs on the other behaves exactly as it would running alone.
    static let threadsPerTestCase = 2

    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await TestSlots.shared.withSlot {
            let threads = NIOThreadPool(numberOfThreads: Self.threadsPerTestCase)
            threads.start()
            let executor = ThreadPoolExecutor(threads)
            let outcome: Result<Void, any Error>
            do {
                try await withTaskExecutorPreference(executor) { try await function() }
                outcome = .success(())
            } catch {
                outcome = .failure(error)
            }
            try await threads.shutdownGracefully()
            try outcome.get()
        }
    }
}

extension Trait where Self == OwnThreadsTrait {
    /// Runs each test case of the suite or test on threads of its own; see ``OwnThreadsTrait``.
    public static var ownThreads: Self { OwnThreadsTrait() }
}

/// A task executor over a `NIOThreadPool`: jobs of the tasks that prefer it run on the pool's
/// threads, where blocking is allowed. Owned by one test case's scope, which shuts the pool down.
final class ThreadPoolExecutor: TaskExecutor {
    private let threads: NIOThreadPool

    init(_ threads: NIOThreadPool) {
        self.threads = threads
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        // A job is run whatever the pool's state: a pool already shut down runs it on the calling
        // thread, and a job never run would leave its task suspended for ever.
        threads.submit { _ in job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

/// How many test cases run at once, for the whole test process: each waits (without blocking a
/// thread) for a slot before it starts. Swift Testing would otherwise start every test at once,
/// each with its daemons and servers, on a machine of two cores.
///
/// `DEFAULTSD_TEST_SLOTS` sets the number; the default is 4.
public actor TestSlots {
    public static let shared = TestSlots(count: {
        if let text = getenv("DEFAULTSD_TEST_SLOTS"), let count = Int(String(cString: text)), count > 0 { return count }
        return 4
    }())

    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) {
        free = count
    }

    /// Runs `body` once a slot is free, and frees the slot when it ends.
    public nonisolated func withSlot<Result: Sendable>(_ body: () async throws -> Result) async throws -> Result {
        await take()
        do {
            let result = try await body()
            await give()
            return result
        } catch {
            await give()
            throw error
        }
    }

    private func take() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func give() {
        if waiting.isEmpty {
            free += 1
        } else {
            waiting.removeFirst().resume()
        }
    }
}
