import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import TestThreads
import Testing

/// The Bridge Control Settings bundle of the SettingsBundles tests: warpFactor 5.0, rank "Ensign",
/// favoriteAlien "Vulcan", warp true, favoriteTea "Earl Grey", ...
let bridgeControlBundle = SharedData.bridgeControlBundle

/// A daemon's Settings bundle directory (`<root>/<domain>/Settings.bundle`, scanned every 200 ms);
/// removed with the object.
final class BundleDirectory: Sendable {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("bundles-\(UUID().uuidString.prefix(8))").path

    init() throws { try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true) }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// A daemon using this directory; returns once it has loaded the bundles already installed.
    func daemon(loading domains: [String]) throws -> DaemonProcess {
        let config = root + "/defaultsd.json"
        try #"{ "settingsBundleDirectories": ["\#(root)"], "settingsBundleScanMilliseconds": 200 }"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", config], environment: ["LANG": "en_US.UTF-8", "LANGUAGE": ""])
        for domain in domains { #expect(daemon.waitForLog(BundleDirectory.loaded(domain))) }
        return daemon
    }

    /// Installs the Bridge Control bundle for `domain` (the daemon finds it on its next scan).
    func install(_ domain: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/" + domain, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: bridgeControlBundle, toPath: root + "/" + domain + "/Settings.bundle")
    }

    func remove(_ domain: String) throws { try FileManager.default.removeItem(atPath: root + "/" + domain) }

    static func loaded(_ domain: String) -> String { "settings bundle loaded diagnostics=0 domain=\(domain)" }
}

