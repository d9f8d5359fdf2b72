#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The CPU time the calling thread has used so far.
///
/// The work tests measure this rather than wall time: the other tests, which Swift Testing runs
/// in parallel in the same process, use other threads and neither add to it nor take from it,
/// and time spent waiting for a core does not count. The reading measured must therefore stay on
/// the calling thread: a synchronous test body, with no `await` in it.
public func threadCPUTime() -> Duration {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
}

/// How much more CPU time reading an input of size 8n takes than reading one of size n: what the
/// work tests (`ParserWorkTests`, `BundleWorkTests`, `DesktopEntryWorkTests`,
/// `GatewayJSONWorkTests`) hold every parser to.
///
/// Each input is read several times and the least time is kept: interruptions only ever add time,
/// so the minimum is the closest to the work itself. An input read too quickly for one reading to
/// be timed well is read many times in a row, the small one until a sample lasts
/// ``minimumSample``, the large one an eighth as many times.
///
/// ```swift
/// let growth = WorkGrowth.measure(n: 32 << 10, input: { WorkInput.filling($0, "[", "0,", "0]").bytes }) {
///     try? JSONParser.parse($0)
/// }
/// #expect(growth.ratio <= WorkGrowth.bound, "\(growth)")
/// ```
public struct WorkGrowth: Sendable, CustomStringConvertible {
    /// How many times larger the large input is than the small one.
    public static let factor = 8

    /// The most the ratio may reach. Linear work gives about 8 and quadratic work 64; the 2.5
    /// above 8 is for what a debug build on a shared two-core machine adds to the larger input
    /// besides its work: cache and TLB misses once it outgrows the caches, the allocator growing
    /// its heap and page faults on first touch, all of which land on the measured thread.
    public static let bound = Double(factor) * 2.5

    /// The shortest sample timed: long against the clock's cost and granularity, and against a
    /// timer interrupt.
    public static let minimumSample = Duration.milliseconds(5)

    /// Once this much CPU time is spent on one measurement, it stops after the trial under way: a
    /// reader that slow on 8n is far from linear, and more trials would not say so more clearly.
    public static let maximumSpent = Duration.seconds(20)

    /// One reading of the input of size n, and of the one of size 8n.
    public let small: Duration
    public let large: Duration
    /// How many times in a row the small input was read per sample.
    public let repetitions: Int

    /// `large / small`: about ``factor`` for linear work.
    public var ratio: Double { small > .zero ? large / small : .infinity }

    public var description: String {
        "n: \(Self.milliseconds(small)) ms, \(Self.factor)n: \(Self.milliseconds(large)) ms, ratio \(Self.rounded(ratio)) "
            + "(at most \(Self.rounded(Self.bound)); the small input read \(repetitions) times per sample)"
    }

    /// The least CPU time of one `work(small)` and one `work(large)` over `trials` samples of
    /// each, taken in turn so that a slow spell of the machine weighs on both.
    public static func measure<Input, Output>(
        small: Input, large: Input, trials: Int = 5, _ work: (Input) -> Output
    ) -> WorkGrowth {
        var repetitions = 1
        while sample(small, repetitions, work) < minimumSample && repetitions < 1 << 20 { repetitions *= 2 }
        let largeRepetitions = max(1, repetitions / factor)
        let started = threadCPUTime()
        var bestSmall: Duration?
        var bestLarge: Duration?
        for _ in 0..<max(1, trials) {
            let smallTime = sample(small, repetitions, work) / repetitions
            let largeTime = sample(large, largeRepetitions, work) / largeRepetitions
            bestSmall = min(bestSmall ?? smallTime, smallTime)
            bestLarge = min(bestLarge ?? largeTime, largeTime)
            if threadCPUTime() - started > maximumSpent { break }
        }
        return WorkGrowth(small: bestSmall ?? .zero, large: bestLarge ?? .zero, repetitions: repetitions)
    }

    /// ``measure(small:large:trials:_:)`` of `input(n)` and `input(8n)`; the inputs are built
    /// before anything is timed.
    public static func measure<Input, Output>(
        n: Int, input: (Int) -> Input, trials: Int = 5, _ work: (Input) -> Output
    ) -> WorkGrowth {
        let small = input(n)
        let large = input(factor * n)
        return measure(small: small, large: large, trials: trials, work)
    }

