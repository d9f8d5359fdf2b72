import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Reading domains that do not exist leaves nothing behind: no domain held in memory, no entry
/// in the generation ledger, no file.
@Suite(.ownThreads) struct ReadOnlyRequestTests {
    @Test("5,000 gets of domains that do not exist keep no domain in memory and nothing on disk")
    func readsOfMissingDomainsLeaveNothing() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"set","domain":"com.example.kept","key":"k","value":1}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        // The change journal's folder comes with its first batch, up to a second after a flush.
        let before = daemon.storageListingWithoutJournal()
        let ledger = daemon.statePath + "/.defaultsd-generations.plist"
        let ledgerBefore = FileManager.default.contents(atPath: ledger)

        let count = 5_000
        try client.send(bytes: Array((0..<count).map { #"{"op":"get","domain":"com.example.missing\#($0)","key":"k"}"# + "\n" }.joined().utf8))
        for _ in 0..<count { #expect(try client.readResponse() == #"{"ok":true,"value":null,"generation":0}"#) }
        let stats = try JSONParser.parse(try client.request(#"{"op":"stats"}"#))
        #expect(stats["domainsLoaded"] == .integer(1), "\(stats)")

        // A write elsewhere makes the daemon write its ledger: it holds the domain written, and no other.
        #expect(try client.request(#"{"op":"set","domain":"com.example.kept","key":"k","value":2}"#) == #"{"ok":true,"generation":2}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(daemon.storageListingWithoutJournal() == before)
        let written = try PropertyListFile.decode(try #require(FileManager.default.contents(atPath: ledger)))
        #expect(Set(written.keys) == ["com.example.kept"])
        #expect((FileManager.default.contents(atPath: ledger)?.count ?? 0) <= (ledgerBefore?.count ?? 0) + 16)
        #expect(daemon.terminate() == 0)
        #expect(Set(try PropertyListFile.decode(try #require(FileManager.default.contents(atPath: ledger))).keys) == ["com.example.kept"])
    }

    @Test("a subscriber to a domain that does not exist yet sees the file made for it by hand")
    func aSubscribedMissingDomainIsWatched() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"subscribe","domains":["com.example.later"]}"#) == #"{"ok":true,"generations":{"com.example.later":0}}"#)
        let path = daemon.storagePath + "/com.example.later.plist"
        try PropertyListFile.encode(["rank": "Ensign"], format: .xml).write(to: URL(fileURLWithPath: path + ".editing"))
        #expect(rename(path + ".editing", path) == 0)
        let event = try JSONParser.parse(try client.readEvent())
        #expect(event["domain"] == "com.example.later" && event["changes"] == .object(["rank": "Ensign"]))
    }
}
