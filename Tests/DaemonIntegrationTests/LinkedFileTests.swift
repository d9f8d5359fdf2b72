import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Domain files as people really have them: a symbolic link into a dotfiles folder (stow,
/// home-manager), and links to things that are not files at all. A link is read and written
/// through and stays a link; anything but a regular file is refused at once, with `io_error`,
/// while every other connection is served.
@Suite(.ownThreads) struct LinkedFileTests {
    static let domain = "com.example.linked"

    func dotfiles() throws -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("dotfiles-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test("a domain file linked into a dotfiles folder is read and written through, and stays a link")
    func aLinkIsWrittenThrough() throws {
        let folder = try dotfiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = folder + "/" + Self.domain + ".plist"
        try PropertyListFile.encode(["rank": "Ensign"], format: .xml).write(to: URL(fileURLWithPath: target))
        let daemon = try DaemonProcess()
        let link = daemon.storagePath + "/" + Self.domain + ".plist"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)

        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#) == #"{"ok":true,"value":{"rank":"Ensign"},"generation":0}"#)
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Captain"}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#, timeout: 2) == #"{"ok":true}"#)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target, "the link stays a link")
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: target))) == ["rank": "Captain"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == [Self.domain + ".plist"], "no debris beside the target")

        // Emptied, the target holds an empty dictionary: the link is not left dangling.
        #expect(try client.request(#"{"op":"remove","domain":"\#(Self.domain)","key":"rank"}"#) == #"{"ok":true,"generation":2}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#, timeout: 2) == #"{"ok":true}"#)
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: link))) == [:])

        // A restart reads through the link, and a stop is prompt.
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Admiral"}"#) == #"{"ok":true,"generation":3}"#)
        let started = Date()
        #expect(daemon.terminate() == 0)
        #expect(Date().timeIntervalSince(started) < 5)
        try daemon.restart()
        #expect(try daemon.connect().request(#"{"op":"get","domain":"\#(Self.domain)","key":"rank"}"#) == #"{"ok":true,"value":"Admiral","generation":3}"#)
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target)
    }

    /// An edit made where the link leads (in the dotfiles folder, by an editor's rename-save
    /// there) is taken in while the daemon runs, as one made to the domain's own file is.
    @Test func anEditWhereALinkLeadsIsTakenIn() throws {
        let folder = try dotfiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let target = folder + "/" + Self.domain + ".plist"
        try PropertyListFile.encode(["rank": "Ensign"], format: .xml).write(to: URL(fileURLWithPath: target))
        let daemon = try DaemonProcess()
        try FileManager.default.createSymbolicLink(atPath: daemon.storagePath + "/" + Self.domain + ".plist", withDestinationPath: target)
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"subscribe","domains":["\#(Self.domain)"]}"#) == #"{"ok":true,"generations":{"\#(Self.domain)":0}}"#)

        try PropertyListFile.encode(["rank": "Commander"], format: .xml).write(to: URL(fileURLWithPath: folder + "/edit.tmp"))
        #expect(rename(folder + "/edit.tmp", target) == 0)
        #expect(try client.readEvent()
            == #"{"event":"didChange","domain":"\#(Self.domain)","generation":1,"changes":{"rank":"Commander"},"origin":{"source":"file"}}"#)
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","key":"rank"}"#) == #"{"ok":true,"value":"Commander","generation":1}"#)
        // The daemon's own writes through the link are not read back as edits.
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Captain"}"#) == #"{"ok":true,"generation":2}"#)
        #expect(try client.readEvent().hasPrefix(#"{"event":"didChange","domain":"\#(Self.domain)","generation":2,"changes":{"rank":"Captain"},"origin":{"pid""#))
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try client.request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","key":"rank"}"#) == #"{"ok":true,"value":"Captain","generation":2}"#)
    }

    /// Links into more folders than are watched (256): the first 256 folders are watched, the
    /// rest are not, and the log says so once.
    @Test func theFoldersLinksLeadIntoAreWatchedUpToTheirLimit() throws {
        let folder = try dotfiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let daemon = try DaemonProcess()
        let before = BundleWatchTests.inotifyWatchCount(of: daemon.process.processIdentifier)
        let client = try daemon.connect()
        for index in 0..<260 {
            let own = folder + "/\(index)"
            try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true)
            let target = own + "/com.example.linked\(index).plist"
            try PropertyListFile.encode(["index": .integer(Int64(index))], format: .xml).write(to: URL(fileURLWithPath: target))
            try FileManager.default.createSymbolicLink(atPath: daemon.storagePath + "/com.example.linked\(index).plist", withDestinationPath: target)
            #expect(try client.request(#"{"op":"subscribe","domains":["com.example.linked\#(index)"]}"#).hasPrefix(#"{"ok":true"#))
        }
        #expect(try client.request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
        let after = BundleWatchTests.inotifyWatchCount(of: daemon.process.processIdentifier)
        #expect(after - before == 256)
        #expect(daemon.logOccurrences(of: "links into more folders than are watched") == 1)
    }

    /// A read-only file system mounted for the test, as a home-manager link into `/nix/store`
    /// meets one; root only, so that file modes cannot stand in for it.
    struct ReadOnlyStore {
        /// Whether this machine lets the tests mount one: root, and allowed to mount (a container
        /// without the capability is not), found by mounting and unmounting one.
        static let canMount: Bool = {
            guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/mount") else { return false }
            guard let probe = try? ReadOnlyStore(files: [:]) else { return false }
            probe.remove()
            return true
        }()
        let path: String

        /// Mounts a small tmpfs holding `files`, then makes it read-only.
        init(files: [String: Data]) throws {
            path = FileManager.default.temporaryDirectory.appendingPathComponent("read-only-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            try Self.mount(["-t", "tmpfs", "-o", "size=1m,mode=0755", "tmpfs", path])
            for (name, data) in files { try data.write(to: URL(fileURLWithPath: path + "/" + name)) }
            try Self.mount(["-o", "remount,ro", path])
        }

        func remove() {
            try? Self.mount(["-u", path])
            try? FileManager.default.removeItem(atPath: path)
        }

        private static func mount(_ arguments: [String]) throws {
            let process = Process()
            let unmounting = arguments.first == "-u"
            process.executableURL = URL(fileURLWithPath: unmounting ? "/usr/bin/umount" : "/usr/bin/mount")
            process.arguments = unmounting ? Array(arguments.dropFirst()) : arguments
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw DefaultsError(.ioError, "mount \(arguments) failed") }
        }
    }

    @Test("a link into a read-only store: writes answer io_error, the domain is set aside after a few tries, and stop is prompt",
          .enabled(if: ReadOnlyStore.canMount, "mounting a read-only file system needs root"))
    func aLinkIntoAReadOnlyStore() throws {
        let store = try ReadOnlyStore(files: [Self.domain + ".plist": try PropertyListFile.encode(["rank": "Ensign"], format: .xml)])
        defer { store.remove() }
        let target = store.path + "/" + Self.domain + ".plist"
        let daemon = try DaemonProcess()
        let link = daemon.storagePath + "/" + Self.domain + ".plist"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)

        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","key":"rank"}"#) == #"{"ok":true,"value":"Ensign","generation":0}"#)
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Captain"}"#) == #"{"ok":true,"generation":1}"#)
        let answer = try JSONParser.parse(try client.request(#"{"op":"synchronize"}"#, timeout: 2))
        #expect(answer["error"]?["code"] == .string("io_error"), "\(answer)")
        if case .string(let message)? = answer["error"]?["message"] { #expect(message.contains("Read-only file system"), "\(message)") }

        #expect(daemon.waitForLog("domain set aside after failed writes", timeout: 5), "given up on the clock, not retried forever")
        #expect(daemon.logText.components(separatedBy: "could not write domain").count == 2, "the failure is logged once")
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)","key":"rank"}"#) == #"{"ok":true,"value":"Captain","generation":1}"#,
                "the value stays in memory")
        let other = try daemon.connect()
        try other.send(#"{"op":"ping"}"#)
        #expect(try other.readResponse(timeout: 1) == #"{"ok":true}"#)
        let again = try JSONParser.parse(try client.request(#"{"op":"synchronize"}"#, timeout: 1))
        #expect(again["error"]?["code"] == .string("io_error"), "synchronize tries once more, and says so at once")

        let started = Date()
        _ = daemon.terminate()
        #expect(Date().timeIntervalSince(started) < 5, "stop finishes")
        #expect(daemon.logText.contains("final flush failed"))
        #expect(daemon.logText.contains("defaultsd stopped; the writes that failed are named above and are not on disk"))
        #expect(!daemon.logText.contains("every write is on disk"))
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: target))) == ["rank": "Ensign"])
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: link) == target, "the link stays a link")
        let debris = try FileManager.default.contentsOfDirectory(atPath: daemon.storagePath).filter { $0.contains(Self.domain) && !$0.hasSuffix(".plist") }
        #expect(debris.isEmpty, "no temporary file left: \(debris)")
    }

    @Test("links to a FIFO, /dev/zero and a folder are refused at once with io_error; ping is answered meanwhile")
    func linksToWhatIsNotAFileAreRefused() throws {
        let folder = try dotfiles()
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mkfifo(folder + "/fifo", 0o600) == 0)
        let daemon = try DaemonProcess()
        let targets = [("com.example.fifo", folder + "/fifo", "a FIFO"), ("com.example.zero", "/dev/zero", "a character device"),
                       ("com.example.folder", folder, "a directory")]
        for (domain, target, _) in targets {
            try FileManager.default.createSymbolicLink(atPath: daemon.storagePath + "/" + domain + ".plist", withDestinationPath: target)
        }
        let client = try daemon.connect()
        for (domain, _, kind) in targets {
            let answer = try JSONParser.parse(try client.request(#"{"op":"get","domain":"\#(domain)"}"#, timeout: 1))
            #expect(answer["error"]?["code"] == .string("io_error"), "\(domain): \(answer)")
            guard case .string(let message)? = answer["error"]?["message"] else { continue }
            #expect(message.contains("is \(kind), not a regular file"), "\(message)")
            let other = try daemon.connect()
            try other.send(#"{"op":"ping"}"#)
            #expect(try other.readResponse(timeout: 1) == #"{"ok":true}"#)
        }
        #expect(daemon.anonymousResidentKiB() < 256 * 1024)
    }

    @Test("a FIFO put in place of a loaded domain's file is not read, the domain stays as it was, and its file comes back")
    func aFIFOHandEdit() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Ensign"}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        let path = daemon.storagePath + "/" + Self.domain + ".plist"
        #expect(mkfifo(path + ".editing", 0o600) == 0)
        #expect(rename(path + ".editing", path) == 0)
        #expect(daemon.waitForLog("was not taken in"))
        let other = try daemon.connect()
        try other.send(#"{"op":"ping"}"#)
        #expect(try other.readResponse(timeout: 1) == #"{"ok":true}"#)
        #expect(try client.request(#"{"op":"get","domain":"\#(Self.domain)"}"#) == #"{"ok":true,"value":{"rank":"Ensign"},"generation":1}"#)
        // The FIFO is kept aside, and the last good state is a regular file at the path again.
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
        #expect(try daemon.storedValues(Self.domain) == ["rank": .string("Ensign")])
        #expect(daemon.storageListing().contains { $0.hasPrefix(Self.domain + ".plist.rejected-") })
    }
}
