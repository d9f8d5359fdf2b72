import Foundation

/// Where the tests' data is: the project's fixtures, and the data shared by every checkout and
/// by CI (`../shared` beside the project, or the directory named by `DEFAULTSD_SHARED`).
public enum SharedData {
    /// The project's own checkout (this file is Tests/DaemonTestSupport/SharedData.swift).
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Bridge Control fixture bundle of the Settings bundle tests.
    public static let bridgeControlBundle = repository
        .appendingPathComponent("Tests/SettingsBundleTests/Fixtures/BridgeControl/Settings.bundle").path

    public static let directory: URL = {
        if let shared = ProcessInfo.processInfo.environment["DEFAULTSD_SHARED"] {
            return URL(fileURLWithPath: shared)
        }
        return repository.appendingPathComponent("../shared").standardized
    }()

    /// The JSON parser conformance cases (`y_`, `n_`, `i_`).
    public static let jsonTestSuite = directory.appendingPathComponent("corpus/json-test-suite/test_parsing")

    /// The corpus of real Settings bundles.
    public static let settingsBundles = directory.appendingPathComponent("corpus/settings-bundles")
}
