import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// The real `defaults` given a property-list file's path in a domain's place, as macOS's takes
/// one. A file outside the storage folder is read and written by `defaults` itself, with no
/// daemon (every run here but the last test's names a socket nothing listens on): absolute, `~`,
/// relative, with or without `.plist`; XML, binary and old-style text; written back atomically
/// in its format; a file that is no property list is refused and left byte for byte. A path in
/// the storage folder is its domain, changed through the real daemon.
@Suite(.ownThreads) struct PlistPathCommandTests {
    /// A folder of files to edit and a private home beside them; no daemon.
    final class Scratch {
        let folder: String
        let home: String
        let environment: [String: String]
        static let socket = "/nonexistent/defaultsd/socket"

        init() throws {
            folder = FileManager.default.temporaryDirectory.appendingPathComponent("plist-paths-\(UUID().uuidString.prefix(8))").path
            home = folder + "/home"
            try FileManager.default.createDirectory(atPath: home + "/prefs", withIntermediateDirectories: true)
            environment = TestEnvironment.isolated(home: home).merging(["DEFAULTSD_SOCKET": Scratch.socket]) { $1 }
        }

        deinit { try? FileManager.default.removeItem(atPath: folder) }

        func run(_ arguments: String..., directory: String? = nil, input: String? = nil) throws -> DefaultsCommandTests.Result {
            try DefaultsCommandTests.run(arguments, in: environment, directory: directory, input: input)
        }

