import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Property lists made to hurt a reader, reaching the real daemon every way a property list can:
/// an `import` request, a hand edit of a loaded domain's file (and the restart after it), and a
/// Settings bundle's `Root.plist`. Each is refused with an error; the daemon answers `ping`
/// within a second throughout, and its memory stays under 256 MiB.
@Suite(.ownThreads) struct HostileFileTests {
    static let domain = "com.example.hostile"
    static let memoryCeilingKiB = 256 * 1024

    /// A million `(`, `{a=` 300,000 deep, 2^18 references to one 2^18-byte data object (0.5 MiB
    /// standing for 64 GiB), and 240 KB of `<!>` prolog items (a bundle page that once held the
    /// daemon's start for minutes).
    static let hostile: [(name: String, bytes: [UInt8])] = [
        ("a million (", Array(HostilePropertyLists.openArrays(1_000_000).utf8)),
        ("{a= 300,000 deep", Array(HostilePropertyLists.openDictionaries(300_000).utf8)),
        ("shared data", HostilePropertyLists.sharedData(count: 1 << 18)),
        ("<!> 80,000 times", Array(String(repeating: "<!>", count: 80_000).utf8)),
    ]

    /// `ping` on a fresh connection answers within a second.
    static func expectAlive(_ daemon: DaemonProcess, _ note: String) {
        do {
            let client = try daemon.connect()
            try client.send(#"{"op":"ping"}"#)
            #expect(try client.readResponse(timeout: 1) == #"{"ok":true}"#, "\(note)")
        } catch {
            Issue.record("the daemon did not answer ping after \(note): \(error)")
        }
        #expect(daemon.anonymousResidentKiB() < memoryCeilingKiB, "\(note)")
    }

    static func jsonString(_ bytes: [UInt8]) -> String {
        var writer = JSONWriter()
        writer.string(String(decoding: bytes, as: UTF8.self))
        return String(decoding: writer.bytes, as: UTF8.self)
    }

    @Test("import of each hostile text is invalid_plist")
    func importIsRefused() throws {
        // Lines long enough for the texts to reach the reader.
        let daemon = try DaemonProcess(arguments: ["--max-line-bytes", String(8 << 20)])
        let client = try daemon.connect()
        for (name, bytes) in Self.hostile {
            let answer = try JSONParser.parse(
                try client.request(#"{"op":"import","domain":"\#(Self.domain)","plist":\#(Self.jsonString(bytes))}"#, timeout: 10))
            #expect(answer["error"]?["code"] == .string("invalid_plist"), "\(name)")
            Self.expectAlive(daemon, name)
        }
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#) == #"{"ok":true,"value":{},"generation":0}"#)
    }

    @Test("a hostile hand edit leaves memory as it was, is kept aside, and the restart after it reads the last good state")
    func handEditIsNotTakenIn() throws {
        for (name, bytes) in Self.hostile {
            let daemon = try DaemonProcess()
            let client = try daemon.connect()
            #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Ensign"}"#) == #"{"ok":true,"generation":1}"#)
            #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
            let path = daemon.storagePath + "/" + Self.domain + ".plist"
            try Data(bytes).write(to: URL(fileURLWithPath: path + ".editing"))
            #expect(rename(path + ".editing", path) == 0)
            #expect(daemon.waitForLog("was not taken in"), "\(name)")
            Self.expectAlive(daemon, name)
            #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#)
                == #"{"ok":true,"value":{"rank":"Ensign"},"generation":1}"#, "\(name)")
            // The hostile file is kept aside, byte for byte, and the last good state put back in its
            // place: a restart reads it.
            #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
            let kept = daemon.storageListing().filter { $0.hasPrefix(Self.domain + ".plist.rejected-") }
            #expect(kept.count == 1 && FileManager.default.contents(atPath: daemon.storagePath + "/" + kept[0]) == Data(bytes), "\(name)")
            try daemon.restart()
            let again = try daemon.connect()
            let reread = try again.request(#"{"op":"get","domain":"\#(Self.domain)"}"#)
            #expect(reread == #"{"ok":true,"value":{"rank":"Ensign"},"generation":1}"#, "\(name)")
            Self.expectAlive(daemon, "\(name), restarted")
        }
    }

    @Test("a Settings bundle whose Root.plist and strings are hostile is read as unreadable, and the daemon starts with it installed")
    func hostileBundle() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        for (index, (_, bytes)) in Self.hostile.enumerated() {
            let bundle = root + "/com.example.hostile\(index)/Settings.bundle"
            try FileManager.default.createDirectory(atPath: bundle + "/en.lproj", withIntermediateDirectories: true)
            try Data(bytes).write(to: URL(fileURLWithPath: bundle + "/Root.plist"))
            try Data(bytes).write(to: URL(fileURLWithPath: bundle + "/en.lproj/Root.strings"))
        }
        let config = root + "/defaultsd.json"
        try #"{ "settingsBundleDirectories": ["\#(root)"] }"#.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", config])
        Self.expectAlive(daemon, "start with the bundles installed")
        let client = try daemon.connect()
        for (index, (name, _)) in Self.hostile.enumerated() {
            let answer = try JSONParser.parse(try client.request(
                #"{"op":"registerBundle","domain":"com.example.other\#(index)","path":"\#(root)/com.example.hostile\#(index)/Settings.bundle"}"#,
                timeout: 10))
            // Installed as a bundle that shows nothing: its diagnostics name the unreadable files.
            #expect(answer["ok"] == .bool(true) && answer["defaults"] == .object([:]), "\(name): \(answer)")
            #expect(answer["diagnostics"] == .integer(2), "\(name): \(answer)")
            Self.expectAlive(daemon, name)
        }
    }

    /// A domain raised past what a file may hold is kept in memory, and never written as a file
    /// the daemon could not read back: `synchronize` says why.
    /// A change that would take the domain's file past what a property-list file may be is
    /// refused when it is made, with `too_large`, even with the domain limit raised past it: the
    /// daemon never acknowledges what it could not write.
    @Test func aFileLargerThanTheReaderTakesIsRefusedWhenTheChangeIsMade() throws {
        let daemon = try DaemonProcess(arguments: ["--max-domain-bytes", String(64 << 20), "--max-line-bytes", String(32 << 20)])
        let client = try daemon.connect()
        let big = String(repeating: "x", count: 17 << 20)
        let answer = try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"big","value":"\#(big)"}"#, timeout: 30)
        #expect(answer.contains(#""code":"too_large""#) && answer.contains("more than the 16777216 a property-list file may be"), "\(answer)")
        #expect(try client.request(#"{"op":"synchronize"}"#, timeout: 30) == #"{"ok":true}"#)
        #expect(try daemon.storedValues(Self.domain) == nil)
        Self.expectAlive(daemon, "a domain too large for a file")
    }

    /// XML indents every line by its depth: 70 arrays nested 500 deep are 70 KB of JSON, well
    /// within the domain limit, and 17 MB as a file. The change is refused when it is made, and
    /// the domain's earlier value is still written.
    @Test func aDeeplyNestedValueWhoseFileWouldBeTooLargeIsRefused() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"small","value":1}"#) == #"{"ok":true,"generation":1}"#)
        let nested = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        let value = "[" + Array(repeating: nested, count: 70).joined(separator: ",") + "]"
        #expect(value.utf8.count < 100_000)
        let answer = try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"deep","value":\#(value)}"#, timeout: 30)
        #expect(answer.contains(#""code":"too_large""#) && answer.contains("a property-list file may be"), "\(answer)")
        #expect(try client.request(#"{"op":"synchronize"}"#, timeout: 30) == #"{"ok":true}"#)
        #expect(try daemon.storedValues(Self.domain) == ["small": 1])
        Self.expectAlive(daemon, "a nested value too large for a file")
    }

