import DaemonTestSupport
import DefaultsClient
import DefaultsCore
import Foundation
import TestThreads
import Testing

/// By-host domains through the client: reads follow the shared search list (each domain's
/// current-host variant just before it), and a change to a by-host variant is a change.
@Suite(.ownThreads) struct ByHostClientTests {
    @Test func readsTakeTheCurrentHostVariantFirstAndFollowItsChanges() async throws {
        let daemon = try DaemonProcess()
        let app = "com.example.BridgeControl"
        _ = try rawRequest(
            daemon,
            #"{"op":"set","domain":"\#(app)","key":"scale","value":1}"#,
            #"{"op":"set","domain":"\#(app)","host":"current","key":"scale","value":2}"#,
            #"{"op":"set","domain":"\#(app)","key":"theme","value":"dark"}"#,
            #"{"op":"set","domain":"NSGlobalDomain","host":"current","key":"theme","value":"light"}"#,
            #"{"op":"set","domain":"NSGlobalDomain","host":"current","key":"locale","value":"en_GB"}"#,
            #"{"op":"set","domain":"NSGlobalDomain","key":"locale","value":"fr_FR"}"#)
        let defaults = SharedDefaults(configuration: configuration(daemon))
        #expect(defaults.integer(forKey: "scale") == 2)
        #expect(defaults.string(forKey: "theme") == "dark")
        #expect(defaults.string(forKey: "locale") == "en_GB")

        let (changes, task) = Recorder.of(defaults.changes())
        defer { task.cancel() }
        _ = try rawRequest(daemon, #"{"op":"remove","domain":"\#(app)","host":"current","key":"scale"}"#)
        let change = try await changes.first { $0.keys.contains("scale") }
        #expect(change.domain == app)
        if case .remote = change.origin {} else { Issue.record("origin \(change.origin)") }
        #expect(defaults.integer(forKey: "scale") == 1, "the any-host value again")
    }
}
