import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Domain files edited outside the daemon while it runs: each kind of edit is taken in as one
/// `didChange` with origin `{"source":"file"}`, and nothing is lost.
@Suite(.ownThreads) struct HandEditTests {
    static let domain = "com.example.hand"

    /// A daemon with `com.example.hand` loaded (rank Ensign, warpFactor 5, on disk), and a
    /// connection subscribed to it.
    func daemonWithDomain(arguments: [String] = []) throws -> (DaemonProcess, LineSocket) {
        let daemon = try DaemonProcess(arguments: arguments)
        let client = try daemon.connect()
        try client.request(#"{"op":"apply","domain":"\#(Self.domain)","set":{"rank":"Ensign","warpFactor":5}}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try client.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#)
            == #"{"ok":true,"generations":{"\#(Self.domain)":1}}"#)
        return (daemon, client)
    }

    func path(_ daemon: DaemonProcess, _ domain: String = domain) -> String { daemon.storagePath + "/" + domain + ".plist" }

    /// An editor's save: a new file beside the old one, renamed over it.
    func renameOver(_ path: String, _ data: Data) throws {
        let temporary = path + ".editing"
        try data.write(to: URL(fileURLWithPath: temporary))
        #expect(rename(temporary, path) == 0)
    }

    /// A save in place: the same file truncated (`O_TRUNC`) and written.
    func writeInPlace(_ path: String, _ data: Data) {
        let fd = open(path, O_WRONLY | O_TRUNC | O_CREAT, 0o600)
        #expect(fd >= 0)
        data.withUnsafeBytes { _ = write(fd, $0.baseAddress!, $0.count) }
        close(fd)
    }

    func xml(_ values: [String: PlistValue]) throws -> Data { try PropertyListFile.encode(values, format: .xml) }

    func event(_ generation: Int, _ changes: String, domain: String = domain) -> String {
        #"{"event":"didChange","domain":"\#(domain)","generation":\#(generation),"changes":\#(changes),"origin":{"source":"file"}}"#
    }

    @Test func anEditorsSaveRenamedOverTheFileIsOneChangeFromTheFile() throws {
        let (daemon, client) = try daemonWithDomain()
        try renameOver(path(daemon), try xml(["rank": .string("Captain"), "warpFactor": .integer(5), "shields": .bool(true)]))
        #expect(try client.readEvent() == event(2, #"{"rank":"Captain","shields":true}"#))
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#)
            == #"{"ok":true,"value":{"rank":"Captain","shields":true,"warpFactor":5},"generation":2}"#)
        // The daemon writes the domain back in its own format; that write is no news.
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try daemon.storedValues(Self.domain) == ["rank": .string("Captain"), "shields": .bool(true), "warpFactor": .integer(5)])
    }

    @Test func aSaveInPlaceIsTakenInOnceTheFileIsClosed() throws {
        let (daemon, client) = try daemonWithDomain()
        writeInPlace(path(daemon), try xml(["rank": .string("Commander"), "warpFactor": .real(9.5)]))
        #expect(try client.readEvent() == event(2, #"{"rank":"Commander","warpFactor":9.5}"#))
    }

    @Test func aBinaryFileIsAcceptedAsWellAsXML() throws {
        let (daemon, client) = try daemonWithDomain()
        try renameOver(path(daemon), try PropertyListFile.encode(
            ["rank": .string("Ensign"), "warpFactor": .integer(5), "stardate": .date(Date(timeIntervalSince1970: 1_000_000_000))],
            format: .binary))
        #expect(try client.readEvent() == event(2, #"{"stardate":{"$date":"2001-09-09T01:46:40Z"}}"#))
    }

    @Test func aCreatedFileIsTakenInWhenItsDomainIsLoaded() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        // Asked for while it has no file: loaded, and empty.
        #expect(try client.request(#"{"op":"get","domain":"com.example.new"}"#) == #"{"ok":true,"value":{},"generation":0}"#)
        try client.request(#"{"op":"subscribe","domains":["com.example.new"]}"#)
        writeInPlace(path(daemon, "com.example.new"), try xml(["created": .string("by hand")]))
        #expect(try client.readEvent() == event(1, #"{"created":"by hand"}"#, domain: "com.example.new"))
    }

    @Test func aDeletedFileEmptiesTheDomain() throws {
        let (daemon, client) = try daemonWithDomain()
        #expect(unlink(path(daemon)) == 0)
        #expect(try client.readEvent() == event(2, #"{"rank":null,"warpFactor":null}"#))
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#) == #"{"ok":true,"value":{},"generation":2}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try daemon.storedValues(Self.domain) == nil, "the domain stays without a file")
    }

