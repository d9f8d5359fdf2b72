import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Settings bundle directories are watched with inotify: a bundle installed, changed or removed
/// while the daemon runs is in force at once, with no scan on a timer. The scan interval is set
/// to an hour, so only a watch can explain what these tests see.
@Suite(.ownThreads) struct BundleWatchTests {
    static let domain = "com.example.BridgeControl"

    func daemon(directory: String, config: String) throws -> DaemonProcess {
        try #"{ "settingsBundleDirectories": ["\#(directory)"], "settingsBundleScanMilliseconds": 3600000 }"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        return try DaemonProcess(arguments: ["--config", config], environment: ["LANG": "en_US.UTF-8", "LANGUAGE": ""])
    }

    func temporaryPath() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("watched-\(UUID().uuidString.prefix(8))").path
    }

    func install(into directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory + "/" + Self.domain, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: SharedData.bridgeControlBundle, toPath: directory + "/" + Self.domain + "/Settings.bundle")
    }

    @Test func aBundleInstalledChangedAndRemovedWhileRunningIsInForceAtOnce() throws {
        let root = temporaryPath()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let daemon = try daemon(directory: root, config: root + ".json")
        defer { try? FileManager.default.removeItem(atPath: root + ".json") }
        let app = try daemon.connect()
        try app.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#) == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)

        try install(into: root)
        #expect(try app.readEvent() == #"{"event":"bundleDefaultsChanged","domain":"\#(Self.domain)"}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":5.0,"domain":"\#(Self.domain)","layer":"bundle"}"#)

        // A changed DefaultValue inside the bundle, written in place.
        let rootPlist = root + "/" + Self.domain + "/Settings.bundle/Root.plist"
        let text = try String(contentsOfFile: rootPlist, encoding: .utf8)
        #expect(text.contains("<real>5.0</real>"))
        try text.replacingOccurrences(of: "<real>5.0</real>", with: "<real>6.0</real>").write(toFile: rootPlist, atomically: false, encoding: .utf8)
        #expect(try app.readEvent() == #"{"event":"bundleDefaultsChanged","domain":"\#(Self.domain)"}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":6.0,"domain":"\#(Self.domain)","layer":"bundle"}"#)

        try FileManager.default.removeItem(atPath: root + "/" + Self.domain)
        #expect(try app.readEvent() == #"{"event":"bundleDefaultsChanged","domain":"\#(Self.domain)"}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#) == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
        #expect(!daemon.logText.contains("instead of watched"))
    }

    @Test func aBundleDirectoryCreatedAfterStartIsWatchedFromThen() throws {
        let parent = temporaryPath()
        let root = parent + "/share/settings-bundles"
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let daemon = try daemon(directory: root, config: parent + "/defaultsd.json")
        let app = try daemon.connect()
        try app.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        try install(into: root)
        #expect(try app.readEvent() == #"{"event":"bundleDefaultsChanged","domain":"\#(Self.domain)"}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":5.0,"domain":"\#(Self.domain)","layer":"bundle"}"#)
    }

    /// A bundle with links back to its own folder (here 20 links to `.`, which a walk that
    /// followed them would find 20^8 paths through) is watched once per real directory.
    @Test func linksBackIntoABundleAddNoWatches() throws {
        let root = temporaryPath()
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }
        try install(into: root)
        let bundle = root + "/" + Self.domain + "/Settings.bundle"
        for index in 0..<20 { #expect(symlink(".", bundle + "/loop\(index)") == 0) }
        let daemon = try daemon(directory: root, config: root + ".json")
        defer { try? FileManager.default.removeItem(atPath: root + ".json") }
        let app = try daemon.connect()
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#, timeout: 10)
            == #"{"ok":true,"value":5.0,"domain":"\#(Self.domain)","layer":"bundle"}"#)
        let realDirectories = try FileManager.default.subpathsOfDirectory(atPath: root).filter { path in
            var status = stat()
            return lstat(root + "/" + path, &status) == 0 && status.st_mode & S_IFMT == S_IFDIR
        }.count + 1
        let watches = Self.inotifyWatchCount(of: daemon.process.processIdentifier)
        #expect(watches > realDirectories && watches <= realDirectories + 8,
            "\(watches) watches for \(realDirectories) bundle directories and the daemon's own few")
    }

    /// How many inotify watches a process holds, as its descriptors' `fdinfo` lists them.
    static func inotifyWatchCount(of pid: Int32) -> Int {
        let folder = "/proc/\(pid)/fdinfo"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).reduce(0) { count, fd in
            let text = (try? String(contentsOfFile: folder + "/" + fd, encoding: .utf8)) ?? ""
            return count + text.split(separator: "\n").filter { $0.hasPrefix("inotify wd:") }.count
        }
    }
}
