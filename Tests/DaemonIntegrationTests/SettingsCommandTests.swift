import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import SharedCorpus
import TestThreads
import Testing

/// `defaults settings` as a person uses it: the installed bundles listed, a pane with its keys and
/// choices, the loader's diagnostics, and `set` acting like the Settings app (only keys the bundle
/// describes, a row named by its title, a bare word read as the row's control stores it).
@Suite(.ownThreads) struct SettingsCommandTests {
    static let meshtastic = "com.meshtastic.app"
    static let bridge = "com.example.BridgeControl"

    /// A daemon with the Bridge Control fixture and, where the shared corpus is present, Meshtastic's
    /// bundle from it (linked, read in place).
    /// `managed` is forced on the Bridge Control domain by a managed file in `<root>/managed`.
    func daemon(managed: [String: PlistValue]? = nil) throws -> (DaemonProcess, String) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("bundles-\(UUID().uuidString.prefix(8))").path
        for domain in [Self.bridge, Self.meshtastic] {
            try FileManager.default.createDirectory(atPath: root + "/" + domain, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: SharedData.bridgeControlBundle, toPath: root + "/\(Self.bridge)/Settings.bundle")
        if SharedCorpus.isPresent {
            try FileManager.default.createSymbolicLink(
                atPath: root + "/\(Self.meshtastic)/Settings.bundle",
                withDestinationPath: SharedCorpus.settingsBundles.appendingPathComponent("meshtastic__Meshtastic-Apple/Settings.bundle").path)
        }
        let config = root + "/defaultsd.json"
        try #"{ "settingsBundleDirectories": ["\#(root)"] }"#.write(toFile: config, atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: root + "/managed", withIntermediateDirectories: true)
        if let managed {
            try PropertyListFile.encode(managed, format: .xml).write(to: URL(fileURLWithPath: root + "/managed/\(Self.bridge).plist"))
        }
        return (try DaemonProcess(arguments: ["--config", config, "--managed-dir", root + "/managed"]), root)
    }

    func defaults(_ daemon: DaemonProcess, _ arguments: String...) throws -> DefaultsCommandTests.Result {
        try DefaultsCommandTests.run(daemon, arguments)
    }

    @Test(.needsSharedCorpus) func theInstalledBundlesAreListed() throws {
        let (daemon, root) = try daemon()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let list = try defaults(daemon, "settings")
        #expect(list.status == 0 && list.err.isEmpty)
        #expect(
            list.out == """
                DOMAIN                     TITLE  DIAGNOSTICS  PATH
                com.example.BridgeControl  -      0            \(root)/com.example.BridgeControl/Settings.bundle
                com.meshtastic.app         -      1            \(root)/com.meshtastic.app/Settings.bundle

                """)
        let json = try JSONParser.parse(try defaults(daemon, "settings", "--json").out)
        guard case .array(let bundles) = json else { Issue.record("not an array: \(json)"); return }
        #expect(bundles.map { $0["domain"] } == [.string(Self.bridge), .string(Self.meshtastic)])
        #expect(bundles.map { $0["diagnostics"] } == [.integer(0), .integer(1)])
        #expect(bundles.map { $0["language"] } == [.string("en"), .string("en")])

