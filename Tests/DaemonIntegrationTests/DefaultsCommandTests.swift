import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import Synchronization
import TestThreads
import Testing

/// The `defaults` binary against a real daemon: output, errors and exit codes, golden.
@Suite(.ownThreads) struct DefaultsCommandTests {
    static let binary = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent().appendingPathComponent("defaults").path
    static let prefix = #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} defaults\[\d+:\d+\] "#

    struct Result {
        var out: String
        var err: String
        var status: Int32
        /// Standard error without the NSLog-style prefix (checked to be there).
        var message: String {
            guard let range = err.range(of: DefaultsCommandTests.prefix, options: .regularExpression) else { return "<no prefix> " + err }
            return String(err[range.upperBound...])
        }
    }

    /// Runs `defaults` with the daemon's private home, or a temporary one when there is no daemon.
    @discardableResult
    static func run(_ daemon: DaemonProcess?, _ arguments: [String], input: String? = nil, socket: String? = nil) throws -> Result {
        if let daemon { return try run(arguments, environment: daemon.clientEnvironment, input: input, socket: socket) }
        return try TestEnvironment.withTemporaryHome { try run(arguments, environment: $0, input: input, socket: socket ?? "/nonexistent/socket") }
    }

    /// Runs the real `defaults` with `environment` (and `socket` as `DEFAULTSD_SOCKET`), in
    /// `directory` when one is given.
    static func run(
        _ arguments: [String], environment: [String: String], input: String?, socket: String?, directory: String? = nil
    ) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        var environment = environment
        if let socket { environment["DEFAULTSD_SOCKET"] = socket }
        process.environment = environment
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        let out = Pipe(), err = Pipe(), inp = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = inp
        try process.run()
        if let input { inp.fileHandleForWriting.write(Data(input.utf8)) }
        try inp.fileHandleForWriting.close()
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        let errData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(out: String(decoding: outData, as: UTF8.self), err: String(decoding: errData, as: UTF8.self),
                      status: process.terminationStatus)
    }

    func run(_ daemon: DaemonProcess, _ arguments: String..., input: String? = nil) throws -> Result {
        try Self.run(daemon, arguments, input: input)
    }

    @Test func writeEveryTypeAndReadItBack() throws {
        let daemon = try DaemonProcess()
        for arguments in [
            ["s", "-string", "hello world"], ["i", "-int", "-3"], ["f", "-float", "2.5"], ["b", "-bool", "YES"],
            ["d", "-date", "2026-11-21 10:00:00 +0000"], ["x", "-data", "01020304"], ["a", "-array", "one", "two words", "-int", "3"],
            ["n", "-dict", "k", "v"], ["u", "Siân"], ["l", "(x, \"y z\")"],
        ] {
            let result = try Self.run(daemon, ["write", "com.example.types"] + arguments)
            #expect(result.status == 0 && result.out.isEmpty && result.err.isEmpty, "\(arguments): \(result)")
        }
        let read = try run(daemon, "read", "com.example.types")
        #expect(read.status == 0)
        #expect(read.out == """
            {
                a =     (
                    one,
                    "two words",
                    3
                );
                b = 1;
                d = "2026-11-21 10:00:00 +0000";
                f = "2.5";
                i = "-3";
                l =     (
                    x,
                    "y z"
                );
                n =     {
                    k = v;
                };
                s = "hello world";
                u = "Si\\\\U00e2n";
                x = {length = 4, bytes = 0x01020304};
            }

            """)
        for (key, type, plain) in [
            ("s", "string", "hello world"), ("i", "integer", "-3"), ("f", "float", "2.5"), ("b", "boolean", "1"),
            ("d", "date", "2026-11-21 10:00:00 +0000"), ("x", "data", "{length = 4, bytes = 0x01020304}"),
            ("a", "array", "(\n    one,\n    \"two words\",\n    3\n)"), ("n", "dictionary", "{\n    k = v;\n}"), ("u", "string", "Si\\342n"),
        ] {
            #expect(try run(daemon, "read-type", "com.example.types", key).out == "Type is \(type)\n")
            #expect(try run(daemon, "read", "com.example.types", key).out == plain + "\n")
        }
        // The daemon holds the types exactly.
        let stored = try daemon.connect().request(#"{"op":"get","domain":"com.example.types","key":"f"}"#)
        #expect(stored == #"{"ok":true,"value":2.5,"generation":10}"#)
    }

    @Test func untypedValuesAreStringsUnlessTheyLookLikePropertyLists() throws {
        let daemon = try DaemonProcess()
        _ = try run(daemon, "write", "com.u", "one", "1")
        _ = try run(daemon, "write", "com.u", "typed", "<integer>1</integer>")
        _ = try run(daemon, "write", "com.u", "list", "(a, b)")
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"get","domain":"com.u"}"#)
            == #"{"ok":true,"value":{"list":["a","b"],"one":"1","typed":1},"generation":3}"#)
        let bad = try run(daemon, "write", "com.u", "json", #"{"name": "x"}"#)
        #expect(bad.status == 1)
        #expect(bad.message == #"Could not parse: {"name": "x"}.  Try single-quoting it."# + "\n")
    }

    @Test func writeADomainRepReplacesTheDomain() throws {
        let daemon = try DaemonProcess()
        _ = try run(daemon, "write", "com.rep", "old", "-int", "1")
        #expect(try run(daemon, "write", "com.rep", "{ new = 2; name = \"Jean-Luc\"; }").status == 0)
        #expect(try run(daemon, "read", "com.rep").out == "{\n    name = \"Jean-Luc\";\n    new = 2;\n}\n")
        let notDictionary = try run(daemon, "write", "com.rep", "(1, 2)")
        #expect(notDictionary.status == 1)
        #expect(notDictionary.message == "\nRep argument is not a dictionary\nDefaults have not been changed.\n")
    }

    @Test func arrayAddAndDictAdd() throws {
        let daemon = try DaemonProcess()
        _ = try run(daemon, "write", "com.add", "list", "-array", "a")
        _ = try run(daemon, "write", "com.add", "list", "-array-add", "b", "-int", "3")
        _ = try run(daemon, "write", "com.add", "map", "-dict-add", "k", "v")
        _ = try run(daemon, "write", "com.add", "map", "-dict-add", "k", "w", "j", "x")
        #expect(try daemon.connect().request(#"{"op":"get","domain":"com.add"}"#)
            == #"{"ok":true,"value":{"list":["a","b",3],"map":{"j":"x","k":"w"}},"generation":4}"#)
        let clash = try run(daemon, "write", "com.add", "map", "-array-add", "z")
        #expect(clash.status == 1)
        #expect(clash.message == "Value for key map is not an array; cannot append.  Leaving defaults unchanged.\n")
        let clash2 = try run(daemon, "write", "com.add", "list", "-dict-add", "k", "v")
        #expect(clash2.message == "Value for key list is not a dictionary; cannot append.  Leaving defaults unchanged.\n")
    }

    /// `-expect` and `-expect-absent` make a write compare-and-set: refused, with the value found,
    /// when the key holds something else.
    @Test func writeWithExpectIsCompareAndSet() throws {
        let daemon = try DaemonProcess()
        #expect(try run(daemon, "write", "com.cas", "count", "-int", "1", "-expect-absent").status == 0)
        #expect(try run(daemon, "write", "com.cas", "count", "-int", "2", "-expect", "-int", "1").status == 0)
        let stale = try run(daemon, "write", "com.cas", "count", "-int", "3", "-expect", "-int", "1")
        #expect(stale.status == 1)
        #expect(stale.message == "Could not write domain com.cas; exiting (conflict: count is 2, not 1; nothing changed)\n")
        #expect(try run(daemon, "read", "com.cas", "count").out == "2\n")
    }

    /// `-array-add` reads, appends and writes only if nobody wrote in between, building again on
    /// another writer's value: two processes adding 40 elements each, at once, leave 80.
    @Test func arrayAddRacedByTwoProcessesLosesNothing() throws {
        let daemon = try DaemonProcess()
        let group = DispatchGroup()
        let failures = Mutex(0)
        for writer in ["a", "b"] {
            DispatchQueue.global().async(group: group) {
                for index in 0..<40 {
                    let status = (try? Self.run(daemon, ["write", "com.race", "list", "-array-add", "\(writer)\(index)"]).status) ?? -1
                    if status != 0 { failures.withLock { $0 += 1 } }
                }
            }
        }
        group.wait()
        #expect(failures.withLock { $0 } == 0)
        let answer = try JSONParser.parse(try daemon.connect().request(#"{"op":"get","domain":"com.race","key":"list"}"#))
        guard case .array(let elements)? = answer["value"] else {
            Issue.record("\(answer)")
            return
        }
        #expect(elements.count == 80)
    }

    @Test func errorsUseMacOSWordingAndExitCodes() throws {
        let daemon = try DaemonProcess()
        _ = try run(daemon, "write", "com.e", "k", "v")
        let cases: [([String], Int32, String)] = [
            (["read", "com.e", "missing"], 1, "\nThe domain/default pair of (com.e, missing) does not exist\n"),
            (["read", "-g", "missing"], 1, "\nThe domain/default pair of (kCFPreferencesAnyApplication, missing) does not exist\n"),
            (["read-type", "com.e", "missing"], 1, "\nThe domain/default pair of (com.e, missing) does not exist\n"),
            (["read", "com.none"], 1, "\nDomain com.none does not exist\n"),
            (["read", "-globalDomain"], 1, "\nDomain Apple Global Domain does not exist\n"),
            (["delete", "com.none"], 1, "\nDomain (com.none) not found.\nDefaults have not been changed.\n"),
            // macOS says the domain is not found when only the key is missing; this port names the key.
            (["delete", "com.e", "missing"], 1, "\nThe domain/default pair of (com.e, missing) does not exist\nDefaults have not been changed.\n"),
            (["delete", "com.none", "missing"], 1, "\nDomain (com.none) not found.\nDefaults have not been changed.\n"),
            (["export", "com.none", "-"], 1, "\nDomain com.none does not exist\n"),
            (["write", "com.e", "k", "-float", "abc"], 1, "-float needs a number, not \"abc\"; leaving defaults unchanged.\n"),
            (["rename", "com.e", "missing", "x"], 1, "Key missing does not exist in domain com.e; leaving defaults unchanged\n"),
            (["write", "com.e", "k", "-int", "1", "2"], 1, "Unexpected argument 2; leaving defaults unchanged.\n"),
            (["write", "com.e", "k", "-array", "-dict"], 1, "Cannot nest composite types (arrays and dictionaries); exiting\n"),
            (["write", "com.e", "k", "-dict", "a"], 1, "Key a lacks a corresponding value\n"),
            (["find", "nothing-matches-this"], 0, "No domain, key, nor value containing 'nothing-matches-this'\n"),
            (["read", "-app", "Safari"], 1, "Couldn't find an application named \"Safari\"; defaults unchanged\n"),
        ]
        for (arguments, status, message) in cases {
            let result = try Self.run(daemon, arguments)
            #expect(result.status == status, "\(arguments)")
            #expect(result.message == message, "\(arguments): \(result.err)")
            #expect(result.out.isEmpty)
        }
        #expect(try run(daemon, "read", "com.e").out == "{\n    k = v;\n}\n", "nothing changed")
    }

    @Test func usageErrorsPrintTheUsageAndExit255() throws {
        let daemon = try DaemonProcess()
        let help = try run(daemon, "help")
        #expect(help.status == 0)
        #expect(help.out.hasPrefix("Command line interface to a user's defaults.\nSyntax:\n\n'defaults' [-currentHost | -host <hostname>] followed by one of the following:\n"))
        #expect(help.out.contains("  delete-all <domain> Key>             deletes key in domain from all containers\n"))
        #expect(help.out.contains("  -float  <floating-point_value>\n  -bool[ean] (true | false | yes | no)\n"))
        for arguments in [[], ["fly"], ["read", "com.e", "k", "extra"], ["write", "com.e"], ["write", "com.e", "k", "-bool", "1"],
                          ["write", "com.e", "k", "-data", "zz"], ["write", "com.e", "k", "-date", "someday"], ["write", "com.e", "k", "-int"],
                          ["rename", "com.e", "a"], ["read-type", "com.e"], ["domains", "x"], ["-host"]] {
            let result = try Self.run(daemon, arguments)
            #expect(result.status == 255, "\(arguments)")
            #expect(result.out == help.out, "\(arguments)")
            // A value's problem is named on standard error (see argumentErrorsDoNotNeedTheDaemon); nothing else is.
            #expect(result.err.isEmpty == !arguments.contains { $0.hasPrefix("-") && $0 != "-host" }, "\(arguments): \(result.err)")
        }
        #expect(help.out.contains("or a path to a file omitting the '.plist' extension"), "a path may stand for a domain, as on macOS")
        #expect(try run(daemon, "READ", "com.none").message == "\nDomain com.none does not exist\n", "verbs are case-insensitive")
    }

    /// Arguments are checked before connecting: a mistake is reported as such, not as a missing daemon.
    @Test func argumentErrorsDoNotNeedTheDaemon() throws {
        let socket = "/nonexistent/defaultsd/socket"
        let help = try Self.run(nil, ["help"], socket: socket)
        #expect(help.status == 0 && !help.out.isEmpty)
        let notRunning = try Self.run(nil, ["read", "com.e", "k"], socket: socket)
        #expect(notRunning.status == 1)
        #expect(notRunning.err.hasPrefix("defaultsd is not running at \(socket);"), "the socket really is absent")
        for arguments in [["read", "com.e", "k", "x"], ["delete", "com.e", "k", "extra"], ["settings", "com.e", "set", "k"],
                          ["settings", "com.e", "set", "k", "-array-add", "a"], ["settings", "com.e", "pane", "extra"]] {
            let result = try Self.run(nil, arguments, socket: socket)
            #expect(result.status == 255, "\(arguments)")
            #expect(result.out == help.out, "\(arguments)")
            #expect(result.err.isEmpty, "\(arguments): \(result.err)")
        }
        // Where macOS prints only the usage, one line on standard error names the problem.
        for (arguments, problem) in [
            (["write", "com.e", "k", "-bool", "maybe"], #"-bool takes yes/no, true/false, not "maybe""#),
            (["write", "com.e", "k", "-int"], "-int needs a value after it"),
            (["write", "com.e", "k", "-date", "yesterday"], #"-date takes 2026-11-21 10:00:00 +0000, 2026-11-21T10:00:00Z or 2026-11-21, not "yesterday""#),
            (["write", "com.e", "k", "-data", "xyz"], #"-data takes hexadecimal digits without 0x, not "xyz""#),
            (["settings", "com.e", "set", "k", "-bool", "maybe"], #"-bool takes yes/no, true/false, not "maybe""#),
        ] {
            let result = try Self.run(nil, arguments, socket: socket)
            #expect(result.status == 255, "\(arguments)")
            #expect(result.out == help.out, "\(arguments)")
            #expect(result.message == problem + "\n", "\(arguments): \(result.err)")
        }
        let cases: [([String], String)] = [
            (["write", "com.e", "k", "-int", "1", "2"], "Unexpected argument 2; leaving defaults unchanged.\n"),
            (["write", "com.e", "(1, 2)"], "\nRep argument is not a dictionary\nDefaults have not been changed.\n"),
            (["settings", "com.e", "set", "k", "-dict", "a"], "Key a lacks a corresponding value\n"),
        ]
        for (arguments, message) in cases {
            let result = try Self.run(nil, arguments, socket: socket)
            #expect(result.status == 1, "\(arguments)")
            #expect(result.message == message, "\(arguments): \(result.err)")
            #expect(result.out.isEmpty)
        }
        // Foundation reads a NaN real, which a PlistValue cannot hold: a parse failure like any other.
        let nan = try Self.run(nil, ["import", "com.e", "-"], input: "<plist><dict><key>r</key><real>nan</real></dict></plist>", socket: socket)
        #expect(nan.status == 1)
        #expect(nan.message == "Could not parse property list from - due to a real is not finite\n", "\(nan.err)")
    }

    @Test func domainsFindDeleteAndRename() throws {
        let daemon = try DaemonProcess()
        _ = try run(daemon, "write", "com.zeta", "k", "v")
        _ = try run(daemon, "write", "com.Alpha", "greeting", "hello world")
        _ = try run(daemon, "write", "-g", "AppleLocale", "en_GB")
        #expect(try run(daemon, "domains").out == "com.Alpha, com.zeta\n")
        #expect(try run(daemon, "domains", "--json").out == #"["com.Alpha","com.zeta"]"# + "\n")
        let found = try run(daemon, "find", "HELLO")
        #expect(found.out == "Found 1 keys in domain 'com.Alpha': {\n    greeting = \"hello world\";\n}\n")
        #expect(try run(daemon, "find", "en_gb").out == "Found 1 keys in domain 'Apple Global Domain': {\n    AppleLocale = \"en_GB\";\n}\n")
        #expect(try run(daemon, "find", "--json", "zeta").out == #"{"com.zeta":{"k":"v"}}"# + "\n")
        #expect(try run(daemon, "rename", "com.Alpha", "greeting", "salutation").status == 0)
        #expect(try run(daemon, "read", "com.Alpha").out == "{\n    salutation = \"hello world\";\n}\n")
        #expect(try run(daemon, "delete", "com.Alpha", "salutation").status == 0)
        #expect(try run(daemon, "delete", "com.zeta").status == 0)
        #expect(try run(daemon, "domains").out == "\n")
        #expect(try run(daemon, "read", "--json", "-g").out == #"{"AppleLocale":"en_GB"}"# + "\n")
        let all = try run(daemon, "read")
        #expect(all.out == "{\n    \"Apple Global Domain\" =     {\n        AppleLocale = \"en_GB\";\n    };\n}\n")
    }

    @Test func exportImportRoundTrip() throws {
        let daemon = try DaemonProcess()
        let directory = daemon.directory
        _ = try run(daemon, "write", "com.src", "i", "-int", "7")
        _ = try run(daemon, "write", "com.src", "r", "-float", "7")
        _ = try run(daemon, "write", "com.src", "b", "-bool", "true")
        _ = try run(daemon, "write", "com.src", "d", "-data", "cafe")
        let xml = try run(daemon, "export", "com.src", "-")
        #expect(xml.out.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<!DOCTYPE plist PUBLIC"))
        #expect(xml.out.contains("<key>r</key>\n\t<real>7</real>"))
        #expect(try run(daemon, "export", "com.src", directory + "/src.plist").status == 0)
        let binary = try Data(contentsOf: URL(fileURLWithPath: directory + "/src.plist"))
        #expect(binary.prefix(8) == Data("bplist00".utf8))
        _ = try run(daemon, "write", "com.dst", "keep", "me")
        #expect(try run(daemon, "import", "com.dst", directory + "/src.plist").status == 0)
        for key in ["i", "r", "b", "d"] {
            #expect(try run(daemon, "read-type", "com.dst", key).out == (try run(daemon, "read-type", "com.src", key)).out)
        }
        #expect(try run(daemon, "read", "com.dst", "keep").out == "me\n", "import merges")
        #expect(try run(daemon, "import", "com.stdin", "-", input: xml.out).status == 0)
        #expect(try run(daemon, "read", "com.stdin").out == (try run(daemon, "read", "com.src")).out)
        let bad = try run(daemon, "import", "com.x", directory + "/missing.plist")
        #expect(bad.status == 1 && bad.message == "Could not read data from \(directory)/missing.plist\n")
        // A FIFO is refused at once, never waited on.
        mkfifo(directory + "/fifo.plist", 0o600)
        let fifo = try run(daemon, "import", "com.x", directory + "/fifo.plist")
        #expect(fifo.status == 1 && fifo.message == "Could not read data from \(directory)/fifo.plist: it is a FIFO, not a regular file\n", "\(fifo.message)")
        let notDict = try run(daemon, "import", "com.x", "-", input: "(1, 2)")
        #expect(notDict.status == 1 && notDict.message.hasSuffix(" was not a dictionary\nDefaults have not been changed.\n"))
    }

    @Test func watchPrintsAConcurrentWrite() throws {
        let daemon = try DaemonProcess()
        for json in [false, true] {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: Self.binary)
            process.arguments = ["watch", "com.example.bridge"] + (json ? ["--json"] : [])
            process.environment = daemon.clientEnvironment
            let out = Pipe()
            let err = Pipe()
            process.standardOutput = out
            process.standardError = err
            try process.run()
            let lines = LineReader(out.fileHandleForReading)
            // It says so on standard error once it has subscribed.
            #expect(LineReader(err.fileHandleForReading).next(timeout: 10) == "watching com.example.bridge; Ctrl-C to stop")
            _ = try Self.run(daemon, ["write", "com.example.bridge", "warpFactor", "-float", json ? "8" : "7"])
            let line = try #require(lines.next(timeout: 10))
            if json {
                #expect(line.hasPrefix(#"{"event":"didChange","domain":"com.example.bridge","generation":"#))
                #expect(line.contains(#""changes":{"warpFactor":8.0}"#))
            } else {
                #expect(line.range(of: #"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} com\.example\.bridge warpFactor = 7  \(pid \d+, uid \d+\)$"#,
                                   options: .regularExpression) != nil, "\(line)")
            }
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "Ctrl-C exits cleanly")
        }
    }

    @Test func syncAndAMissingDaemon() throws {
        let daemon = try DaemonProcess(arguments: ["--coalesce-ms", "600000"])
        _ = try run(daemon, "write", "com.sync", "k", "v")
        #expect(try daemon.storedValues("com.sync") == nil)
        #expect(try run(daemon, "sync").status == 0)
        #expect(try daemon.storedValues("com.sync") == ["k": "v"])
        let missing = try Self.run(nil, ["read", "com.x"], socket: daemon.directory + "/nobody-home")
        #expect(missing.status == 1)
        #expect(missing.err == "defaultsd is not running at \(daemon.directory)/nobody-home; start it with `systemctl --user start defaultsd.socket`, run `defaultsd`, or `make run` in a checkout of defaultsd\n")
        let viaFlag = try Self.run(nil, ["--socket", daemon.socketPath, "read", "com.sync", "k"], socket: "/nonexistent")
        #expect(viaFlag.out == "v\n")
    }

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsAreGenerated(shell: String) throws {
        let result = try Self.run(nil, ["--generate-completion-script", shell])
        #expect(result.status == 0)
        for word in ["read-type", "write", "domains", "watch"] { #expect(result.out.contains(word), "\(shell): \(word)") }
    }
}
