@testable import LocalServices
import Foundation
import TestThreads
import Testing

/// What a test starts ends with the test's process, however it ends: the leash's watcher acts
/// when the pipe only this process writes to closes, as it does when the process is killed.
@Suite(.ownThreads) struct ProcessLeashTests {
    /// Waits until `process` has ended, at most `seconds`; true when it has.
    func ended(_ process: Process, within seconds: Double) -> Bool {
        let done = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in done.signal() }
        return !process.isRunning || done.wait(timeout: .now() + seconds) == .success
    }

    @Test("the leash kills a frozen process started in its folder, started after it, and removes the folder")
    func killsWhatRunsInItsFolder() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("leash-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let leash = try ProcessLeash(directory: directory)
        // Started after the leash: had it inherited the pipe's write end, the pipe would stay open.
        #expect(FileManager.default.createFile(atPath: directory + "/log", contents: nil))
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: "/usr/bin/tail")
        follower.arguments = ["-f", directory + "/log"]
        try follower.run()
        kill(follower.processIdentifier, SIGSTOP)

        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            leash.release()
            released.signal()
        }
        #expect(released.wait(timeout: .now() + 10) == .success, "the watcher acts and ends")
        #expect(ended(follower, within: 10), "the frozen process is killed")
        #expect(follower.terminationReason == .uncaughtSignal && follower.terminationStatus == SIGKILL)
        #expect(!FileManager.default.fileExists(atPath: directory), "the watcher removes the folder after the kill")
    }

    @Test("an etcd cluster's members, a frozen one too, end when the leash lets go",
          .enabled(if: EtcdCluster.isInstalled, "etcd is not installed (apt-get install etcd-server etcd-client)"))
    func clusterMembersEndWithTheProcess() throws {
        let cluster = try EtcdCluster(size: 1)
        cluster.freeze(0)
        let member = try #require(cluster.members[0].process)
        let released = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            cluster.leash.release()
            released.signal()
        }
        #expect(released.wait(timeout: .now() + 10) == .success, "the watcher acts and ends")
        #expect(ended(member, within: 10))
        #expect(member.terminationReason == .uncaughtSignal && member.terminationStatus == SIGKILL)
        #expect(!FileManager.default.fileExists(atPath: cluster.directory))
    }
}