    private static func sample<Input, Output>(_ input: Input, _ repetitions: Int, _ work: (Input) -> Output) -> Duration {
        let start = threadCPUTime()
        for _ in 0..<repetitions { keep(work(input)) }
        return threadCPUTime() - start
    }

    /// Keeps a result alive until here, so that an optimised build cannot drop the work.
    @inline(never) private static func keep<Output>(_ output: Output) { withExtendedLifetime(output) {} }

    private static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return rounded(Double(seconds) * 1e3 + Double(attoseconds) / 1e15)
    }

    private static func rounded(_ value: Double) -> String {
        guard value.isFinite else { return "\(value)" }
        return "\(Double(Int((value * 100).rounded())) / 100)"
    }
}

/// An input made of one unit repeated: the bytes, and how many times the unit stands in them, so
/// that a test can say what reading the input must give.
///
/// ```swift
/// let input = WorkInput.filling(32 << 10, "[", "0,", "0]")   // [0,0,...,0] of about 32 KiB
/// input.count                                                // the number of "0,"
/// ```
public struct WorkInput: Sendable {
    public var bytes: [UInt8]
    public var count: Int

    public init(bytes: [UInt8], count: Int) {
        self.bytes = bytes
        self.count = count
    }

    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// `prefix`, then `unit` as many times as it takes (at least once) to make about `size`
    /// bytes in all, then `suffix`.
    public static func filling(_ size: Int, _ prefix: String, _ unit: String, _ suffix: String) -> WorkInput {
        let unitBytes = Array(unit.utf8)
        let room = size - prefix.utf8.count - suffix.utf8.count
        let count = max(1, (room + unitBytes.count - 1) / max(1, unitBytes.count))
        var bytes = Array(prefix.utf8)
        bytes.reserveCapacity(bytes.count + count * unitBytes.count + suffix.utf8.count)
        for _ in 0..<count { bytes += unitBytes }
        bytes += suffix.utf8
        return WorkInput(bytes: bytes, count: count)
    }

    /// `prefix`, then `unit(0)`, `unit(1)`, … until there are about `size` bytes in all (at least
    /// one unit), then `suffix`: for units that must differ, such as distinct keys.
    public static func filling(_ size: Int, _ prefix: String, numbered unit: (Int) -> String, _ suffix: String) -> WorkInput {
        var bytes = Array(prefix.utf8)
        let suffixBytes = Array(suffix.utf8)
        var count = 0
        while count == 0 || bytes.count + suffixBytes.count < size {
            bytes += unit(count).utf8
            count += 1
        }
        bytes += suffixBytes
        return WorkInput(bytes: bytes, count: count)
    }

    /// The same text in UTF-16, little-endian, after a byte-order mark.
    public var utf16LittleEndianWithMark: WorkInput {
        var encoded: [UInt8] = [0xFF, 0xFE]
        encoded.reserveCapacity(2 + 2 * bytes.count)
        for unit in text.utf16 { encoded += [UInt8(unit & 0xFF), UInt8(unit >> 8)] }
        return WorkInput(bytes: encoded, count: count)
    }
}

/// What reading an input gave, reduced to what a work test checks: how much was read, or why it
/// was refused. Each suite says what its counts count.
public enum ReadOutcome: Hashable, Sendable, CustomStringConvertible {
    /// Read: the elements, members, characters or bytes of what was read.
    case read(Int)
    /// Refused, with the refusal's text; as an expectation, a part of that text.
    case refused(String)

    /// Whether `actual` is what this expectation asks for: the same count, or a refusal whose
    /// text contains this one's.
    public func admits(_ actual: ReadOutcome) -> Bool {
        switch (self, actual) {
        case (.read(let expected), .read(let count)): expected == count
        case (.refused(let expected), .refused(let text)): text.contains(expected)
        default: false
        }
    }

    public var description: String {
        switch self {
        case .read(let count): "read (\(count))"
        case .refused(let text): "refused: \(text.prefix(300))"
        }
    }
}
