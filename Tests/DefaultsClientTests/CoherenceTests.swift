import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import LocalServices
import TestThreads
import Testing

@Suite("Coherence: two processes, restarts, synchronize", .serialized, .ownThreads)
struct CoherenceTests {
    @Test("two processes see each other's writes at once")
    func twoProcesses() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }
        let watcher = try BridgeControlProcess(daemon, ["watch"])
        _ = try await watcher.lines.first { $0 == "---" }  // its first screen: loaded and subscribed
        #expect(watcher.lines.items.contains("Warp factor:        5.0"))

        // This process → the other.
        defaults.set(7.5, forKey: "warpFactor")
        _ = try await watcher.lines.first { $0 == "Warp factor:        7.5" }
        let local = try await changes.first { $0.keys == ["warpFactor"] }
        #expect(local.origin == .local && local.domain == "com.example.BridgeControl")

        // The other process → this one.
        let writer = try BridgeControlProcess(daemon, ["set", "officer", "Jean-Luc Picard"])
        #expect(try await writer.exitStatus() == 0)
        let remote = try await changes.first { $0.keys.contains("officer") }
        guard case .remote(let origin) = remote.origin else {
            Issue.record("origin \(remote.origin)")
            return
        }
        #expect(origin.pid == writer.pid && origin.client == "BridgeControl" && origin.uid == getuid())
        #expect(defaults.string(forKey: "officer") == "Jean-Luc Picard")
        _ = try await watcher.lines.first { $0 == "Officer:            Jean-Luc Picard" }
        #expect(watcher.lines.items.contains("--- changed: officer (pid \(writer.pid) (BridgeControl)) ---"))
    }

    @Test("a daemon killed and restarted is invisible: cached reads go on, missed changes are notified, queued writes are sent in order")
    func reconnectAfterRestart() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(
            daemon, #"{"op":"apply","domain":"com.example.BridgeControl","set":{"warpFactor":5,"rank":"Ensign"}}"#,
            #"{"op":"synchronize"}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        #expect(defaults.integer(forKey: "warpFactor") == 5)
        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }
        let notifications = NotificationRecorder(object: defaults)

        daemon.kill()  // SIGKILL: a crash
        // While it is down, another process changes the domain (through a daemon on another socket).
        let other = try DaemonProcess(reusing: daemon, socketName: "other-socket")
        _ = try rawRequest(
            other, #"{"op":"apply","domain":"com.example.BridgeControl","set":{"warpFactor":9},"remove":["rank"]}"#,
            #"{"op":"synchronize"}"#)
        #expect(other.terminate() == 0)

        // The cache keeps answering; writes are queued, and nothing can be made durable.
        #expect(defaults.integer(forKey: "warpFactor") == 5)
        #expect(defaults.string(forKey: "rank") == "Ensign")
        defaults.set("Commander", forKey: "officerRank")
        defaults.set(1, forKey: "scratch")
        defaults.set("Captain", forKey: "officerRank")
        defaults.removeObject(forKey: "scratch")
        #expect(defaults.string(forKey: "officerRank") == "Captain")
        #expect(!defaults.synchronize())

        try daemon.restart()
        let resynchronized = try await changes.first { $0.origin == .resynchronized }
        #expect(resynchronized.keys == ["warpFactor", "rank"])
        #expect(defaults.value(forKey: "warpFactor") == .integer(9))
        #expect(defaults.object(forKey: "rank") == nil)
        let posted = try await notifications.recorder.first { $0.origin == .resynchronized }
        #expect(posted.isFromObject && posted.keys == ["rank", "warpFactor"] && posted.domain == "com.example.BridgeControl")

        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.BridgeControl") == (try json(#"{"officerRank":"Captain","warpFactor":9}"#)))
        #expect(try daemon.storedValues("com.example.BridgeControl") == ["officerRank": "Captain", "warpFactor": 9])
    }

    @Test("writes that meet a stopping daemon are sent again to the next one, in order")
    func writesDuringShutdown() throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        #expect(defaults.object(forKey: "k0") == nil)
        for index in 0..<3000 {
            defaults.set(index, forKey: "k\(index % 300)")
            if index == 1000 { daemon.send(SIGTERM) }  // some writes arrive while it stops
        }
        daemon.process.waitUntilExit()
        try daemon.restart()
        #expect(defaults.synchronize())
        let stored = try #require(try daemon.storedValues("com.example.BridgeControl"))
        #expect(stored.count == 300)
        #expect((0..<300).allSatisfy { stored["k\($0)"] == .integer(Int64(2700 + $0)) })
    }

    @Test("a client started while the daemon is down answers from registration, then loads and notifies")
    func daemonUnreachableAtFirstUse() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"warpFactor","value":8}"#, #"{"op":"synchronize"}"#)
        #expect(daemon.terminate() == 0)

        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.register(defaults: ["warpFactor": 5])
        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }
        #expect(defaults.integer(forKey: "warpFactor") == 5)  // no daemon: registration answers

        try daemon.restart()
        let loaded = try await changes.first { $0.keys.contains("warpFactor") }
        #expect(loaded.origin == .resynchronized)
        #expect(defaults.integer(forKey: "warpFactor") == 8)
    }

    @Test(
        "a socket-activated daemon is started by the client's first read",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-socket-activate")))
    func socketActivation() throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"warpFactor","value":8}"#)
        #expect(daemon.terminate() == 0)

        let socketPath = daemon.directory + "/activated.socket"
        let activator = Process()
        activator.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-socket-activate")
        activator.arguments = [
            "--listen=" + socketPath, DaemonProcess.binary, "--storage-dir", daemon.storagePath,
            "--socket", daemon.directory + "/unused.socket",
        ]
        activator.environment = daemon.clientEnvironment
        let errors = Pipe()
        activator.standardError = errors
        activator.standardOutput = FileHandle.nullDevice
        let log = LogBuffer()
        log.capture(errors.fileHandleForReading)
        try activator.run()
        defer { if activator.isRunning { activator.terminate(); activator.waitUntilExit() } }
        #expect(log.wait(for: "Listening on", timeout: 10))
        #expect(!log.text.contains("listening on a socket passed"))  // not started yet

        var config = configuration(daemon)
        config.socketPath = socketPath
        let defaults = SharedDefaults(configuration: config)
        #expect(defaults.integer(forKey: "warpFactor") == 8)
        #expect(log.wait(for: "listening on a socket passed by the service manager", timeout: 10))
        defaults.set(9, forKey: "warpFactor")
        #expect(defaults.synchronize())
        #expect(try daemon.storedValues("com.example.BridgeControl") == ["warpFactor": 9])
    }

    @Test("synchronize() returns true only once the writes are on disk")
    func synchronizeIsDurable() throws {
        let daemon = try DaemonProcess(arguments: ["--coalesce-ms", "5000"])  // no early write-behind
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.set(5, forKey: "warpFactor")
        defaults.set(true, forKey: "warp")
        defaults.set("Vulcan", forKey: "favoriteAlien")
        #expect(defaults.synchronize())
        #expect(try daemon.storedValues("com.example.BridgeControl") == ["warpFactor": 5, "warp": true, "favoriteAlien": "Vulcan"])
    }

    @Test("a refused write: read-your-writes first, then synchronize() is false, the cache is corrected and the async forms throw")
    func refusedWrite() async throws {
        let daemon = try DaemonProcess(arguments: ["--max-domain-bytes", "1024"])
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.set("Picard", forKey: "officer")
        #expect(defaults.synchronize())
        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }

        let big = String(repeating: "x", count: 2000)
        daemon.send(SIGSTOP)  // the daemon cannot answer yet: the write is only in the cache
        defaults.set(big, forKey: "officer")
        #expect(defaults.string(forKey: "officer") == big)
        daemon.send(SIGCONT)
        #expect(!defaults.synchronize())
        #expect(defaults.string(forKey: "officer") == "Picard")
        let reverted = try await changes.first { if case .reverted = $0.origin { true } else { false } }
        #expect(reverted.keys == ["officer"])
        guard case .reverted(let refusal) = reverted.origin else { return }
        #expect(refusal.code == .tooLarge && refusal.message.hasSuffix("the limit is 1024"))
        #expect(defaults.synchronize())  // each failure is reported once

        do {
            try await defaults.write(big, forKey: "rank")
            Issue.record("write(_:forKey:) accepted a too-large value")
        } catch {
            guard case .writeRefused(let domain, let refusal) = error else { throw error }
            #expect(domain == "com.example.BridgeControl" && refusal.code == .tooLarge)
        }
        try await defaults.write("Captain", forKey: "rank")
        defaults.set(big, forKey: "favoriteGadget")
        do {
            try await defaults.flush()
            Issue.record("flush() succeeded after a refused write")
        } catch {
            guard case .writeRefused(_, let refusal) = error else { throw error }
            #expect(refusal.code == .tooLarge)
        }
        try await defaults.flush()
        #expect(try daemon.storedValues("com.example.BridgeControl") == ["officer": "Picard", "rank": "Captain"])
    }

    @Test("synchronize() is false, and flush() throws, when the daemon is gone")
    func synchronizeWithoutDaemon() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.set(1, forKey: "warpFactor")
        #expect(defaults.synchronize())
        #expect(daemon.terminate() == 0)
        defaults.set(2, forKey: "warpFactor")
        #expect(!defaults.synchronize())
        await #expect(throws: DefaultsClientError.self) { try await defaults.flush() }
        #expect(defaults.integer(forKey: "warpFactor") == 2)
    }

    @Test("load() loads the search list without blocking; reads then need no daemon")
    func asyncLoad() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(
            daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"warpFactor","value":6}"#,
            #"{"op":"set","domain":"NSGlobalDomain","key":"AppleLocale","value":"en_GB"}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        await defaults.load()
        daemon.send(SIGSTOP)
        defer { daemon.send(SIGCONT) }
        #expect(defaults.integer(forKey: "warpFactor") == 6)
        #expect(defaults.string(forKey: "AppleLocale") == "en_GB")
    }

    @Test("cached reads never touch the socket, and pipelined writes keep their order")
    func cachedReadsAndPipelinedWrites() throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.register(defaults: ["warpFactor": 5])
        #expect(defaults.integer(forKey: "warpFactor") == 5)

        daemon.send(SIGSTOP)  // a daemon that answers nothing
        for _ in 0..<100_000 where defaults.integer(forKey: "warpFactor") != 5 {
            Issue.record("a cached read changed")
        }
        for counter in 0..<500 {
            defaults.set(counter, forKey: "counter")
            defaults.set("\(counter)", forKey: "text")
            if defaults.integer(forKey: "counter") != counter { Issue.record("read-your-writes failed at \(counter)") }
        }
        daemon.send(SIGCONT)
        #expect(defaults.synchronize())
        #expect(try storedJSON(daemon, "com.example.BridgeControl") == (try json(#"{"counter":499,"text":"499"}"#)))
    }
}
