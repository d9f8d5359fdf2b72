import DaemonTestSupport
import Foundation
import Testing

/// The corpus of third-party data that CI and the developers keep beside the checkout
/// (`../shared`, or the directory named by `DEFAULTSD_SHARED`): real Settings bundles and the JSON
/// conformance suite. A clone with nothing beside it has no corpus; the tests built on it are
/// then skipped with ``Testing/Trait/needsSharedCorpus``, and `make test` says so once.
public enum SharedCorpus {
    public static let directory: URL = {
        if let shared = ProcessInfo.processInfo.environment["DEFAULTSD_SHARED"], !shared.isEmpty {
            return URL(fileURLWithPath: shared)
        }
        return SharedData.repository.appendingPathComponent("../shared").standardized
    }()

    /// The JSON parser conformance cases (`y_`, `n_`, `i_`).
    public static let jsonTestSuite = directory.appendingPathComponent("corpus/json-test-suite/test_parsing")

    /// The corpus of real Settings bundles.
    public static let settingsBundles = directory.appendingPathComponent("corpus/settings-bundles")

    /// Whether the corpus is there: both of its parts, as CI lays them.
    public static let isPresent: Bool = [jsonTestSuite, settingsBundles].allSatisfy { folder in
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs a test or suite only where the shared corpus is present.
    ///
    /// ```swift
    /// @Suite(.needsSharedCorpus, .ownThreads) struct CorpusTests { … }
    /// ```
    public static var needsSharedCorpus: Self {
        .enabled(if: SharedCorpus.isPresent, "needs the shared corpus (../shared or $DEFAULTSD_SHARED), which is absent")
    }
}
