import DefaultsClient
import DefaultsCore
import DaemonTestSupport
import Foundation
import TestThreads
import Testing

/// The client library checks whom it talks to (``SocketTrust``): a server that runs as another
/// user is refused before the first request, by `DaemonChannel` (the Settings app's connection)
/// and by `SharedDefaults`, which keeps its values and never reads the forged answer.
@Suite(.enabled(if: getuid() == 0, "running a server as another user needs root"), .ownThreads)
struct SocketTrustClientTests {
    @Test func aDaemonChannelRefusesAnotherUsersServer() async throws {
        let server = try ForeignServer()
        do {
            _ = try await DaemonChannel.connect(socketPath: server.socketPath)
            Issue.record("DaemonChannel connected to another user's server")
        } catch let error as DefaultsError {
            #expect(error.code == .notPermitted)
            #expect(error.message.contains("runs as uid 65534"))
        }
    }

    @Test func sharedDefaultsNeverReadsAForgedAnswer() throws {
        let server = try ForeignServer()
        let defaults = SharedDefaults(configuration: DefaultsConfiguration(
            socketPath: server.socketPath, appDomain: "com.example.trust", loadTimeout: .milliseconds(300),
            synchronizeTimeout: .milliseconds(300)))
        #expect(defaults.string(forKey: "k") == nil)
        #expect(!defaults.synchronize(), "nothing reached a daemon")
    }
}