        let diagnostics = try defaults(daemon, "settings", Self.meshtastic, "--diagnostics")
        #expect(diagnostics.status == 0)
        #expect(
            diagnostics.out == """
                Root.plist[2]: warning DEFAULT_NOT_IN_VALUES: DefaultValue string "Thirty Seconds" is not among Values \
                (10, 15, 30, 45, 60, 300, 600, 900) (it is one of the Titles)

                """)
        #expect(try defaults(daemon, "settings", Self.bridge, "--diagnostics").out == "No diagnostics\n")
    }

    @Test(.needsSharedCorpus) func thePaneShowsKeysChoicesAndAValueThatIsNoChoice() throws {
        let (daemon, root) = try daemon()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let pane = try defaults(daemon, "settings", Self.meshtastic)
        #expect(pane.status == 0)
        // Not a terminal: the keys are plain text.
        #expect(pane.out.contains(
            "  Interval                                            provideLocationInterval      \"Thirty Seconds\" (not one of the choices)\n"),
            "\(pane.out)")
        let choices = try defaults(daemon, "settings", Self.bridge, "--choices")
        #expect(choices.out.contains("""
              Rank                rank               Ensign
                  ✓ Ensign
                    Lieutenant
            """), "\(choices.out)")
        #expect(choices.out.contains("  Warp Drive          warp               ON\n"))
    }

    @Test(.needsSharedCorpus) func setActsLikeTheSettingsApp() throws {
        let (daemon, root) = try daemon()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let client = try daemon.connect()
        func stored(_ domain: String) throws -> String { try client.request(#"{"op":"get","domain":"\#(domain)"}"#) }

        // A row named by its title; a bare 30 is the integer the multi-value's Values hold.
        #expect(try defaults(daemon, "settings", Self.meshtastic, "set", "Interval", "30").status == 0)
        #expect(try stored(Self.meshtastic) == #"{"ok":true,"value":{"provideLocationInterval":30},"generation":1}"#)
        // A choice by its title.
        #expect(try defaults(daemon, "settings", Self.meshtastic, "set", "provideLocationInterval", "ten seconds").status == 0)
        #expect(try stored(Self.meshtastic) == #"{"ok":true,"value":{"provideLocationInterval":10},"generation":2}"#)

        // Not a choice, and not a key: refused, naming what there is, and nothing is written.
        let notAChoice = try defaults(daemon, "settings", Self.meshtastic, "set", "Interval", "31")
        #expect(notAChoice.status == 1)
        #expect(notAChoice.message.hasPrefix("provideLocationInterval must be one of: Ten Seconds (10), Fifteen Seconds (15), "))
        let junk = try defaults(daemon, "settings", Self.meshtastic, "set", "Intervals", "30")
        #expect(junk.status == 1)
        #expect(junk.message.hasPrefix(#"The bundle has no setting "Intervals"; its settings are: provideLocation ("Share Location"), provideLocationInterval ("Interval"), "#))
        #expect(try stored(Self.meshtastic) == #"{"ok":true,"value":{"provideLocationInterval":10},"generation":2}"#)

        // A switch takes on/off, a slider a number of its DefaultValue's type, a choice its title in any case.
        for (name, word) in [("Warp Drive", "off"), ("warpFactor", "7"), ("rank", "captain"), ("officer", "Jean-Luc Picard")] {
            let result = try defaults(daemon, "settings", Self.bridge, "set", name, word)
            #expect(result.status == 0 && result.err.isEmpty, "\(name) \(word): \(result.err)")
        }
        #expect(
            try stored(Self.bridge)
                == #"{"ok":true,"value":{"officer":"Jean-Luc Picard","rank":"Captain","warp":false,"warpFactor":7.0},"generation":4}"#)
        // Typed values are still taken as written, and checked by the daemon.
        let tooFast = try defaults(daemon, "settings", Self.bridge, "set", "warpFactor", "-int", "11")
        #expect(tooFast.status == 1 && tooFast.message.contains("warpFactor must be a number from 1 to 10"))
        let notASwitchWord = try defaults(daemon, "settings", Self.bridge, "set", "warp", "maybe")
        #expect(notASwitchWord.status == 1)
        #expect(notASwitchWord.message == "warp is a switch: give one of yes/no, true/false, on/off, 1/0\n")
    }

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func aForcedSettingIsShownLockedAndCannotBeSet() throws {
        let (daemon, root) = try daemon(managed: ["warpFactor": .integer(9)])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"\#(Self.bridge)","key":"rank","value":"Ensign"}"#)
        let pane = try JSONParser.parse(try client.request(#"{"op":"describeBundle","domain":"\#(Self.bridge)"}"#))["pane"]!
        var rows: [JSON] = []
        func collect(_ json: JSON) {
            if case .array(let elements) = json { elements.forEach(collect) }
            if case .object(let members) = json {
                if json["key"] == .string("warpFactor") { rows.append(json) }
                members.forEach { collect($0.value) }
            }
        }
        collect(pane)
        #expect(rows.count == 1)
        #expect(rows.first?["value"] == .integer(9))
        #expect(rows.first?["source"] == .string("managed"))
        #expect(rows.first?["origin"] == .string(Self.bridge))
        #expect(rows.first?["locked"] == .bool(true))
        #expect(try defaults(daemon, "settings", Self.bridge).out.contains("set by your administrator"))

        let refused = try defaults(daemon, "settings", Self.bridge, "set", "warpFactor", "5")
        #expect(refused.status == 1)
        #expect(refused.message == "warpFactor of \(Self.bridge) is set by your administrator and cannot be changed\n")
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.bridge)","key":"warpFactor"}"#) == #"{"ok":true,"value":null,"generation":1}"#)
    }
}

/// `defaults read-effective`: each key's effective value and the layer it comes from, managed
/// first, then this machine's by-host value, the user's own, the Settings bundle's default.
@Suite(.ownThreads) struct ReadEffectiveTests {
    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func eachKeyShowsItsValueAndLayer() throws {
        let (daemon, root) = try SettingsCommandTests().daemon(managed: ["warpFactor": .integer(9)])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let domain = SettingsCommandTests.bridge
        _ = try daemon.connect().request(#"{"op":"apply","domain":"\#(domain)","set":{"rank":"Captain","officer":"Data"}}"#)
        _ = try daemon.connect().request(#"{"op":"set","domain":"\#(domain)","host":"current","key":"officer","value":"Worf"}"#)
        let all = try DefaultsCommandTests.run(daemon, ["read-effective", domain])
        #expect(all.status == 0)
        #expect(all.out == """
            {
                favoriteAlien = Vulcan;  // bundle default
                favoriteCaptain = Picard;  // bundle default
                favoriteGadget = Tricorder;  // bundle default
                favoriteTea = "Earl Grey";  // bundle default
                officer = Worf;  // current host
                rank = Captain;  // user
                warp = 1;  // bundle default
                warpFactor = 9;  // managed
            }

            """)
        let one = try DefaultsCommandTests.run(daemon, ["read-effective", domain, "warpFactor"])
        #expect(one.out == "9  // managed\n")
        let json = try DefaultsCommandTests.run(daemon, ["--json", "read-effective", domain, "officer"])
        #expect(json.out == #"{"layer":"current host","value":"Worf"}"# + "\n")
        let missing = try DefaultsCommandTests.run(daemon, ["read-effective", domain, "nothing"])
        #expect(missing.status == 1)
        #expect(missing.message == "\nThe domain/default pair of (\(domain), nothing) does not exist\n")
    }
}
