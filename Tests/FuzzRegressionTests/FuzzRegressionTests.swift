import DaemonTestSupport
import Foundation
import FuzzHarnesses
import TestThreads
import Testing

/// Every input kept for the fuzz harnesses runs through its harness in the ordinary suite:
/// `fuzz/seeds/<harness>/` (where fuzzing starts) and `fuzz/regressions/<harness>/` (every input
/// that once crashed, hung or broke a round trip). A harness traps on a broken invariant, so a
/// regression fails this run.
@Suite(.ownThreads) struct FuzzRegressionTests {
    static let root = SharedData.repository.appendingPathComponent("fuzz")

    static func inputs(_ kind: String, _ harness: FuzzHarness) -> [URL] {
        let folder = root.appendingPathComponent(kind).appendingPathComponent(harness.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { folder.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzHarness.allCases)
    func everyKeptInputPasses(_ harness: FuzzHarness) throws {
        let seeds = Self.inputs("seeds", harness)
        #expect(!seeds.isEmpty, "fuzz/seeds/\(harness.rawValue) is empty")
        for input in seeds + Self.inputs("regressions", harness) {
            let started = ContinuousClock.now
            harness.run(Array(try Data(contentsOf: input)))
            #expect(ContinuousClock.now - started < .seconds(2), "\(input.lastPathComponent) took too long")
        }
    }
}
