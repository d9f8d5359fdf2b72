import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import LocalServices
import TestThreads
import Testing

/// systemd integration with real parts: a NOTIFY_SOCKET datagram listener, systemd-socket-activate
/// and systemd-analyze verify.
@Suite(.ownThreads) struct SystemdTests {
    static let repository = SharedData.repository

    /// A daemon reporting to a NOTIFY_SOCKET listener, once it said READY=1; the directory is removed by the caller.
    func notifyingDaemon(arguments: [String] = [], environment: [String: String] = [:]) throws -> (DaemonProcess, NotifyListener, String) {
        let directory = try temporaryDirectory()
        let notify = try NotifyListener(directory: directory)
        let daemon = try DaemonProcess(arguments: arguments, environment: environment.merging(["NOTIFY_SOCKET": notify.path]) { $1 })
        guard notify.receive(until: "READY=1") != nil else { throw LineSocket.Failure(description: "no READY=1") }
        return (daemon, notify, directory)
    }

    func temporaryDirectory() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-sd-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    @Test func readyIsSentOnlyOnceTheSocketAcceptsConnections() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let notify = try NotifyListener(directory: directory)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: DaemonProcess.binary)
        process.arguments = ["--socket", directory + "/socket", "--storage-dir", directory + "/storage"]
        process.environment = TestEnvironment.isolated(home: directory + "/home").merging(["NOTIFY_SOCKET": notify.path]) { $1 }
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { process.terminate(); process.waitUntilExit() }
        let first = try #require(notify.receive())
        #expect(first.hasPrefix("READY=1\nSTATUS=0 clients, 0 domains loaded, 0 dirty"))
        // At the moment READY=1 arrives, a connection must already work.
        #expect(try LineSocket(path: directory + "/socket").request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
        #expect(FileManager.default.fileExists(atPath: directory + "/storage"))
    }

    @Test func statusFollowsTheDaemonsState() throws {
        let (daemon, notify, directory) = try notifyingDaemon()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = try daemon.connect()
        let second = try daemon.connect()
        // A subscription keeps its domain in memory (a plain read of a domain that does not exist would not).
        try first.request(#"{"op":"subscribe","domains":["com.status"]}"#)
        try second.request(#"{"op":"ping"}"#)
        let messages = try #require(notify.receive(until: "STATUS=2 clients, 1 domain loaded, 0 dirty"))
        #expect(messages.last == "STATUS=2 clients, 1 domain loaded, 0 dirty")
    }

    @Test func theWatchdogIsFedAtHalfTheInterval() throws {
        let (daemon, notify, directory) = try notifyingDaemon(environment: ["WATCHDOG_USEC": "400000"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = daemon
        var pings: [Date] = []
        while pings.count < 8, let message = notify.receive(timeout: 2) {
            if message == "WATCHDOG=1" { pings.append(Date()) }
        }
        #expect(pings.count == 8)
        let intervals = zip(pings.dropFirst(), pings).map { $0.timeIntervalSince($1) }
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        #expect(mean > 0.15 && mean < 0.3, "mean interval \(mean) s for a 0.4 s watchdog")
    }

    @Test func aDaemonWithoutWatchdogSendsNoPings() throws {
        let (daemon, notify, directory) = try notifyingDaemon(environment: ["WATCHDOG_USEC": "400000", "WATCHDOG_PID": "1"])
        defer { try? FileManager.default.removeItem(atPath: directory) }
        _ = daemon
        #expect(notify.receive(timeout: 0.6) == nil, "WATCHDOG_PID names another process")
    }

    @Test func sighupReloadsAndSigtermStops() throws {
        let (daemon, notify, directory) = try notifyingDaemon()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        daemon.send(SIGHUP)
        let reloading = try #require(notify.receive(until: "RELOADING=1"))
        #expect(reloading.last!.range(of: #"^RELOADING=1\nMONOTONIC_USEC=[0-9]+$"#, options: .regularExpression) != nil)
        #expect(try #require(notify.receive()).hasPrefix("READY=1\nSTATUS="))
        #expect(try daemon.connect().request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
        daemon.send(SIGTERM)
        #expect(try #require(notify.receive(until: "STOPPING=1")).last!.hasPrefix("STOPPING=1"))
        #expect(daemon.terminate() == 0)
    }

    @Test func sighupAppliesAChangedLogLevel() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/defaultsd.json"
        try #"{ "logLevel": "info" }"#.write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(arguments: ["--config", config])
        let client = try daemon.connect()
        try client.request(#"{"op":"get","domain":"com.before"}"#)
        try "// now louder\n{ \"logLevel\": \"debug\", \"fileFormat\": \"binary\", \"settingsBundleScanMilliseconds\": 500 }"
            .write(toFile: config, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        #expect(daemon.waitForLog("configuration reloaded"))
        // Log lines are written synchronously, so one from before the reload would be here by now.
        #expect(!daemon.logText.contains("loaded domain domain=com.before"))
        let warning = #"changes that take effect after a restart keys="fileFormat, settingsBundleScanMilliseconds""#
        #expect(daemon.logText.contains(warning))
        try client.request(#"{"op":"get","domain":"com.after"}"#)
        #expect(daemon.waitForLog("loaded domain domain=com.after"))
        // Reloaded again with the same file: the daemon still runs with what it started with,
        // so the same keys still wait for a restart.
        daemon.send(SIGHUP)
        #expect(daemon.waitForLog("configuration reloaded", occurrences: 2))
        #expect(daemon.logOccurrences(of: warning) == 2)
    }

    @Test func sighupWithABrokenFileKeepsServing() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/defaultsd.json"
        try #"{ "coalesceMilliseconds": 5 }"#.write(toFile: config, atomically: true, encoding: .utf8)
        let notify = try NotifyListener(directory: directory)
        let daemon = try DaemonProcess(arguments: ["--config", config], environment: ["NOTIFY_SOCKET": notify.path])
        _ = try #require(notify.receive(until: "READY=1"))
        try "{ \"coalesceMilliseconds\": ".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.send(SIGHUP)
        #expect(daemon.waitForLog("configuration not reloaded; the previous one stays in force"))
        #expect(daemon.logText.contains(config))
        let ready = try #require(notify.receive(until: "READY=1"))
        #expect(ready.last!.contains("previous configuration kept"))
        let client = try daemon.connect()
        #expect(try client.request(#"{"op":"set","domain":"com.kept","key":"k","value":1}"#) == #"{"ok":true,"generation":1}"#)
        #expect(try client.request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
    }

    @Test func socketActivationAdoptsThePassedSocketAndLeavesIt() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let socketPath = directory + "/activated.socket"
        let activator = Process()
        activator.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        activator.arguments = ["--listen=" + socketPath, DaemonProcess.binary, "--storage-dir", directory + "/storage",
                               "--socket", directory + "/unused.socket"]
        activator.environment = TestEnvironment.isolated(home: directory + "/home")
        let errors = Pipe()
        activator.standardError = errors
        let log = LogBuffer()
        log.capture(errors.fileHandleForReading)
        try activator.run()
        defer { if activator.isRunning { activator.terminate(); activator.waitUntilExit() } }
        #expect(log.wait(for: "Listening on", timeout: 10))
        // The first connection starts the daemon, which answers on the passed socket.
        let client = try LineSocket(path: socketPath)
        #expect(try client.request(#"{"op":"set","domain":"com.activated","key":"k","value":true}"#, timeout: 30)
            == #"{"ok":true,"generation":1}"#)
        #expect(log.wait(for: "listening on a socket passed by the service manager", timeout: 10))
        #expect(!FileManager.default.fileExists(atPath: directory + "/unused.socket"))
        activator.terminate()
        activator.waitUntilExit()
        #expect(activator.terminationStatus == 0)
        var info = stat()
        #expect(lstat(socketPath, &info) == 0 && info.st_mode & S_IFMT == S_IFSOCK, "the passed socket survives the daemon")
        let stored = try PropertyListFile.decode(try Data(contentsOf: URL(fileURLWithPath: directory + "/storage/com.activated.plist")))
        #expect(stored == ["k": true])
    }

    @Test func aPassedSocketThatIsNotAUnixListenerIsRefused() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // systemd-socket-activate with --datagram passes a datagram socket.
        let activator = Process()
        activator.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        activator.arguments = ["--datagram", "--listen=" + directory + "/dgram", DaemonProcess.binary,
                               "--storage-dir", directory + "/storage", "--socket", directory + "/unused.socket"]
        activator.environment = TestEnvironment.isolated(home: directory + "/home")
        let errors = Pipe()
        activator.standardError = errors
        let log = LogBuffer()
        log.capture(errors.fileHandleForReading)
        try activator.run()
        #expect(log.wait(for: "Listening on", timeout: 10))
        // A datagram socket is activated on the first datagram.
        let sender = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(sender) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array((directory + "/dgram").utf8)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes); raw[bytes.count] = 0 }
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(sender, "x", 1, 0, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(sent == 1)
        activator.waitUntilExit()
        let text = log.waitForEnd()
        #expect(activator.terminationStatus == 1)
        #expect(text.contains("defaultsd: the socket passed by the service manager (fd 3) is not a listening Unix stream socket"))
    }

    @Test(arguments: [
        (#"{ "coalesceMs": 5 }"#, #"key "coalesceMs": unknown key"#),
        (#"{ "coalesceMilliseconds": "fast" }"#, #"key "coalesceMilliseconds": expected an integer from 0 to 600000, found "fast""#),
        (#"{ "coalesceMilliseconds": -1 }"#, #"key "coalesceMilliseconds": expected an integer from 0 to 600000, found -1"#),
        (#"{ "fileFormat": "yaml" }"#, #"key "fileFormat": expected "xml" or "binary", found "yaml""#),
        (#"{ "storageDirectory": "relative/path" }"#, #"key "storageDirectory": expected an absolute path or null"#),
        (#"{ "logLevel": true }"#, #"key "logLevel": expected one of"#),
        (#"{ "maximumConnections": 0 }"#, #"key "maximumConnections": expected an integer from 1 to 1000000, found 0"#),
        (#"{ "settingsBundleDirectories": ["/ok", 3] }"#, #"key "settingsBundleDirectories": expected an array of absolute paths"#),
        (#"[1, 2]"#, "expected a JSON object at the top level"),
        (#"{ "logLevel": "info" "#, "not valid JSON"),
    ])
    func aBadConfigurationExitsWith78AndNamesTheProblem(content: String, message: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/defaultsd.json"
        try content.write(toFile: config, atomically: true, encoding: .utf8)
        let run = try DaemonProcess.runToCompletion(
            ["--config", config, "--socket", directory + "/socket", "--storage-dir", directory + "/storage"])
        let text = run.errors
        #expect(run.status == 78)
        #expect(text.hasPrefix("defaultsd: \(config): "), "\(text)")
        #expect(text.contains(message), "\(text)")
        #expect(!text.contains("Fatal error"))
    }

    @Test func aBadFlagExitsWith78() throws {
        let run = try DaemonProcess.runToCompletion(["--format", "yaml", "--print-config"])
        #expect(run.status == 78)
        #expect(run.errors == "defaultsd: --format expects \"xml\" or \"binary\", not \"yaml\"\n")
    }

    @Test("every flag sets its key, and --print-config names the flag as the value's source")
    func everyFlagSetsItsKey() throws {
        let flags: [(flag: String, value: String, key: String)] = [
            ("--socket", "/tmp/flags/socket", "socket"), ("--storage-dir", "/tmp/flags/storage", "storageDirectory"),
            ("--state-dir", "/tmp/flags/state", "stateDirectory"),
            ("--format", "binary", "fileFormat"), ("--coalesce-ms", "7", "coalesceMilliseconds"),
            ("--max-line-bytes", "2048", "maximumLineBytes"), ("--max-pending-reply-bytes", "65536", "maximumPendingReplyBytes"),
            ("--max-domain-bytes", "4096", "maximumDomainBytes"), ("--max-connections", "3", "maximumConnections"),
            ("--log-level", "debug", "logLevel"), ("--managed-dir", "/tmp/flags/managed", "managedPreferencesDirectory"),
            ("--machine-id-file", "/tmp/flags/machine-id", "machineIDFile"),
        ]
        let run = try DaemonProcess.runToCompletion(["--print-config"] + flags.flatMap { [$0.flag, $0.value] })
        #expect(run.status == 0, "\(run.errors)")
        let lines = run.output.split(separator: "\n")
        for (flag, value, key) in flags {
            #expect(lines.contains { $0.hasPrefix(key + " ") && $0.contains(value) && $0.hasSuffix("# \(flag)") }, "\(key)")
        }
        let help = try DaemonProcess.runToCompletion(["--help"]).output.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("--max-pending-reply-bytes <max-pending-reply-bytes> The most answers, in bytes, a connection may leave unread"),
                "the help is the option's own summary")
    }

    @Test func printConfigShowsEveryKeyAndItsSource() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let config = directory + "/defaultsd.json"
        try #"{ "fileFormat": "binary" }"#.write(toFile: config, atomically: true, encoding: .utf8)
        let run = try DaemonProcess.runToCompletion(
            ["--config", config, "--print-config", "--coalesce-ms", "7"],
            environment: ["XDG_RUNTIME_DIR": "/run/user/4242", "XDG_CONFIG_HOME": "/home/picard/.config", "HOME": "/home/picard"])
        let text = run.output
        #expect(run.status == 0)
        let lines = text.split(separator: "\n").map(String.init)
        #expect(lines.first == "# effective configuration of defaultsd; configuration file: \(config)")
        #expect(lines.contains(#"socket                          = "/run/user/4242/defaultsd/socket"  # default ($XDG_RUNTIME_DIR)"#))
        #expect(lines.contains(#"storageDirectory                = "/home/picard/.config"  # default ($XDG_CONFIG_HOME)"#))
        #expect(lines.contains(#"stateDirectory                  = "/home/picard/.local/state/defaultsd"  # default ($HOME)"#))
        #expect(lines.contains(#"fileFormat                      = "binary"  # \#(config)"#))
        #expect(lines.contains("coalesceMilliseconds            = 7  # --coalesce-ms"))
        #expect(lines.contains(#"roaming.endpoints               = []  # default"#))
        #expect(lines.contains("settingsBundleWaitMilliseconds  = 5000  # default"))
        #expect(lines.count == 34)  // the header, the 18 keys, the 5 of the journal section and the 10 of the roaming section
    }

    @Test func journaldLinesCarryTheirPriority() throws {
        let daemon = try DaemonProcess(environment: ["JOURNAL_STREAM": "8:1234"])
        let line = daemon.logText.split(separator: "\n").first { $0.contains("listening") }
        #expect(line?.hasPrefix("<6>defaultsd 0.1.0 listening socket=") == true, "\(String(describing: line))")
    }

    /// The address families each unit lets the daemon use: the per-user one reaches etcd when
    /// roaming is configured (before, `AF_UNIX` alone kept roaming from working under the unit);
    /// the system-wide one does not roam and keeps to Unix sockets and a private network.
    @Test func theUnitsLetRoamingReachEtcdWhereItRuns() throws {
        func property(_ name: String, in kind: String) throws -> [String] {
            let text = try String(contentsOf: SharedData.repository.appendingPathComponent("systemd/\(kind)/defaultsd.service"), encoding: .utf8)
            return text.split(separator: "\n").filter { $0.hasPrefix(name + "=") }
                .flatMap { $0.dropFirst(name.count + 1).split(separator: " ").map(String.init) }
        }
        #expect(Set(try property("RestrictAddressFamilies", in: "user")) == ["AF_UNIX", "AF_INET", "AF_INET6"])
        #expect(try property("IPAddressDeny", in: "user").isEmpty)
        #expect(try property("PrivateNetwork", in: "user").isEmpty)
        #expect(try property("RestrictAddressFamilies", in: "system") == ["AF_UNIX"])
        #expect(try property("PrivateNetwork", in: "system") == ["yes"])
    }

    @Test(arguments: ["user", "system"])
    func unitFilesVerifyCleanly(kind: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let runtime = directory + "/runtime"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let binDirectory = URL(fileURLWithPath: DaemonProcess.binary).deletingLastPathComponent().path
        var units: [String] = []
        for name in ["defaultsd.socket", "defaultsd.service"] {
            let template = try String(contentsOf: Self.repository.appendingPathComponent("systemd/\(kind)/\(name)"), encoding: .utf8)
            #expect(template.contains("@bindir@") == (name == "defaultsd.service"))
            try template.replacingOccurrences(of: "@bindir@", with: binDirectory)
                .write(toFile: directory + "/" + name, atomically: true, encoding: .utf8)
            units.append(directory + "/" + name)
        }
        let run = try FinishedRun.run(
            "/usr/bin/systemd-analyze", (kind == "user" ? ["--user"] : []) + ["verify"] + units,
            environment: TestEnvironment.isolated(home: directory + "/home").merging(["XDG_RUNTIME_DIR": runtime]) { $1 },
            in: directory)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.isEmpty, "systemd-analyze warned:\n\(run.output)")
    }
}
