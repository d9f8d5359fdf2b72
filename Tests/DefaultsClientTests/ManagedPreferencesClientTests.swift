import DaemonTestSupport
import DefaultsClient
import DefaultsCore
import Foundation
import TestThreads
import Testing

/// Forced keys through the client: reads answer the administrator's value, `objectIsForced`
/// says so, a write to the key is refused, and a managed file changed while the app runs is a
/// change with origin `.managed`.
@Suite(.ownThreads) struct ManagedPreferencesClientTests {
    func write(_ values: [String: PlistValue], to path: String) throws {
        try PropertyListFile.encode(values, format: .xml).write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
    }

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func forcedKeysAreReadRefusedAndFollowed() async throws {
        let managed = FileManager.default.temporaryDirectory.appendingPathComponent("managed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: managed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: managed) }
        let path = managed + "/com.example.BridgeControl.plist"
        try write(["warpFactor": .integer(9)], to: path)
        let daemon = try DaemonProcess(arguments: ["--managed-dir", managed])
        let defaults = SharedDefaults(configuration: configuration(daemon))
        defaults.set("Ensign", forKey: "rank")
        try await defaults.flush()

        #expect(defaults.integer(forKey: "warpFactor") == 9)
        #expect(defaults.objectIsForced(forKey: "warpFactor"))
        #expect(!defaults.objectIsForced(forKey: "rank"))
        #expect(defaults.objectIsForced(forKey: "warpFactor", inDomain: "com.example.BridgeControl"))
        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }
        defaults.set(5, forKey: "warpFactor")
        let reverted = try await changes.first { if case .reverted = $0.origin { true } else { false } }
        if case .reverted(let error) = reverted.origin { #expect(error.code == .forced && reverted.keys == ["warpFactor"]) }
        #expect(defaults.integer(forKey: "warpFactor") == 9)

        try write(["warpFactor": .integer(8), "shields": .bool(true)], to: path)
        let change = try await changes.first { $0.origin == .managed }
        #expect(change.keys == ["warpFactor", "shields"])
        #expect(defaults.integer(forKey: "warpFactor") == 8 && defaults.bool(forKey: "shields"))
        #expect(defaults.objectIsForced(forKey: "shields"))

        #expect(unlink(path) == 0)
        // The second managed change: nothing is forced any more.
        #expect(await changes.wait { $0.filter { $0.origin == .managed }.count == 2 })
        #expect(changes.items.last { $0.origin == .managed }?.keys == ["warpFactor", "shields"])
        #expect(!defaults.objectIsForced(forKey: "warpFactor") && !defaults.objectIsForced(forKey: "shields"))
        #expect(defaults.object(forKey: "warpFactor") == nil && defaults.object(forKey: "shields") == nil)
        #expect(defaults.string(forKey: "rank") == "Ensign")
    }
}
