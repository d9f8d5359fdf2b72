import Foundation

/// Where the tests' own data is: the project's checkout and its fixtures. The corpus that CI and
/// the developers keep beside the checkout is found by `SharedCorpus`.
public enum SharedData {
    /// The project's own checkout (this file is Tests/DaemonTestSupport/SharedData.swift).
    public static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// The Bridge Control fixture bundle of the Settings bundle tests.
    public static let bridgeControlBundle = repository
        .appendingPathComponent("Tests/SettingsBundleTests/Fixtures/BridgeControl/Settings.bundle").path
}
