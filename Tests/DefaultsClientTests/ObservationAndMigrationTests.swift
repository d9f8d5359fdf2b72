import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import LocalServices
import Observation
import TestThreads
import Testing

/// A model a SwiftUI-style view observes: its properties are defaults.
@Observable final class BridgeModel {
    @ObservationIgnored let defaults: SharedDefaults
    init(defaults: SharedDefaults) { self.defaults = defaults }
    var warpFactor: Double {
        get { defaults[.warp] }
        set { defaults[.warp] = newValue }
    }
}

/// Observation, change details and migrations, through the real daemon, with changes made by
/// other processes (`defaults write`) and by hand edits.
@Suite("Observation, change details and migrations", .serialized, .ownThreads)
struct ObservationAndMigrationTests {
    static let domain = "com.example.observed"

    /// Fires `onChange` once, the next time a default read in `read` changes.
    func tracking(_ read: @escaping () -> Void) -> Recorder<Bool> {
        let fired = Recorder<Bool>()
        withObservationTracking(read) { fired.append(true) }
        return fired
    }

    @Test func observationIsToldOfAnotherProcesssWriteAndOfAHandEdit() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: Self.domain))
        await defaults.load()
        #expect(defaults[.warp] == 5)

        let byCommand = tracking { _ = defaults[.warp] }
        let unrelated = tracking { _ = defaults[.launches] }
        #expect(try defaultsCommand(daemon, "write", Self.domain, "warpFactor", "-float", "8").status == 0)
        #expect(await byCommand.wait { !$0.isEmpty })
        #expect(defaults[.warp] == 8)
        #expect(unrelated.items.isEmpty, "a key not read is not reported")

        // An @Observable model whose property is a default.
        let model = BridgeModel(defaults: defaults)
        let byEdit = tracking { _ = model.warpFactor }
        let path = daemon.storagePath + "/\(Self.domain).plist"
        try PropertyListFile.encode(["warpFactor": 9.5], format: .xml).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        #expect(await byEdit.wait { !$0.isEmpty })
        #expect(model.warpFactor == 9.5)
    }

    @Test func eachChangeCarriesItsKeyOldAndNewValueAndOrigin() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: Self.domain))
        await defaults.load()
        let (changes, task) = Recorder.of(defaults.changes(of: .dotted))
        defer { task.cancel() }
        defaults[.dotted] = "fill"
        let local = try await changes.first { _ in true }
        #expect(local.key == "display.scale.mode" && local.oldValue == "fit" && local.newValue == "fill" && local.origin == .local)
        #expect(try defaultsCommand(daemon, "write", Self.domain, "display.scale.mode", "stretch").status == 0)
        let remote = try await changes.first { $0.newValue == "stretch" }
        #expect(remote.oldValue == "fill")
        guard case .remote(let writer) = remote.origin else {
            Issue.record("origin \(remote.origin)")
            return
        }
        #expect(writer.pid != getpid() && writer.pid > 0, "another process: \(writer)")
    }

    /// Changes that come one right after another are each reported with the value it brought.
    @Test func changesInQuickSuccessionEachCarryTheirOwnValue() async throws {
        let daemon = try DaemonProcess()
        let defaults = SharedDefaults(configuration: configuration(daemon, appDomain: Self.domain))
        await defaults.load()
        let (changes, task) = Recorder.of(defaults.changes(of: .dotted))
        defer { task.cancel() }
        _ = try rawRequest(
            daemon, #"{"op":"set","domain":"\#(Self.domain)","key":"display.scale.mode","value":"a"}"#,
            #"{"op":"set","domain":"\#(Self.domain)","key":"display.scale.mode","value":"b"}"#,
            #"{"op":"set","domain":"\#(Self.domain)","key":"display.scale.mode","value":"c"}"#)
        _ = try await changes.first { $0.newValue == "c" }
        #expect(changes.items.map { "\($0.oldValue)→\($0.newValue)" } == ["fit→a", "a→b", "b→c"])
        #expect(changes.items.allSatisfy { if case .remote = $0.origin { true } else { false } })
    }

    /// Ten processes of an app start at once, each running the same two migrations: each runs
    /// once, the record says so, and the values are converted once.
    @Test func aMigrationRacedByTenProcessesRunsOnce() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"{"op":"apply","domain":"com.example.migrated","set":{"warpSpeed":7,"speed":"fast"}}"#)
        let processes = try (0..<10).map { _ in try BridgeControlProcess(daemon, ["migrate"], appDomain: "com.example.migrated") }
        var ran = 0
        for process in processes {
            #expect(try await process.exitStatus(timeout: 120) == 0)
            ran += process.lines.items.filter { $0.hasPrefix("ran: ") }.count
        }
        #expect(ran == 2, "each migration ran in exactly one process")
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"com.example.migrated"}"#)
            == [#"{"ok":true,"value":{"defaultsd.migrations":["rename warpSpeed to warpFactor","convert speed"],"speed":9,"warpFactor":7},"generation":3}"#])
    }

    /// The example's `@Observable` model, in its own process, is told of a change made by
    /// `defaults write` in another, and of a Codable value another process added.
    @Test func theExamplesObservableModelSeesOtherProcessesChanges() async throws {
        let daemon = try DaemonProcess()
        let observer = try BridgeControlProcess(daemon, ["observe"])
        _ = try await observer.lines.first { $0 == "warp factor 5.0; away team: " }
        #expect(try defaultsCommand(daemon, "write", "com.example.BridgeControl", "warpFactor", "-float", "8").status == 0)
        _ = try await observer.lines.first { $0 == "warp factor 8.0; away team: " }
        let beam = try BridgeControlProcess(daemon, ["beam", "Riker", "Commander"])
        #expect(try await beam.exitStatus() == 0)
        _ = try await observer.lines.first { $0 == "warp factor 8.0; away team: Riker" }
        #expect(try rawRequest(daemon, #"{"op":"get","domain":"com.example.BridgeControl","key":"awayTeam"}"#).first?
            .hasPrefix(#"{"ok":true,"value":[{"name":"Riker","rank":"Commander"}]"#) == true)
    }

    /// A typed key's default is registered with the daemon for the app's domain while the app
    /// runs: `defaults read-effective` shows it, and no longer once the app has stopped.
    @Test func aRunningAppsKeyDefaultsShowInReadEffective() async throws {
        let daemon = try DaemonProcess()
        _ = try rawRequest(daemon, #"{"op":"set","domain":"com.example.BridgeControl","key":"officer","value":"Picard"}"#)
        let app = try BridgeControlProcess(daemon, ["observe"])
        _ = try await app.lines.first { $0.hasPrefix("warp factor 5.0") }
        let shown = try defaultsCommand(daemon, "read-effective", "com.example.BridgeControl")
        #expect(shown.output == """
            {
                awayTeam =     (
                );  // registration
                officer = Picard;  // user
                warpFactor = 5;  // registration
            }

            """, "\(shown.output) \(shown.errors)")
        app.process.terminate()
        _ = try await app.exitStatus()
        // The daemon forgets them when the connection ends, which it learns as the process exits.
        var after = try defaultsCommand(daemon, "read-effective", "com.example.BridgeControl").output
        for _ in 0..<100 where after.contains("registration") {
            try await Task.sleep(for: .milliseconds(20))
            after = try defaultsCommand(daemon, "read-effective", "com.example.BridgeControl").output
        }
        #expect(after == "{\n    officer = Picard;  // user\n}\n")
    }
}