        func put(_ data: Data, _ name: String) throws { try data.write(to: URL(fileURLWithPath: folder + "/" + name)) }
        func bytes(_ name: String) -> Data? { FileManager.default.contents(atPath: folder + "/" + name) }
        func values(_ name: String) throws -> [String: PlistValue] { try PropertyListFile.decode(bytes(name) ?? Data()) }
        func listing(_ subfolder: String = "") -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder + subfolder)) ?? []).sorted()
        }
        /// The file's inode and permission bits, the link followed.
        func status(_ name: String) -> (inode: UInt64, mode: mode_t) {
            var status = stat()
            _ = stat(folder + "/" + name, &status)
            return (UInt64(status.st_ino), status.st_mode & 0o7777)
        }
        func isLink(_ name: String) -> Bool {
            var status = stat()
            return lstat(folder + "/" + name, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK
        }
    }

    static func succeeded(_ result: DefaultsCommandTests.Result) -> Bool { result.status == 0 && result.out.isEmpty && result.err.isEmpty }

    @Test func everyFormOfAPathNamesTheSameFile() throws {
        let scratch = try Scratch()
        let file = scratch.home + "/prefs/com.example.tilde.plist"
        #expect(Self.succeeded(try scratch.run("write", "~/prefs/com.example.tilde", "warpFactor", "-int", "5")))
        #expect(FileManager.default.contents(atPath: file)?.prefix(8) == Data("bplist00".utf8), "a new file is binary, as on macOS")
        for word in ["~/prefs/com.example.tilde", "~/prefs/com.example.tilde.plist", file, String(file.dropLast(6))] {
            let read = try scratch.run("read", word)
            #expect(read.status == 0 && read.out == "{\n    warpFactor = 5;\n}\n", "\(word): \(read)")
        }
        #expect(try scratch.run("read", "prefs/com.example.tilde", "warpFactor", directory: scratch.home).out == "5\n")
        #expect(try scratch.run("read", "./prefs/com.example.tilde.plist", "warpFactor", directory: scratch.home).out == "5\n")
        #expect(try scratch.run("read-type", "~/prefs/com.example.tilde", "warpFactor").out == "Type is integer\n")
        // As on macOS, `.plist` is appended even when a file of the bare name exists.
        try scratch.put(try PropertyListFile.encode(["bare": "yes"], format: .xml), "home/prefs/bare")
        let bare = try scratch.run("read", "~/prefs/bare")
        #expect(bare.status == 1 && bare.message == "\nDomain ~/prefs/bare does not exist\n", "\(bare)")
        #expect(try scratch.values("home/prefs/bare") == ["bare": "yes"])
    }

    /// Each format is read, and a write keeps it: binary stays binary, XML stays XML, old-style
    /// text (which no writer here produces) becomes XML. The new file replaces the old one by a
    /// rename (a new inode), keeps its mode, and leaves no temporary file behind.
    @Test func aWriteKeepsTheFilesFormatAndReplacesItAtomically() throws {
        let scratch = try Scratch()
        let values: [String: PlistValue] = ["name": "Jean-Luc", "rank": 4]
        try scratch.put(try PropertyListFile.encode(values, format: .xml), "settings-xml.plist")
        try scratch.put(try PropertyListFile.encode(values, format: .binary), "settings-binary.plist")
        try scratch.put(Data("{ name = \"Jean-Luc\"; rank = 4; }\n".utf8), "settings-text.plist")
        for (name, magic) in [("settings-xml", "<?xml"), ("settings-binary", "bplist00"), ("settings-text", "<?xml")] {
            let path = scratch.folder + "/" + name
            #expect(try scratch.run("read", path).out == "{\n    name = \"Jean-Luc\";\n    rank = 4;\n}\n", "\(name)")
            chmod(path + ".plist", 0o640)
            let before = scratch.status(name + ".plist")
            #expect(Self.succeeded(try scratch.run("write", path, "warpFactor", "-float", "9.5")), "\(name)")
            #expect(scratch.bytes(name + ".plist")?.prefix(magic.utf8.count) == Data(magic.utf8), "\(name)")
            let after = scratch.status(name + ".plist")
            #expect(after.inode != before.inode, "\(name) is replaced, not written in place")
            #expect(after.mode == 0o640, "\(name)")
            // Old-style text has no integers: its rank was the string "4", and stays one.
            let rank: PlistValue = name == "settings-text" ? "4" : 4
            #expect(try scratch.values(name + ".plist") == ["name": "Jean-Luc", "rank": rank, "warpFactor": 9.5], "\(name)")
        }
        #expect(scratch.listing() == ["home", "settings-binary.plist", "settings-text.plist", "settings-xml.plist"])
    }

    @Test func everyVerbThatTakesAFileEditsItAsADomain() throws {
        let scratch = try Scratch()
        let file = scratch.folder + "/edits"
        for arguments in [
            ["list", "-array", "a"], ["list", "-array-add", "b", "-int", "3"], ["map", "-dict", "k", "v"], ["map", "-dict-add", "j", "x"],
            ["count", "-int", "1", "-expect-absent"], ["count", "-int", "2", "-expect", "-int", "1"], ["when", "-date", "2026-11-21"],
        ] {
            let result = try DefaultsCommandTests.run(["write", file] + arguments, in: scratch.environment)
            #expect(Self.succeeded(result), "\(arguments): \(result)")
        }
        let failures: [([String], String)] = [
            (["write", file, "count", "-int", "3", "-expect", "-int", "1"],
             "Could not write domain \(file); exiting (conflict: count is 2, not 1; nothing changed)\n"),
            (["write", file, "map", "-array-add", "z"], "Value for key map is not an array; cannot append.  Leaving defaults unchanged.\n"),
            (["write", file, "(1, 2)"], "\nRep argument is not a dictionary\nDefaults have not been changed.\n"),
            (["rename", file, "missing", "x"], "Key missing does not exist in domain \(file); leaving defaults unchanged\n"),
            (["delete", file, "missing"], "\nThe domain/default pair of (\(file), missing) does not exist\nDefaults have not been changed.\n"),
            (["read", file, "missing"], "\nThe domain/default pair of (\(file), missing) does not exist\n"),
        ]
        for (arguments, message) in failures {
            let result = try DefaultsCommandTests.run(arguments, in: scratch.environment)
            #expect(result.status == 1 && result.out.isEmpty, "\(arguments): \(result)")
            #expect(result.message == message, "\(arguments)")
        }
        let written: [String: PlistValue] = [
            "list": ["a", "b", 3], "map": ["j": "x", "k": "v"], "count": 2, "when": .date(RFC3339.parse("2026-11-21T00:00:00Z")!),
        ]
        #expect(try scratch.values("edits.plist") == written)
        #expect(try scratch.run("read", file, "list").out == "(\n    a,\n    b,\n    3\n)\n")
        #expect(try scratch.run("read-type", file, "map").out == "Type is dictionary\n")

        #expect(Self.succeeded(try scratch.run("rename", file, "count", "total")))
        #expect(Self.succeeded(try scratch.run("delete", file, "list")))
        let kept: [String: PlistValue] = ["map": ["j": "x", "k": "v"], "total": 2, "when": .date(RFC3339.parse("2026-11-21T00:00:00Z")!)]
        #expect(try scratch.values("edits.plist") == kept)

        let xml = try scratch.run("export", file, "-")
        #expect(xml.out == String(decoding: try PropertyListFile.encode(kept, format: .xml), as: UTF8.self))
        #expect(Self.succeeded(try scratch.run("export", file, scratch.folder + "/exported.plist")))
        #expect(scratch.bytes("exported.plist")?.prefix(8) == Data("bplist00".utf8))
        #expect(try scratch.values("exported.plist") == kept)

        let imported = scratch.folder + "/imported"
        #expect(Self.succeeded(try scratch.run("import", imported, "-", input: "{ greeting = hello; }")))
        #expect(scratch.bytes("imported.plist")?.prefix(8) == Data("bplist00".utf8))
        #expect(Self.succeeded(try scratch.run("import", imported, scratch.folder + "/exported.plist")))
        #expect(try scratch.values("imported.plist") == kept.merging(["greeting": "hello"]) { $1 })

        #expect(Self.succeeded(try scratch.run("write", file, "{ replaced = yes; }")))
        #expect(try scratch.values("edits.plist") == ["replaced": "yes"])
        #expect(Self.succeeded(try scratch.run("delete", file)))
        #expect(scratch.bytes("edits.plist") == nil, "delete removes the file, as on macOS")
        for (arguments, message) in [
            (["delete", file], "\nDomain (\(file)) not found.\nDefaults have not been changed.\n"),
            (["read", file], "\nDomain \(file) does not exist\n"),
            (["read-type", file, "k"], "\nThe domain/default pair of (\(file), k) does not exist\n"),
            (["export", file, "-"], "\nDomain \(file) does not exist\n"),
        ] {
            let result = try DefaultsCommandTests.run(arguments, in: scratch.environment)
            #expect(result.status == 1 && result.message == message, "\(arguments): \(result)")
        }
        #expect(scratch.listing() == ["exported.plist", "home", "imported.plist"], "no temporary file is left behind")
    }

    /// A file that is not a property list holding a dictionary is refused by every verb, with the
    /// reader's reason, and left as it was, byte for byte.
    @Test func aFileThatIsNoPropertyListIsRefusedAndLeftAsItIs() throws {
        let scratch = try Scratch()
        for (name, contents) in [("garbage", "this is { not a property list"), ("list", "(1, 2)"), ("binary", "bplist00 torn")] {
            let data = Data(contents.utf8)
            try scratch.put(data, name + ".plist")
            let path = scratch.folder + "/" + name
            let expected: String
            do {
                let root = try PropertyListFile.decodeValue(data)
                expected = "\(path).plist holds \(root.plistType.nameWithArticle), not a dictionary; it is left as it is\n"
            } catch {
                expected = "\(path).plist is not a property list (\(error.message)); it is left as it is\n"
            }
            let inode = scratch.status(name + ".plist").inode
            for arguments in [
                ["read", path], ["read", path, "k"], ["read-type", path, "k"], ["write", path, "k", "v"], ["write", path, "{ k = v; }"],
                ["write", path, "k", "-array-add", "v"], ["rename", path, "a", "b"], ["delete", path], ["delete", path, "k"],
                ["import", path, "-"], ["export", path, "-"],
            ] {
                let result = try DefaultsCommandTests.run(arguments, in: scratch.environment, input: "{ k = v; }")
                #expect(result.status == 1 && result.out.isEmpty, "\(arguments): \(result)")
                #expect(result.message == expected, "\(arguments)")
                #expect(scratch.bytes(name + ".plist") == data, "\(arguments)")
                #expect(scratch.status(name + ".plist").inode == inode, "\(arguments)")
            }
        }
        #expect(scratch.listing() == ["binary.plist", "garbage.plist", "home", "list.plist"])
    }

    /// A file that is a symbolic link (a dotfiles folder's) is written through: its target is
    /// replaced, in its own format, and the link stays; `delete` empties the target rather than
    /// break the link. A link to nothing is refused.
    @Test func aLinkIsWrittenThroughAndStaysALink() throws {
        let scratch = try Scratch()
        try FileManager.default.createDirectory(atPath: scratch.folder + "/dotfiles", withIntermediateDirectories: true)
        try scratch.put(try PropertyListFile.encode(["k": "v"], format: .xml), "dotfiles/real.plist")
        try FileManager.default.createSymbolicLink(atPath: scratch.folder + "/link.plist", withDestinationPath: scratch.folder + "/dotfiles/real.plist")
        let link = scratch.folder + "/link"
        #expect(Self.succeeded(try scratch.run("write", link, "k", "w")))
        #expect(scratch.isLink("link.plist"))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: scratch.folder + "/link.plist") == scratch.folder + "/dotfiles/real.plist")
        #expect(scratch.bytes("dotfiles/real.plist")?.prefix(5) == Data("<?xml".utf8))
        #expect(try scratch.values("dotfiles/real.plist") == ["k": "w"])
        #expect(scratch.listing("/dotfiles") == ["real.plist"])
        #expect(Self.succeeded(try scratch.run("delete", link)))
        #expect(scratch.isLink("link.plist"))
        #expect(try scratch.values("dotfiles/real.plist") == [:])

        try FileManager.default.createSymbolicLink(atPath: scratch.folder + "/dangling.plist", withDestinationPath: scratch.folder + "/nowhere.plist")
        let dangling = try scratch.run("write", scratch.folder + "/dangling", "k", "v")
        #expect(dangling.status == 1)
        #expect(dangling.message
            == "Could not write domain \(scratch.folder)/dangling; exiting (\(scratch.folder)/dangling.plist is a symbolic link to nothing; it is left as it is)\n")
        #expect(scratch.isLink("dangling.plist") && scratch.bytes("nowhere.plist") == nil)
    }

    /// A path in the storage folder is its domain: the change goes through the daemon, which
    /// raises the generation and tells subscribers, whichever way the path is written. With no
    /// daemon, such a path is refused as any domain is; verbs that take domains only take it too.
    @Test func aPathInTheStorageFolderIsItsDomainThroughTheDaemon() throws {
        let daemon = try DaemonProcess(defaultPaths: true)
        let subscriber = try daemon.connect()
        #expect(try subscriber.request(#"{"op":"subscribe","domains":["com.example.app"]}"#) == #"{"ok":true,"generations":{"com.example.app":0}}"#)
        #expect(Self.succeeded(try DefaultsCommandTests.run(daemon, ["write", "~/.config/com.example.app", "volume", "-int", "7"])))
        #expect(try subscriber.readEvent().hasPrefix(#"{"event":"didChange","domain":"com.example.app","generation":1,"changes":{"volume":7},"#))
        try FileManager.default.createSymbolicLink(atPath: daemon.home + "/config-link", withDestinationPath: daemon.storagePath)
        #expect(Self.succeeded(try DefaultsCommandTests.run(daemon, ["write", daemon.home + "/config-link/com.example.app.plist", "mode", "dark"])))
        #expect(try subscriber.readEvent().hasPrefix(#"{"event":"didChange","domain":"com.example.app","generation":2,"changes":{"mode":"dark"},"#))
        #expect(try daemon.connect().request(#"{"op":"get","domain":"com.example.app"}"#)
            == #"{"ok":true,"value":{"mode":"dark","volume":7},"generation":2}"#)
        #expect(try DefaultsCommandTests.run(daemon, ["read", daemon.storagePath + "/com.example.app"]).out == "{\n    mode = dark;\n    volume = 7;\n}\n")
        #expect(try DefaultsCommandTests.run(daemon, ["read-effective", "~/.config/com.example.app", "mode"]).out == "dark  // user\n")
        #expect(Self.succeeded(try DefaultsCommandTests.run(daemon, ["delete", "~/.config/com.example.app", "volume"])))
        #expect(try subscriber.readEvent().hasPrefix(#"{"event":"didChange","domain":"com.example.app","generation":3,"changes":{"volume":null},"#))

        // This machine's variant, by its file in ByHost (`<domain>..plist` in the shared folder).
        #expect(Self.succeeded(try DefaultsCommandTests.run(daemon, ["write", "~/.config/ByHost/com.example.app.", "scale", "-int", "2"])))
        #expect(try DefaultsCommandTests.run(daemon, ["-currentHost", "read", "com.example.app", "scale"]).out == "2\n")
        #expect(try DefaultsCommandTests.run(daemon, ["read", "com.example.app", "scale"]).status == 1)

        let refusals: [([String], String)] = [
            (["-currentHost", "read", "~/.config/com.example.app"],
             "-currentHost and -host choose a domain's by-host variant; ~/.config/com.example.app names a file, which has none\n"),
            (["read-effective", "/tmp/com.example.app"],
             "/tmp/com.example.app is a file outside defaultsd's storage (\(daemon.storagePath)); only read, read-type, write, rename, delete, delete-all, import, export take a file's path\n"),
        ]
        for (arguments, message) in refusals {
            let result = try DefaultsCommandTests.run(daemon, arguments)
            #expect(result.status == 1 && result.message == message, "\(arguments): \(result)")
        }

        let scratch = try Scratch()
        let noDaemon = try scratch.run("write", "~/.config/com.example.app", "volume", "-int", "7")
        #expect(noDaemon.status == 1 && noDaemon.err.hasPrefix("defaultsd is not running at \(Scratch.socket);"), "\(noDaemon)")
        #expect(scratch.bytes("home/.config/com.example.app.plist") == nil, "a domain's file is the daemon's to write")
    }
}

extension DefaultsCommandTests {
    /// Runs the real `defaults` with exactly `environment`, in `directory` when one is given.
    static func run(_ arguments: [String], in environment: [String: String], directory: String? = nil, input: String? = nil) throws -> Result {
        try run(arguments, environment: environment, input: input, socket: nil, directory: directory)
    }
}
