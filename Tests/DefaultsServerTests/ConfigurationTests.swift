import DefaultsCore
@testable import DefaultsServer
import Foundation
import TestThreads
import Testing

@Suite(.ownThreads) struct ConfigurationTests {
    static let shipped = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Config/defaultsd.json").path

    let environment = ["HOME": "/home/picard", "XDG_RUNTIME_DIR": "/run/user/4242"]

    /// Every option but the roaming section, which is off unless configured (docs/ROAMING.md):
    /// the shipped file stays as it was before roaming existed.
    static let shippedOptions = ConfigurationOption.all.filter { !$0.key.hasPrefix("roaming.") }

    @Test func theShippedFileHoldsEveryOptionAtItsDefault() throws {
        let values = try ConfigurationLoader.read(Self.shipped)
        #expect(Set(values.keys) == Set(Self.shippedOptions.map(\.key)))
        let fromFile = try ConfigurationLoader(environment: environment, explicitFile: Self.shipped, overrides: []).load()
        let builtIn = DaemonConfiguration.standard(environment: environment)
        #expect(!fromFile.configuration.roaming.isEnabled)
        for option in ConfigurationOption.all {
            #expect(option.current(fromFile.configuration) == option.current(builtIn), "\(option.key)")
        }
        let text = try String(contentsOfFile: Self.shipped, encoding: .utf8)
        for option in Self.shippedOptions {
            // Every key is documented by a comment right above it.
            let lines = text.components(separatedBy: "\n")
            let index = try #require(lines.firstIndex { $0.contains("\"\(option.key)\":") })
            #expect(lines[index - 1].trimmingCharacters(in: .whitespaces).hasPrefix("//"), "\(option.key) has no comment")
        }
    }

    @Test func flagsOverrideTheFileAndSourcesAreRecorded() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/defaultsd.json"
        try #"{ "coalesceMilliseconds": 10, "maximumConnections": 5, /* trailing comma: */ }"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let resolved = try ConfigurationLoader(
            environment: environment, explicitFile: file,
            overrides: [(option: .coalesceMilliseconds, value: .integer(20))]).load()
        #expect(resolved.configuration.coalesceDelay == .milliseconds(20))
        #expect(resolved.configuration.maximumConnections == 5)
        #expect(resolved.sources["coalesceMilliseconds"] == "--coalesce-ms")
        #expect(resolved.sources["maximumConnections"] == file)
        #expect(resolved.sources["maximumLineBytes"] == nil)
    }

    @Test func theSearchOrderPrefersTheUsersFile() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("home-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        #expect(DefaultPaths.configurationFiles(environment: ["HOME": home])
            == [home + "/.config/defaultsd/defaultsd.json", "/etc/defaultsd/defaultsd.json"])
        #expect(DefaultPaths.configurationFiles(environment: ["HOME": home, "XDG_CONFIG_HOME": "/xdg"])
            == ["/xdg/defaultsd/defaultsd.json", "/etc/defaultsd/defaultsd.json"])
        try FileManager.default.createDirectory(atPath: home + "/.config/defaultsd", withIntermediateDirectories: true)
        try #"{ "logLevel": "debug" }"#.write(toFile: home + "/.config/defaultsd/defaultsd.json", atomically: true, encoding: .utf8)
        let resolved = try ConfigurationLoader(environment: ["HOME": home], explicitFile: nil, overrides: []).load()
        #expect(resolved.file == home + "/.config/defaultsd/defaultsd.json")
        #expect(resolved.configuration.logLevel == .debug)
    }

    /// A configuration file that is a link leading nowhere is the file its user meant: it is an
    /// error that says so, never passed over for the next place.
    @Test func aLinkThatLeadsNowhereIsNamedForWhatItIs() throws {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("home-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        let file = home + "/.config/defaultsd/defaultsd.json"
        try FileManager.default.createDirectory(atPath: home + "/.config/defaultsd", withIntermediateDirectories: true)
        #expect(symlink(home + "/dotfiles/defaultsd.json", file) == 0)
        let dangling = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(environment: ["HOME": home], explicitFile: nil, overrides: []).load()
        }
        #expect(dangling?.description == "\(file): a symbolic link that leads to no file")
        unlink(file)
        #expect(symlink(file, file) == 0)
        let loop = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(environment: ["HOME": home], explicitFile: file, overrides: []).load()
        }
        #expect(loop?.description == "\(file): cannot be read: Too many levels of symbolic links")
    }

    @Test func aMissingExplicitFileIsAnError() {
        let error = #expect(throws: ConfigurationError.self) {
            try ConfigurationLoader(environment: environment, explicitFile: "/nonexistent/defaultsd.json", overrides: []).load()
        }
        #expect(error?.description == "/nonexistent/defaultsd.json: no such file")
    }

    @Test func defaultPathsFollowXDG() {
        #expect(DefaultPaths.socketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7"], uid: 7) == "/run/user/7/defaultsd/socket")
        #expect(DefaultPaths.socketPath(environment: [:], uid: 7) == "/tmp/defaultsd-7/socket")
        #expect(DefaultPaths.socketPath(environment: ["XDG_RUNTIME_DIR": "relative"], uid: 7) == "/tmp/defaultsd-7/socket")
        #expect(DefaultPaths.storageDirectory(environment: ["XDG_CONFIG_HOME": "/c", "HOME": "/h"]) == "/c")
        #expect(DefaultPaths.storageDirectory(environment: ["HOME": "/h"]) == "/h/.config", "Foundation's own folder")
        #expect(DefaultPaths.storageDirectory(environment: ["HOME": "/h", "XDG_CONFIG_HOME": "/"]) == "/h/.config", "as Foundation: / alone is not taken")
        #expect(DefaultPaths.stateDirectory(environment: ["HOME": "/h"]) == "/h/.local/state/defaultsd")
        #expect(DefaultPaths.stateDirectory(environment: ["HOME": "/h", "XDG_STATE_HOME": "/s"]) == "/s/defaultsd")
        #expect(DefaultPaths.settingsBundleDirectories(environment: ["HOME": "/h"])
            == ["/usr/share/defaultsd/settings-bundles", "/h/.local/share/defaultsd/settings-bundles"])
    }
}
