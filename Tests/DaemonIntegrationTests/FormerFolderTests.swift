import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// The domains of the folder defaultsd used before it shared Foundation's (`~/.config/defaultsd`)
/// move to the shared folder once, at start, with their generations; nothing is lost, and a
/// Foundation file already there is kept.
@Suite(.ownThreads) struct FormerFolderTests {
    func write(_ values: [String: PlistValue], to path: String) throws {
        try FileManager.default.createDirectory(
            atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try PropertyListFile.encode(values, format: .xml).write(to: URL(fileURLWithPath: path))
    }

    @Test("the former folder's domains move into the shared folder and its ledger to the state directory, once; a file Foundation wrote there is kept")
    func theFormerFolderIsMovedOnce() throws {
        let daemon = try DaemonProcess(defaultPaths: true)
        #expect(daemon.terminate() == 0)
        let former = daemon.home + "/.config/defaultsd"
        let shared = daemon.home + "/.config"
        try write(["rank": "Ensign"], to: former + "/com.example.moved.plist")
        try write(["AppleLocale": "fr_FR"], to: former + "/.GlobalPreferences.plist")
        try write(["com.example.moved": 7], to: former + "/.defaultsd-generations.plist")
        try write(["from": "defaultsd"], to: former + "/com.example.both.plist")
        try write(["from": "foundation"], to: shared + "/com.example.both.plist")
        try Data(#"{ "logLevel": "info" }"#.utf8).write(to: URL(fileURLWithPath: former + "/defaultsd.json"))

        try daemon.restart()
        #expect(daemon.waitForLog("moved the former folder's files"))
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"get","domain":"com.example.moved"}"#) == #"{"ok":true,"value":{"rank":"Ensign"},"generation":7}"#,
                "the values and the generation the ledger kept")
        #expect(try client.request(#"{"op":"get","domain":"NSGlobalDomain","key":"AppleLocale"}"#) == #"{"ok":true,"value":"fr_FR","generation":0}"#)
        #expect(try client.request(#"{"op":"get","domain":"com.example.both","key":"from"}"#) == #"{"ok":true,"value":"foundation","generation":0}"#,
                "the shared folder's file wins")
        let state = daemon.statePath
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: state + "/com.example.both.plist.before-sharing"))) == ["from": "defaultsd"],
                "the former file is kept, not lost")
        #expect(daemon.logText.contains("a domain already had a file in the shared folder"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: former) == ["defaultsd.json"], "the configuration file stays")
        #expect(FileManager.default.fileExists(atPath: shared + "/com.example.moved.plist"))
        #expect(FileManager.default.fileExists(atPath: state + "/.defaultsd-generations.plist"))

        // A change now lands in the shared folder, and the ledger in the state directory.
        #expect(try client.request(#"{"op":"set","domain":"com.example.moved","key":"rank","value":"Captain"}"#) == #"{"ok":true,"generation":8}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: shared + "/com.example.moved.plist"))) == ["rank": "Captain"])
        #expect(!FileManager.default.fileExists(atPath: shared + "/.defaultsd-generations.plist"), "the shared folder holds domains only")

        // Once: a second start moves nothing.
        try daemon.restart()
        #expect(daemon.logText.components(separatedBy: "moved the former folder's files").count == 2)
        #expect(try daemon.connect().request(#"{"op":"get","domain":"com.example.moved","key":"rank"}"#) == #"{"ok":true,"value":"Captain","generation":8}"#)
    }

    @Test("this machine's by-host files are renamed once to Foundation's names in the shared folder; a by-host file Foundation has is kept")
    func byHostFilesTakeFoundationsNames() throws {
        let machineID = "0123456789abcdef0123456789abcdef"
        let idFile = FileManager.default.temporaryDirectory.appendingPathComponent("machine-id-\(UUID().uuidString.prefix(8))").path
        try (machineID + "\n").write(toFile: idFile, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: idFile) }
        let daemon = try DaemonProcess(arguments: ["--machine-id-file", idFile], defaultPaths: true)
        #expect(daemon.terminate() == 0)
        let byHost = daemon.home + "/.config/ByHost/"
        try write(["volume": 7], to: byHost + "com.example.mine.\(machineID).plist")
        try write(["from": "defaultsd"], to: byHost + "com.example.both.\(machineID).plist")
        try write(["from": "foundation"], to: byHost + "com.example.both..plist")
        try write(["from": "another machine"], to: byHost + "com.example.mine.ffffffffffffffffffffffffffffffff.plist")

        try daemon.restart()
        #expect(daemon.waitForLog("renamed this machine's by-host files to the names Foundation's UserDefaults reads"))
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"get","domain":"com.example.mine","host":"current","key":"volume"}"#) == #"{"ok":true,"value":7,"generation":0}"#)
        #expect(try client.request(#"{"op":"get","domain":"com.example.both","host":"current","key":"from"}"#) == #"{"ok":true,"value":"foundation","generation":0}"#)
        #expect(try FileManager.default.contentsOfDirectory(atPath: byHost).sorted() == [
            "com.example.both..plist", "com.example.mine..plist", "com.example.mine.ffffffffffffffffffffffffffffffff.plist",
        ], "another machine's file stays as it is")
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: daemon.statePath + "/ByHost-com.example.both.\(machineID).plist.before-sharing")))
            == ["from": "defaultsd"], "the daemon's file is kept, not lost")

        // A by-host write lands under Foundation's name.
        #expect(try client.request(#"{"op":"set","domain":"com.example.mine","host":"current","key":"volume","value":8}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: byHost + "com.example.mine..plist"))) == ["volume": 8])
    }

    @Test("a domain file cut to zero bytes (a write in place under way) changes nothing; the write's end is taken in")
    func anEmptyFileIsAWriteInProgress() throws {
        let daemon = try DaemonProcess(arguments: ["--log-level", "debug"])
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"set","domain":"com.example.inplace","key":"rank","value":"Ensign"}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        let subscriber = try daemon.connect()
        #expect(try subscriber.request(#"{"op":"subscribe","domains":["com.example.inplace"]}"#).hasPrefix(#"{"ok":true"#))
        let path = daemon.storagePath + "/com.example.inplace.plist"

        // As Foundation writes: truncate, then (a moment later) write, in place.
        let fd = open(path, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        close(fd)
        #expect(daemon.waitForLog("a write in place under way"))
        #expect(try client.request(#"{"op":"get","domain":"com.example.inplace"}"#) == #"{"ok":true,"value":{"rank":"Ensign"},"generation":1}"#)
        try PropertyListFile.encode(["rank": "Captain"], format: .xml).write(to: URL(fileURLWithPath: path))
        let event = try JSONParser.parse(try subscriber.readEvent(timeout: 2))
        #expect(event["changes"] == ["rank": "Captain"], "the first event is the finished write, not an emptied domain")
        #expect(!daemon.storageListing().contains { $0.contains(".rejected-") } && !daemon.logText.contains("was not taken in"))
        #expect(!daemon.logText.contains("XDG_CONFIG_HOME"), "even at debug level, the environment is never logged")
    }
}