    /// NSGlobalDomain is in every app's search list: a refused file of its own (here a FIFO) fails
    /// requests for NSGlobalDomain, and the lookups of every other domain skip it, without
    /// reading it again each time, until it changes.
    @Test func aRefusedGlobalDomainFailsOnlyItsOwnRequests() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"own","value":1}"#) == #"{"ok":true,"generation":1}"#)
        let global = daemon.storagePath + "/.GlobalPreferences.plist"
        #expect(mkfifo(global, 0o600) == 0)
        defer { unlink(global) }
        // Made an hour ago: one that changed within the settle time may be a write under way, and is read again.
        let hourAgo = timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)
        var times = [hourAgo, hourAgo]
        #expect(utimensat(AT_FDCWD, global, &times, 0) == 0)
        for _ in 0..<3 {
            #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"own"}"#)
                == #"{"ok":true,"value":1,"domain":"\#(Self.domain)","layer":"persistent"}"#)
            #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"AppleLocale"}"#)
                == #"{"ok":true,"value":null,"domain":null,"layer":null}"#)
            let own = try client.request(#"{"op":"get","domain":"NSGlobalDomain"}"#)
            #expect(own.hasPrefix(#"{"ok":false,"error":{"code":"io_error""#) && own.contains("FIFO"), "\(own)")
        }
        // The log is read from the daemon's standard error as it comes: wait for the line, then count.
        #expect(daemon.waitForLog("domain file refused"))
        #expect(daemon.logOccurrences(of: "domain file refused") == 1, "refused once, not read again at each lookup: \(daemon.logText)")

        // Put right, it is read again and in force.
        unlink(global)
        try PropertyListFile.encode(["AppleLocale": "fr_FR"], format: .xml).write(to: URL(fileURLWithPath: global))
        #expect(try client.request(#"{"op":"lookup","domain":"\#(Self.domain)","key":"AppleLocale"}"#)
            == #"{"ok":true,"value":"fr_FR","domain":"NSGlobalDomain","layer":"persistent"}"#)
    }
}