    @Test func aFileThatDoesNotParseLeavesMemoryAsItWasAndIsKeptBeforeTheNextWrite() throws {
        let (daemon, client) = try daemonWithDomain()
        let garbage = Data("<?xml version=\"1.0\"?><plist><dict><key>rank</key>".utf8)
        try renameOver(path(daemon), garbage)
        #expect(daemon.waitForLog("was not taken in"))
        #expect(daemon.logText.contains("file=\(path(daemon))"))
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#)
            == #"{"ok":true,"value":{"rank":"Ensign","warpFactor":5},"generation":1}"#)
        #expect(client.pendingEvents.isEmpty)
        // The next write keeps the person's file aside, byte for byte, then writes the domain.
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":6}"#)
            == #"{"ok":true,"generation":2}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        let kept = daemon.storageListing().filter { $0.hasPrefix(Self.domain + ".plist.rejected-") }
        #expect(kept.count == 1)
        #expect(FileManager.default.contents(atPath: daemon.storagePath + "/" + (kept.first ?? "")) == garbage)
        #expect(try daemon.storedValues(Self.domain) == ["rank": .string("Ensign"), "warpFactor": .integer(6)])
    }

    /// A file that does not parse is judged only after it has stayed so for a second: a valid save
    /// before then is taken in, and nothing is kept aside.
    @Test func aValidSaveSoonAfterAnUnparseableOneIsTakenIn() throws {
        let (daemon, client) = try daemonWithDomain(arguments: ["--log-level", "debug"])
        try renameOver(path(daemon), Data("not a property list".utf8))
        #expect(daemon.waitForLog("cannot be taken in as it stands"))
        try renameOver(path(daemon), try xml(["rank": .string("Admiral"), "warpFactor": .integer(5)]))
        #expect(try client.readEvent() == event(2, #"{"rank":"Admiral"}"#))
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(!daemon.storageListing().contains { $0.contains(".rejected-") }, "a fixed file leaves nothing aside")
        #expect(!daemon.logText.contains("was not taken in"))
    }

    @Test func aFileTheStoreRefusesIsNotTakenIn() throws {
        let (daemon, client) = try daemonWithDomain(arguments: ["--max-domain-bytes", "1024"])
        try renameOver(path(daemon), try xml(["rank": .string(String(repeating: "x", count: 2000)), "warpFactor": .integer(5)]))
        #expect(daemon.waitForLog("was not taken in"))
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","key":"rank"}"#) == #"{"ok":true,"value":"Ensign","generation":1}"#)
    }

    @Test func theDaemonsOwnWritesCauseNoEvent() throws {
        // Every set is written at once, so the daemon's files keep arriving while memory has
        // already moved on: each one taken for an edit would undo the sets after it.
        let (daemon, client) = try daemonWithDomain(arguments: ["--coalesce-ms", "0"])
        let other = try daemon.connect()
        try client.request(#"{"op":"subscribe","all":true}"#)
        for warp in 6...105 {
            try other.request(#"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":\#(warp)}"#)
        }
        #expect(try other.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        // A hand edit of another loaded domain after those writes: its event comes after any they
        // could have caused.
        try other.request(#"{"op":"set","domain":"com.example.marker","key":"k","value":1}"#)
        #expect(try other.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        try renameOver(path(daemon, "com.example.marker"), try xml(["k": .integer(2)]))
        var events: [String] = []
        while !(events.last ?? "").contains(#""source":"file""#) { events.append(try client.readEvent()) }
        #expect(events.last == event(2, #"{"k":2}"#, domain: "com.example.marker"))
        #expect(events.dropLast().allSatisfy { !$0.contains(#""source""#) }, "\(events.filter { $0.contains("source") })")
        #expect(events.count == 102, "one event per set, then the edit")
        #expect(try other.request(#"{"op":"get","domain":"\#(Self.domain)","key":"warpFactor"}"#) == #"{"ok":true,"value":105,"generation":101}"#)
        #expect(try daemon.storedValues(Self.domain)?["warpFactor"] == .integer(105))
    }

    @Test func aBurstOfSavesBecomesFewEventsAndTheLastStateWins() throws {
        let (daemon, client) = try daemonWithDomain()
        for warp in 1...40 { writeInPlace(path(daemon), try xml(["rank": .string("Ensign"), "warpFactor": .integer(Int64(warp))])) }
        var events: [String] = []
        while !(events.last ?? "").contains(#""warpFactor":40"#) { events.append(try client.readEvent()) }
        #expect(events.count <= 10, "\(events.count) events for 40 saves")
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","key":"warpFactor"}"#).contains(#""value":40"#))
    }

    @Test func temporaryFilesLeftByACrashAreRemovedAtStart() throws {
        let first = try DaemonProcess()
        let client = try first.connect()
        try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"k","value":1}"#)
        try client.request(#"{"op":"synchronize"}"#)
        first.kill()
        try Data("half a file".utf8).write(to: URL(fileURLWithPath: first.storagePath + "/.defaultsd-tmp-crashed1"))
        let second = try DaemonProcess(reusing: first)
        #expect(!second.storageListing().contains(".defaultsd-tmp-crashed1"))
        #expect(second.logText.contains("removed temporary files left by an earlier run"))
        #expect(try second.connect().request(#"{"op":"get","domain":"\#(Self.domain)","key":"k"}"#).contains(#""value":1"#))
    }
}