@Suite("Settings bundle layer: user values > bundle defaults > registration", .serialized, .ownThreads)
struct BundleLayerTests {
    @Test("a bundle's defaults are read between the persistent domains and registration")
    func precedence() throws {
        let bundles = try BundleDirectory()
        try bundles.install("com.example.BridgeControl")
        let daemon = try bundles.daemon(loading: ["com.example.BridgeControl"])
        _ = try rawRequest(daemon, #"{"op":"set","domain":"NSGlobalDomain","key":"favoriteAlien","value":"Klingon"}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.register(defaults: ["warpFactor": 3, "rank": "Cadet", "onlyRegistered": "yes"])

        // The bundle beats registration.
        #expect(defaults.value(forKey: "warpFactor") == .real(5.0))
        #expect(defaults.object(forKey: "warpFactor") as? Double == 5.0)
        #expect(defaults.double(forKey: "warpFactor") == 5.0)
        #expect(defaults.integer(forKey: "warpFactor") == 5)
        #expect(defaults.string(forKey: "rank") == "Ensign")
        #expect(defaults.bool(forKey: "warp"))
        #expect(defaults.string(forKey: "onlyRegistered") == "yes")
        // A value the user set beats the bundle: NSGlobalDomain, the app domain.
        #expect(defaults.string(forKey: "favoriteAlien") == "Klingon")
        defaults.set(7.5, forKey: "warpFactor")
        #expect(defaults.value(forKey: "warpFactor") == .real(7.5))
        defaults.removeObject(forKey: "warpFactor")
        #expect(defaults.value(forKey: "warpFactor") == .real(5.0))

        // dictionaryRepresentation includes the layer: rep[k] == object(forKey: k).
        let representation = defaults.resolvedValues()
        #expect(representation["warpFactor"] == .real(5.0))
        #expect(representation["favoriteTea"] == .string("Earl Grey"))
        #expect(representation["favoriteAlien"] == .string("Klingon"))
        for (key, value) in representation { #expect(defaults.value(forKey: key) == value, "\(key)") }
        #expect(defaults.dictionaryRepresentation()["rank"] as? String == "Ensign")

        // The layer is not a stored value, and belongs to its domain's search lists only.
        #expect(defaults.persistentDomain(forName: "com.example.BridgeControl") == nil)
        let fleet = try #require(SharedDefaults(suiteName: "group.example.fleet", configuration: configuration(daemon)))
        #expect(fleet.string(forKey: "rank") == "Cadet")
        #expect(fleet.object(forKey: "favoriteTea") == nil)
        // A suite's bundle layer is searched after the app domain's.
        fleet.addSuite(named: "com.example.BridgeControl")
        #expect(fleet.string(forKey: "rank") == "Ensign")
        #expect(defaults.synchronize())
    }

    @Test("a bundle installed (or removed) after the domain was loaded is announced for the keys it changes")
    func bundleInstalledLater() async throws {
        let bundles = try BundleDirectory()
        try bundles.install("com.example.Other")
        let daemon = try bundles.daemon(loading: ["com.example.Other"])
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"favoriteAlien","value":"Romulan"}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.register(defaults: ["warpFactor": 3])
        #expect(defaults.value(forKey: "warpFactor") == .integer(3))  // loaded, without a bundle
        #expect(defaults.object(forKey: "rank") == nil)

        let (changes, task) = Recorder.of(defaults.changes())
        let (warpFactor, warpTask) = Recorder.of(defaults.values(forKey: "warpFactor", as: Double.self))
        defer { task.cancel(); warpTask.cancel() }
        let notifications = NotificationRecorder(object: defaults)
        let ranks = Recorder<PlistValue?>()
        let token = defaults.observe(key: "rank") { ranks.append($0) }
        defer { token.cancel() }
        #expect(await warpFactor.wait { $0 == [3.0] })
        #expect(await ranks.wait { $0 == [nil] })

        try bundles.install("com.example.BridgeControl")

        let change = try await changes.first { $0.origin == .settingsBundle }
        #expect(change.domain == "com.example.BridgeControl")
        // Every default of the bundle but favoriteAlien: the user's value still wins there, no change.
        #expect(change.keys == ["favoriteCaptain", "favoriteGadget", "favoriteTea", "rank", "warp", "warpFactor"])
        #expect(await warpFactor.wait { $0 == [3.0, 5.0] })
        #expect(await ranks.wait { $0 == [nil, .string("Ensign")] })
        let note = try await notifications.recorder.first { $0.origin == .settingsBundle }
        #expect(note.isFromObject && note.keys == change.keys.sorted() && note.domain == "com.example.BridgeControl")

        #expect(defaults.double(forKey: "warpFactor") == 5.0)
        #expect(defaults.string(forKey: "rank") == "Ensign")
        #expect(defaults.string(forKey: "favoriteAlien") == "Romulan")
        #expect(defaults.dictionaryRepresentation()["favoriteTea"] as? String == "Earl Grey")
        #expect(changes.items.count == 1)

        // Removing the bundle takes its layer away: registration shows again.
        try bundles.remove("com.example.BridgeControl")
        #expect(await warpFactor.wait { $0 == [3.0, 5.0, 3.0] })
        #expect(await ranks.wait { $0 == [nil, .string("Ensign"), nil] })
        // The change stream and the value streams are delivered apart: wait for the change itself.
        #expect(await changes.wait { $0.count == 2 })
        let removal = try #require(changes.items.dropFirst().first)
        #expect(removal.origin == .settingsBundle && removal.keys == change.keys)
        #expect(changes.items.count == 2)
        #expect(defaults.object(forKey: "favoriteTea") == nil)
    }

    @Test("a suite's bundle layer is fetched when the suite is added")
    func suiteLayer() async throws {
        let bundles = try BundleDirectory()
        try bundles.install("group.example.fleet")
        let daemon = try bundles.daemon(loading: ["group.example.fleet"])
        let app = SharedDefaults(configuration: configuration(daemon))
        #expect(app.object(forKey: "rank") == nil)
        app.addSuite(named: "group.example.fleet")
        await app.load()
        #expect(app.string(forKey: "rank") == "Ensign")
        #expect(app.double(forKey: "warpFactor") == 5.0)
    }

    @Test("on reconnecting, the bundle layer is fetched again and its changes are announced")
    func reconnect() async throws {
        let bundles = try BundleDirectory()
        let daemon = try bundles.daemon(loading: [])
        let defaults = SharedDefaults(configuration: configuration(daemon))
        #expect(defaults.object(forKey: "rank") == nil)
        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }

        // The bundle is installed while the daemon is down.
        daemon.kill()
        try bundles.install("com.example.BridgeControl")
        try daemon.restart()

        // The daemon loads remembered bundles just after it starts listening: the client finds
        // the layer in its fetch on reconnecting (resynchronized), or the daemon's
        // bundleDefaultsChanged follows that fetch (settings bundle).
        let change = try await changes.first { $0.keys.contains("rank") }
        #expect(change.origin == .resynchronized || change.origin == .settingsBundle)
        #expect(change.keys.isSuperset(of: ["rank", "warpFactor"]))
        #expect(defaults.string(forKey: "rank") == "Ensign")
        #expect(defaults.value(forKey: "warpFactor") == .real(5.0))
    }
}
