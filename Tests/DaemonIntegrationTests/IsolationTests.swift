import DaemonTestSupport
import Foundation
import TestThreads
import Testing

/// The tests run on private XDG directories and a private HOME: a Settings bundle and a
/// configuration file in the invoking user's own directories change nothing a test sees.
@Suite(.ownThreads) struct IsolationTests {
    /// A user's home as SETTINGS-BUNDLES.md and ADMINISTRATION.md tell them to set it up: the Bridge
    /// Control bundle installed, and a configuration file that would refuse every domain over 1 KiB.
    struct UserSetup {
        let home: String
        let environment: [String: String]
        let configurationFile: String

        init() throws {
            home = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-user-\(UUID().uuidString.prefix(8))").path
            let bundles = home + "/.local/share/defaultsd/settings-bundles/com.example.BridgeControl"
            try FileManager.default.createDirectory(atPath: bundles, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: SharedData.bridgeControlBundle, toPath: bundles + "/Settings.bundle")
            try FileManager.default.createDirectory(atPath: home + "/.config/defaultsd", withIntermediateDirectories: true)
            configurationFile = home + "/.config/defaultsd/defaultsd.json"
            try #"{ "maximumDomainBytes": 1024 }"#.write(toFile: configurationFile, atomically: true, encoding: .utf8)
            environment = ProcessInfo.processInfo.environment.merging([
                "HOME": home, "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
                "DEFAULTSD_SOCKET": home + "/not-the-test-daemon.socket",
            ]) { $1 }
        }

        func remove() { try? FileManager.default.removeItem(atPath: home) }
    }

    @Test func theUsersConfigurationFileIsReadByADaemonInTheirEnvironmentButNotByATestDaemon() throws {
        let user = try UserSetup()
        defer { user.remove() }
        // The set-up is real: a daemon in the user's own environment reads their file.
        let asTheUser = try DaemonProcess.runToCompletion(["--print-config"], environment: user.environment)
        #expect(asTheUser.output.hasPrefix("# effective configuration of defaultsd; configuration file: \(user.configurationFile)\n"))
        defer { try? FileManager.default.removeItem(atPath: user.home + "-test") }
        let isolated = try DaemonProcess.runToCompletion(
            ["--print-config"], environment: TestEnvironment.isolated(home: user.home + "-test", inheriting: user.environment))
        #expect(isolated.output.hasPrefix("# effective configuration of defaultsd; configuration file: none\n"))
    }

    @Test func aTestDaemonSeesNeitherTheUsersBundlesNorTheirConfiguration() throws {
        let user = try UserSetup()
        defer { user.remove() }
        let daemon = try DaemonProcess(inheriting: user.environment)
        let client = try daemon.connect()
        // The user's file would refuse this (1 KiB at most); the test daemon has its default limit.
        let long = String(repeating: "Lieutenant Commander ", count: 100)
        #expect(try client.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"rank","value":"\#(long)"}"#)
            == #"{"ok":true,"generation":1}"#)
        // The user's installed bundle would answer warpFactor 5.0 from its bundle layer.
        #expect(try client.request(#"{"op":"lookup","domain":"com.example.BridgeControl","key":"warpFactor"}"#)
            == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
        #expect(try client.request(#"{"op":"bundleDefaults","domain":"com.example.BridgeControl"}"#).hasPrefix(#"{"ok":true,"values":{}"#))
        // What the test starts beside the daemon talks to the test daemon, not the user's socket.
        #expect(daemon.clientEnvironment["DEFAULTSD_SOCKET"] == daemon.socketPath)
        #expect(daemon.clientEnvironment["HOME"] == daemon.home)
        #expect(daemon.clientEnvironment["XDG_DATA_HOME"]?.hasPrefix(daemon.home + "/") == true)
    }
}
