import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// The Bridge Control story of the classic iOS settings tutorial, end to end: install the bundle,
/// read its defaults through the layer, edit from the CLI, a subscriber is told, a bad write is refused.
@Suite(.ownThreads) struct SettingsBundleStoryTests {
    static let fixture = SharedData.bridgeControlBundle
    static let domain = "com.example.BridgeControl"

    /// A daemon whose bundle directory holds the Bridge Control bundle.
    func daemon(extra: String = "") throws -> (DaemonProcess, String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bundles-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root + "/" + Self.domain, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: root + "/" + Self.domain + "/Settings.bundle")
        let config = root + "/defaultsd.json"
        try #"{ "settingsBundleDirectories": ["\#(root)"], "settingsBundleScanMilliseconds": 200 \#(extra) }"#
            .write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", config], environment: ["LANG": "en_US.UTF-8", "LANGUAGE": ""])
        #expect(daemon.waitForLog("settings bundle loaded diagnostics=0 domain=\(Self.domain)"))
        return (daemon, root)
    }

    @Test func theWholeStory() throws {
        let (daemon, root) = try daemon()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let app = try daemon.connect()
        // The bundle's DefaultValues are a layer below what the user set and above register(defaults:).
        try app.request(#"{"op":"register","defaults":{"warpFactor":1,"favoriteAlien":"Klingon","officer":"nobody"}}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":5.0,"domain":"com.example.BridgeControl","layer":"bundle"}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"favoriteAlien"}"#)
            == #"{"ok":true,"value":"Vulcan","domain":"com.example.BridgeControl","layer":"bundle"}"#)
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"officer"}"#)
            == #"{"ok":true,"value":"nobody","domain":"NSRegistrationDomain","layer":"registration"}"#)
        try app.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)

        // The settings front end shows the root pane.
        let shown = try DefaultsCommandTests.run(daemon, ["settings", Self.domain])
        #expect(shown.status == 0)
        #expect(shown.out.contains("GENERAL INFO\n"))
        #expect(shown.out.contains("WARP FACTOR\n"))
        #expect(shown.out.contains("Rank"))
        #expect(shown.out.contains("Ensign"))
        #expect(shown.out.contains("More Settings"))

        // Editing warpFactor from the CLI: the subscribed app is told at once.
        #expect(try DefaultsCommandTests.run(daemon, ["write", Self.domain, "warpFactor", "-float", "7"]).status == 0)
        let event = try JSONParser.parse(try app.readEvent())
        #expect(event["domain"] == .string(Self.domain))
        #expect(event["changes"] == .object(["warpFactor": .real(7)]))
        #expect(try app.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"warpFactor"}"#)
            == #"{"ok":true,"value":7.0,"domain":"com.example.BridgeControl","layer":"persistent"}"#)

        // A write of 11 is refused, by the protocol and by the CLI, and nothing changes.
        let refused = try JSONParser.parse(try app.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":11}"#))
        #expect(refused["error"]?["code"] == .string("invalid_value"))
        guard case .string(let message)? = refused["error"]?["message"] else { Issue.record("no message"); return }
        #expect(message.contains("warpFactor must be a number from 1 to 10"))
        #expect(message.contains("PSSliderSpecifier"))
        let cli = try DefaultsCommandTests.run(daemon, ["settings", Self.domain, "set", "warpFactor", "-int", "11"])
        #expect(cli.status == 1)
        #expect(cli.message.contains("warpFactor must be a number from 1 to 10"))
        #expect(try DefaultsCommandTests.run(daemon, ["settings", Self.domain, "set", "rank", "Captain"]).status == 0)
        let bad = try JSONParser.parse(try app.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Admiral"}"#))
        #expect(bad["error"]?["code"] == .string("invalid_value"))
        #expect(try app.request(#"{"op":"get","domain":"\#(Self.domain)"}"#).contains(#"{"rank":"Captain","warpFactor":7.0}"#))

        // The pane shows the new values; the child pane can be shown on its own.
        let after = try DefaultsCommandTests.run(daemon, ["settings", Self.domain])
        #expect(after.out.contains("Captain"))
        let more = try DefaultsCommandTests.run(daemon, ["settings", Self.domain, "More"])
        #expect(more.status == 0 && more.out.contains("Vulcan"))
    }

    @Test func describeBundleAnswersTheTreeWithSourcesAndMasksSecrets() throws {
        let (daemon, root) = try daemon()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let client = try daemon.connect()
        try client.request(#"{"op":"apply","domain":"\#(Self.domain)","set":{"authorizationCode":"Picard-4-7-Alpha","rank":"Commander"}}"#)
        let answer = try client.request(#"{"op":"describeBundle","domain":"\#(Self.domain)"}"#)
        #expect(!answer.contains("Picard-4-7-Alpha"), "a secure value never leaves the daemon")
        let tree = try JSONParser.parse(answer)
        #expect(tree["ok"] == .bool(true))
        #expect(tree["pane"]?["file"] == .string("Root.plist"))
        guard case .array(let sections)? = tree["pane"]?["sections"], case .array(let rows)? = sections.first?["rows"] else {
            Issue.record("no sections in \(answer)")
            return
        }
        #expect(sections.first?["title"] == .string("General Info"))
        let secure = rows.first { $0["key"] == .string("authorizationCode") }
        #expect(secure?["masked"] == .bool(true))
        #expect(secure?["value"] == .null)
        let rank = rows.first { $0["key"] == .string("rank") }
        #expect(rank?["source"] == .string("stored"))
        #expect(rank?["origin"] == .string(Self.domain))
        #expect(rank?["value"] == .string("Commander"))
        let warp = rows.first { $0["key"] == .string("warp") }
        #expect(warp?["source"] == .string("bundleDefault"))
        #expect(warp?["control"]?["kind"] == .string("toggleSwitch"))
        let missing = try JSONParser.parse(try client.request(#"{"op":"describeBundle","domain":"com.example.none"}"#))
        #expect(missing["error"]?["code"] == .string("invalid_parameter"))
        let missingInFrench = try JSONParser.parse(
            try client.request(#"{"op":"describeBundle","domain":"com.example.none","language":"fr"}"#))
        #expect(missingInFrench["error"]?["code"] == .string("invalid_parameter"))
        // Another language: the bundle is read again, and the answer stays in request order.
        try client.send(#"{"id":1,"op":"describeBundle","domain":"\#(Self.domain)","language":"fr","text":true}"#)
        try client.send(#"{"id":2,"op":"ping"}"#)
        let french = try JSONParser.parse(try client.readResponse())
        #expect(french["id"] == .integer(1))
        #expect(french["language"] == .string("fr"))
        #expect(french["pane"]?["sections"].flatMap { if case .array(let s) = $0 { s.first?["title"] } else { nil } } == .string("Informations générales"))
        guard case .string(let text)? = french["text"] else { Issue.record("no text"); return }
        #expect(text.hasPrefix("INFORMATIONS GÉNÉRALES\n"))
        #expect(try client.readResponse() == #"{"id":2,"ok":true}"#)
    }

    @Test func bundlesArePickedUpWithoutARestartAndValidationCanBeTurnedOff() throws {
        let (daemon, root) = try daemon(extra: #", "validateSettingsBundles": false"#)
        defer { try? FileManager.default.removeItem(atPath: root) }
        let client = try daemon.connect()
        // Validation off: 11 is accepted.
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":11}"#).hasPrefix(#"{"ok":true"#))
        // A new bundle dropped into the directory is found by the next scan, and subscribers are told.
        let watcher = try daemon.connect()
        #expect(try watcher.request(#"{"op":"subscribe","domains":["com.example.Second"]}"#) == #"{"ok":true,"generations":{"com.example.Second":0}}"#)
        #expect(try watcher.request(#"{"op":"bundleDefaults","domain":"com.example.Second"}"#) == #"{"ok":true,"values":{},"path":null}"#)
        try FileManager.default.createDirectory(atPath: root + "/com.example.Second", withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.fixture, toPath: root + "/com.example.Second/Settings.bundle")
        #expect(daemon.waitForLog("settings bundle loaded diagnostics=0 domain=com.example.Second"))
        #expect(try watcher.readEvent() == #"{"event":"bundleDefaultsChanged","domain":"com.example.Second"}"#)
        let defaults = try JSONParser.parse(try watcher.request(#"{"op":"bundleDefaults","domain":"com.example.Second"}"#))
        #expect(defaults["values"]?["warpFactor"] == .real(5))
        #expect(defaults["values"]?["rank"] == .string("Ensign"))
        #expect(defaults["path"] == .string(root + "/com.example.Second/Settings.bundle"))
        #expect(try client.request(#"{"op":"lookup","domain":"com.example.Second","key":"favoriteAlien"}"#)
            == #"{"ok":true,"value":"Vulcan","domain":"com.example.Second","layer":"bundle"}"#)
        // And one registered over the socket, for a domain with no installed bundle.
        let path = root + "/com.example.Second/Settings.bundle"
        let registered = try client.request(#"{"op":"registerBundle","domain":"com.example.Third","path":"\#(path)"}"#)
        #expect(registered.hasPrefix(#"{"ok":true,"path":"\#(path)","diagnostics":0,"defaults":{"#))
        #expect(try client.request(#"{"op":"lookup","domain":"com.example.Third","key":"rank"}"#)
            == #"{"ok":true,"value":"Ensign","domain":"com.example.Third","layer":"bundle"}"#)
        let nowhere = try JSONParser.parse(try client.request(#"{"op":"registerBundle","domain":"com.example.Fourth","path":"\#(root)/none"}"#))
        #expect(nowhere["error"]?["code"] == .string("invalid_parameter"))
        #expect(try client.request(#"{"op":"bundleDefaults","domain":"com.example.Fourth"}"#) == #"{"ok":true,"values":{},"path":null}"#)
        // Removing a bundle removes its layer, also for the domain it was registered for.
        try FileManager.default.removeItem(atPath: root + "/com.example.Second")
        #expect(daemon.waitForLog("settings bundle removed domain=com.example.Second"))
        #expect(daemon.waitForLog("settings bundle removed domain=com.example.Third"))
        #expect(try client.request(#"{"op":"lookup","domain":"com.example.Second","key":"favoriteAlien"}"#)
            == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
        #expect(try client.request(#"{"op":"bundleDefaults","domain":"com.example.Third"}"#) == #"{"ok":true,"values":{},"path":null}"#)
    }

    @Test func aBundleChecksWritesToTheSuitesItNamesAndNothingElse() throws {
        let (daemon, root) = try daemon()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let bundle = root + "/com.example.Shared/Settings.bundle"
        try FileManager.default.createDirectory(atPath: bundle, withIntermediateDirectories: true)
        let page: [String: Any] = ["PreferenceSpecifiers": [
            ["Type": "PSToggleSwitchSpecifier", "Key": "sync", "Title": "Sync", "DefaultValue": true,
             "ApplicationGroupContainerIdentifier": "group.example.shared"],
            ["Type": "PSToggleSwitchSpecifier", "Key": "own", "Title": "Own", "DefaultValue": false],
        ]]
        try PropertyListSerialization.data(fromPropertyList: page, format: .xml, options: 0)
            .write(to: URL(fileURLWithPath: bundle + "/Root.plist"))
        #expect(daemon.waitForLog("settings bundle loaded diagnostics=0 domain=com.example.Shared"))
        let client = try daemon.connect()
        func set(_ domain: String, _ key: String, _ value: String) throws -> String {
            try client.request(#"{"op":"set","domain":"\#(domain)","key":"\#(key)","value":\#(value)}"#)
        }
        // The suite a specifier names is checked, the bundle's own domain too, other domains not.
        #expect(try set("group.example.shared", "sync", "\"yes\"")
            == #"{"ok":false,"error":{"code":"invalid_value","message":"sync must be true or false (PSToggleSwitchSpecifier \"Sync\")"}}"#)
        #expect(try set("group.example.shared", "sync", "false") == #"{"ok":true,"generation":1}"#)
        #expect(try set("com.example.Shared", "own", "1").contains(#""code":"invalid_value""#))
        #expect(try set("com.example.Shared", "sync", "\"yes\"") == #"{"ok":true,"generation":1}"#)
        #expect(try set("com.example.Other", "sync", "\"yes\"") == #"{"ok":true,"generation":1}"#)
    }

    @Test func anUnreadableRegistryIsMovedAsideNotOverwritten() throws {
        let daemon = try DaemonProcess()
        let registry = daemon.storagePath + "/.defaultsd-bundles.plist"
        let damaged = "<?xml version=\"1.0\"?><plist><dict><key>com.example.A</key>"
        try damaged.write(toFile: registry, atomically: true, encoding: .utf8)
        try daemon.restart()
        #expect(daemon.waitForLog("the registry of registered settings bundles could not be read"))
        let aside = daemon.storageListing().filter { $0.hasPrefix(".defaultsd-bundles.plist.corrupt-") }
        #expect(aside.count == 1)
        #expect(try String(contentsOfFile: daemon.storagePath + "/" + aside[0], encoding: .utf8) == damaged)
        #expect(!FileManager.default.fileExists(atPath: registry))
    }
}
