import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// What survives the daemon: restarts, SIGTERM, file formats.
@Suite(.ownThreads) struct PersistenceTests {
    static let everyType = #"{"s":"Vulcan","i":-42,"r":7.0,"b":false,"d":{"$date":"2026-11-21T10:00:00Z"},"# +
        #""data":{"$data":"3q2+7w=="},"a":[1,2.5,true,"x"],"dict":{"inner":{"deep":1.0}}}"#

    @Test(arguments: ["xml", "binary"])
    func everyValueComesBackWithItsTypeAfterARestart(format: String) throws {
        let daemon = try DaemonProcess(arguments: ["--format", format])
        let client = try daemon.connect()
        try client.request(#"{"op":"apply","domain":"com.example.restart","set":\#(Self.everyType)}"#)
        try client.request(#"{"op":"set","domain":"com.example.restart","key":"i","value":43}"#)
        let before = try client.request(#"{"op":"get","domain":"com.example.restart"}"#)
        let answer = try JSONParser.parse(before)
        #expect(answer["generation"] == .integer(2))
        guard case .dictionary(var expected) = try WireValue.decode(JSONParser.parse(Self.everyType)) else {
            Issue.record("everyType is not a dictionary")
            return
        }
        expected["i"] = 43
        #expect(try WireValue.decode(try #require(answer["value"])) == .dictionary(expected))
        try daemon.restart()
        let after = try daemon.connect().request(#"{"op":"get","domain":"com.example.restart"}"#)
        #expect(after == before)
        let header = try FileHandle(forReadingFrom: URL(fileURLWithPath: daemon.storagePath + "/com.example.restart.plist")).read(upToCount: 8)
        #expect(header.map { String(decoding: $0, as: UTF8.self) } == (format == "xml" ? "<?xml ve" : "bplist00"))
    }

    @Test func binaryFilesKeepFractionalDatesAcrossRestarts() throws {
        let daemon = try DaemonProcess(arguments: ["--format", "binary"])
        try daemon.connect().request(#"{"op":"set","domain":"com.dates","key":"d","value":{"$date":"2026-11-21T10:00:00.250Z"}}"#)
        try daemon.restart()
        #expect(try daemon.connect().request(#"{"op":"get","domain":"com.dates","key":"d"}"#)
            == #"{"ok":true,"value":{"$date":"2026-11-21T10:00:00.250Z"},"generation":1}"#)
    }

    @Test func sigtermWritesPendingChangesAndExitsZero() throws {
        let daemon = try DaemonProcess(arguments: ["--coalesce-ms", "600000"])
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"com.term","key":"warp","value":true}"#)
        #expect(try daemon.storedValues("com.term") == nil)
        #expect(daemon.terminate() == 0)
        #expect(try daemon.storedValues("com.term") == ["warp": true])
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket is removed on exit")
        #expect(daemon.logText.contains("every write is on disk"))
    }

    @Test func generationsSurviveRestarts() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        for value in 1...3 { try client.request(#"{"op":"set","domain":"com.gen","key":"k","value":\#(value)}"#) }
        try daemon.restart()
        let again = try daemon.connect()
        #expect(try again.request(#"{"op":"subscribe","domains":["com.gen"]}"#) == #"{"ok":true,"generations":{"com.gen":3}}"#)
        #expect(try again.request(#"{"op":"set","domain":"com.gen","key":"k","value":4}"#) == #"{"ok":true,"generation":4}"#)
    }

    @Test func aTornFileAtLoadIsKeptAndReplacedNeverMoved() throws {
        let daemon = try DaemonProcess()
        let path = daemon.storagePath + "/com.torn.plist"
        try Data("<?xml version=\"1.0\"?><plist><dict><key>torn".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-5)], ofItemAtPath: path)
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"get","domain":"com.torn"}"#) == #"{"ok":true,"value":{},"generation":0}"#)
        #expect(FileManager.default.fileExists(atPath: path), "left in place")
        try client.request(#"{"op":"set","domain":"com.torn","key":"fresh","value":1}"#)
        try client.request(#"{"op":"synchronize"}"#)
        let kept = (try FileManager.default.contentsOfDirectory(atPath: daemon.statePath)).filter { $0.hasPrefix("com.torn.plist.corrupt-") }
        #expect(kept.count == 1, "\(kept)")
        #expect(try daemon.storedValues("com.torn") == ["fresh": 1])
        #expect(daemon.logText.contains("the file stays until the domain is next written"))
    }

    @Test func domainsAreLoadedOnFirstUseOnly() throws {
        let daemon = try DaemonProcess()
        for index in 0..<200 {
            let values: [String: PlistValue] = ["k": .integer(Int64(index))]
            try PropertyListFile.encode(values, format: .xml).write(to: URL(fileURLWithPath: daemon.storagePath + "/com.many\(index).plist"))
        }
        try daemon.restart()
        let client = try daemon.connect()
        #expect(try JSONParser.parse(try client.request(#"{"op":"stats"}"#))["domainsLoaded"] == .integer(0))
        #expect(try client.request(#"{"op":"get","domain":"com.many7","key":"k"}"#) == #"{"ok":true,"value":7,"generation":0}"#)
        #expect(try JSONParser.parse(try client.request(#"{"op":"stats"}"#))["domainsLoaded"] == .integer(1))
        let names = try JSONParser.parse(try client.request(#"{"op":"domains"}"#))["domains"]
        #expect(names == .array((0..<200).map { "com.many\($0)" }.sorted().map(JSON.string)))
    }
}
