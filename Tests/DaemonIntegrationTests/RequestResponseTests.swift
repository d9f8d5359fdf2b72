import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Reads and writes through the real daemon, comparing whole response lines.
@Suite(.ownThreads) struct RequestResponseTests {
    @Test func setAndGetEveryType() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let values: [(String, String)] = [
            ("string", #""Vulcan \"quoted\" ✓""#),
            ("integer", "-9223372036854775808"),
            ("real", "5.0"),
            ("realExponent", "1e-05"),
            ("bool", "true"),
            ("date", #"{"$date":"2026-11-21T10:00:00.250Z"}"#),
            ("data", #"{"$data":"AAEC/w=="}"#),
            ("array", #"[1,1.0,false,"1",[]]"#),
            ("dictionary", #"{"nested":{"deep":2.5},"x":1}"#),
            ("wrapped", #"{"$dict":{"$date":"a key, not a date"}}"#),
        ]
        for (index, (key, json)) in values.enumerated() {
            let answer = try client.request(#"{"id":\#(index),"op":"set","domain":"com.example.types","key":"\#(key)","value":\#(json)}"#)
            #expect(answer == #"{"id":\#(index),"ok":true,"generation":\#(index + 1)}"#)
        }
        for (key, json) in values {
            let answer = try client.request(#"{"op":"get","domain":"com.example.types","key":"\#(key)"}"#)
            #expect(answer == #"{"ok":true,"value":\#(json),"generation":10}"#)
        }
        let whole = try client.request(#"{"op":"get","domain":"com.example.types"}"#)
        let expected = values.sorted { $0.0 < $1.0 }.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",")
        #expect(whole == #"{"ok":true,"value":{\#(expected)},"generation":10}"#)
        #expect(try client.request(#"{"op":"get","domain":"com.example.types","key":"absent"}"#)
            == #"{"ok":true,"value":null,"generation":10}"#)
        #expect(try client.request(#"{"op":"get","domain":"com.example.never"}"#) == #"{"ok":true,"value":{},"generation":0}"#)
    }

    /// The benchmark's way of reading: pipelined answers taken in order, each checked by its
    /// first bytes, and the ordinary reads still in step after them.
    @Test func linesCheckedByTheirFirstBytesKeepTheirOrder() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let ok = Array(#"{"ok":true"#.utf8)
        let pipelined = #"{"op":"ping"}"# + "\n" + #"{"op":"nope"}"# + "\n" + #"{"id":3,"op":"ping"}"# + "\n"
        try client.send(bytes: Array(pipelined.utf8))
        #expect(try client.nextLine(hasPrefix: ok))
        #expect(try !client.nextLine(hasPrefix: ok), "the unknown op's error")
        #expect(try client.readLine() == #"{"id":3,"ok":true}"#)
        #expect(try client.request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
    }

    @Test func aWriteIsVisibleAtOnceOnAnotherConnection() throws {
        let daemon = try DaemonProcess(arguments: ["--coalesce-ms", "60000"])
        let writer = try daemon.connect()
        let reader = try daemon.connect()
        try writer.request(#"{"op":"set","domain":"com.x","key":"k","value":1.5}"#)
        #expect(try reader.request(#"{"op":"get","domain":"com.x","key":"k"}"#) == #"{"ok":true,"value":1.5,"generation":1}"#)
        #expect(try daemon.storedValues("com.x") == nil, "nothing is written before the coalescing delay")
    }

    @Test func synchronizeLeavesTheNewValueOnDisk() throws {
        let daemon = try DaemonProcess(arguments: ["--coalesce-ms", "60000"])
        let client = try daemon.connect()
        try client.request(#"{"op":"set","domain":"com.example.sync","key":"warpFactor","value":7}"#)
        try client.request(#"{"op":"set","domain":"NSGlobalDomain","key":"AppleLocale","value":"en_GB"}"#)
        #expect(try client.request(#"{"id":"s","op":"synchronize"}"#) == #"{"id":"s","ok":true}"#)
        #expect(try daemon.storedValues("com.example.sync") == ["warpFactor": 7])
        #expect(try daemon.storedValues("NSGlobalDomain") == ["AppleLocale": "en_GB"])
        // The change journal's folder comes with its first batch, up to a second after the flush (ChangeJournalTests).
        #expect(daemon.storageListingWithoutJournal() == [".GlobalPreferences.plist", ".defaultsd-generations.plist", "ByHost", "com.example.sync.plist"])
        let attributes = try FileManager.default.attributesOfItem(atPath: daemon.storagePath + "/com.example.sync.plist")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let directory = try FileManager.default.attributesOfItem(atPath: daemon.storagePath)
        #expect((directory[.posixPermissions] as? NSNumber)?.intValue == 0o700)
    }

    @Test func applyRemoveReplaceDeleteAndDomains() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"apply","domain":"com.a","set":{"x":1,"y":2,"z":3}}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"apply","domain":"com.a","set":{"x":10},"remove":["y"]}"#) == #"{"ok":true,"generation":2}"#)
        #expect(try client.request(#"{"op":"remove","domain":"com.a","key":"z"}"#) == #"{"ok":true,"generation":3}"#)
        #expect(try client.request(#"{"op":"remove","domain":"com.a","key":"z"}"#) == #"{"ok":true,"generation":3}"#)
        #expect(try client.request(#"{"op":"get","domain":"com.a"}"#) == #"{"ok":true,"value":{"x":10},"generation":3}"#)
        #expect(try client.request(#"{"op":"replaceDomain","domain":"com.b","values":{"n":1}}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"domains"}"#) == #"{"ok":true,"domains":["com.a","com.b"]}"#)
        #expect(try client.request(#"{"op":"deleteDomain","domain":"com.a"}"#) == #"{"ok":true,"existed":true,"generation":4}"#)
        #expect(try client.request(#"{"op":"deleteDomain","domain":"com.a"}"#) == #"{"ok":true,"existed":false,"generation":4}"#)
        try client.request(#"{"op":"synchronize"}"#)
        #expect(try client.request(#"{"op":"domains"}"#) == #"{"ok":true,"domains":["com.b"]}"#)
        #expect(daemon.storageListingWithoutJournal() == [".defaultsd-generations.plist", "ByHost", "com.b.plist"])
    }

    @Test func registerAndLookupFollowTheSearchList() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        try client.request(#"{"op":"hello","client":"bridge","appDomain":"com.example.bridge"}"#)
        try client.request(#"{"op":"apply","domain":"com.example.bridge","set":{"warpFactor":7}}"#)
        try client.request(#"{"op":"apply","domain":"group.example.fleet","set":{"warpFactor":9,"fleet":"Starfleet"}}"#)
        try client.request(#"{"op":"apply","domain":"NSGlobalDomain","set":{"AppleLocale":"en_GB","fleet":"global"}}"#)
        #expect(try client.request(#"{"op":"register","defaults":{"warpFactor":5,"favoriteAlien":"Vulcan"}}"#) == #"{"ok":true,"count":2}"#)
        let suites = #""suites":["group.example.fleet"]"#
        #expect(try client.request(#"{"op":"lookup","key":"warpFactor",\#(suites)}"#) == #"{"ok":true,"value":7,"domain":"com.example.bridge","layer":"persistent"}"#)
        #expect(try client.request(#"{"op":"lookup","key":"fleet",\#(suites)}"#) == #"{"ok":true,"value":"Starfleet","domain":"group.example.fleet","layer":"persistent"}"#)
        #expect(try client.request(#"{"op":"lookup","key":"fleet"}"#) == #"{"ok":true,"value":"global","domain":"NSGlobalDomain","layer":"persistent"}"#)
        #expect(try client.request(#"{"op":"lookup","key":"favoriteAlien"}"#) == #"{"ok":true,"value":"Vulcan","domain":"NSRegistrationDomain","layer":"registration"}"#)
        #expect(try client.request(#"{"op":"lookup","key":"nothing"}"#) == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
        #expect(try client.request(#"{"op":"lookup","key":"warpFactor","domain":"com.other"}"#) == #"{"ok":true,"value":5,"domain":"NSRegistrationDomain","layer":"registration"}"#)
        // The registration domain belongs to the connection that registered it.
        let other = try daemon.connect()
        #expect(try other.request(#"{"op":"lookup","key":"favoriteAlien","domain":"com.example.bridge"}"#) == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
    }

    @Test func exportAndImportAreXMLPropertyLists() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        try client.request(#"{"op":"apply","domain":"com.src","set":{"i":1,"r":1.0,"b":true,"s":"x"}}"#)
        let exported = try JSONParser.parse(try client.request(#"{"op":"export","domain":"com.src"}"#))
        guard case .string(let plist)? = exported["plist"] else {
            Issue.record("no plist in \(exported)")
            return
        }
        #expect(plist.hasPrefix("<?xml"))
        #expect(plist.contains("<key>r</key>\n\t<real>1</real>"))
        var request = JSONWriter()
        request.beginObject(); request.key("op"); request.string("import")
        request.key("domain"); request.string("com.dst"); request.key("plist"); request.string(plist); request.endObject()
        #expect(try client.request(String(decoding: request.bytes, as: UTF8.self)) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"get","domain":"com.dst"}"#) == #"{"ok":true,"value":{"b":true,"i":1,"r":1.0,"s":"x"},"generation":1}"#)
    }

    @Test func helloPingAndStats() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"id":1,"op":"hello","client":"test"}"#)
            == #"{"id":1,"ok":true,"protocol":1,"server":"defaultsd 0.1.0","connection":1,"pid":\#(daemon.pid)}"#)
        #expect(try client.request(#"{"id":[1,"x"],"op":"ping"}"#) == #"{"id":[1,"x"],"ok":true}"#)
        let stats = try JSONParser.parse(try client.request(#"{"op":"stats"}"#))
        #expect(stats["connections"] == .integer(1))
        #expect(stats["requests"] == .integer(3))
        #expect(stats["pid"] == .integer(Int64(daemon.pid)))
    }

    @Test func aHalfClosedConnectionStillGetsItsAnswers() throws {
        let daemon = try DaemonProcess(arguments: ["--coalesce-ms", "60000"])
        let client = try daemon.connect()
        try client.send(#"{"op":"set","domain":"com.x","key":"k","value":1}"# + "\n" + #"{"op":"synchronize"}"# + "\n" + #"{"op":"ping"}"#)
        client.shutdownWrite()
        #expect(try client.readLine() == #"{"ok":true,"generation":1}"#)
        #expect(try client.readLine() == #"{"ok":true}"#)
        #expect(try client.readLine() == #"{"ok":true}"#)
        #expect(throws: LineSocket.Failure.self) { try client.readLine(timeout: 5) }
        #expect(try daemon.storedValues("com.x") == ["k": 1])
    }
}
