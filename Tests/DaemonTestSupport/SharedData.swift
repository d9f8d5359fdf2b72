import Foundation

/// The test data shared by every checkout and by CI: `../shared` beside the project, or the
/// directory named by `DEFAULTSD_SHARED`.
public enum SharedData {
    public static let directory: URL = {
        if let shared = ProcessInfo.processInfo.environment["DEFAULTSD_SHARED"] {
            return URL(fileURLWithPath: shared)
        }
        // This file is Tests/DaemonTestSupport/SharedData.swift; the project is two levels up.
        return URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("../shared").standardized
    }()

    /// The JSON parser conformance cases (`y_`, `n_`, `i_`).
    public static let jsonTestSuite = directory.appendingPathComponent("corpus/json-test-suite/test_parsing")

    /// The corpus of real Settings bundles.
    public static let settingsBundles = directory.appendingPathComponent("corpus/settings-bundles")
}
