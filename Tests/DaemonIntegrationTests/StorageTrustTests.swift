import DaemonTestSupport
import Foundation
import LocalServices
import TestThreads
import Testing

/// The daemon writes through the links it finds among its domain files, so a storage directory
/// that another user could change would let them aim its writes at any file of the user's. It
/// refuses to start on one, says which folder and why, and never opens its socket.
@Suite(.enabled(if: getuid() == 0, "folders of another user need root"), .ownThreads)
struct StorageTrustTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("storage-trust-\(UUID().uuidString.prefix(8))").path

    func folder(_ name: String, owner: uid_t = 0, group: gid_t = 0, mode: mode_t) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(chown(path, owner, group) == 0 && chmod(path, mode) == 0)
        return path
    }

    /// Runs the daemon on `storage` until it ends by itself.
    func start(storage: String) throws -> FinishedRun {
        try DaemonProcess.runToCompletion([
            "--storage-dir", storage, "--state-dir", root + "/state", "--socket", root + "/socket", "--managed-dir", root + "/managed",
        ])
    }

    @Test("a storage directory others may write, or another user owns, or below a folder others may write, stops the daemon")
    func untrustedStorage() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let open = try folder("open", mode: 0o777)
        let foreign = try folder("foreign", owner: 65534, group: 65534, mode: 0o700)
        let sharedGroup = try folder("shared-group", group: 65534, mode: 0o770)
        _ = try folder("open-parent", mode: 0o777)
        let belowOpen = try folder("open-parent/storage", mode: 0o700)
        let cases: [(storage: String, problem: String, mend: Bool)] = [
            (open, "\(open) can be written by its group or others (mode 777)", true),
            (foreign, "\(foreign) is owned by uid 65534", false),
            (sharedGroup, "\(sharedGroup) can be written by its group or others (mode 770)", true),
            (belowOpen, "\(root)/open-parent can be written by its group or others (mode 777)", true),
        ]
        for (storage, problem, mend) in cases {
            let run = try start(storage: storage)
            #expect(run.status != 0, "\(storage)")
            #expect(run.errors.contains("\(storage) is not safe to keep preferences in: \(problem), so another user could replace them"),
                    "\(run.errors)")
            #expect(run.errors.contains("chmod go-w") == mend, "\(run.errors)")
            // The last lines say it never started, then why; nothing reads as an orderly stop.
            let notStarted = run.errors.range(of: "defaultsd did not start"), reason = run.errors.range(of: "defaultsd: \(storage)")
            #expect(notStarted != nil && reason != nil && notStarted!.lowerBound < reason!.lowerBound, "\(run.errors)")
            #expect(!run.errors.contains("every write is on disk"), "\(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: root + "/socket"), "the socket never opens")
        }
    }

    /// The daemon listens only where its clients would connect: the clients' rule, not one of its own.
    @Test("a socket directory a client would refuse stops the daemon before it listens")
    func untrustedSocketDirectory() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let storage = try folder("storage", mode: 0o700)
        let cases: [(directory: String, problem: String)] = [
            (try folder("open-socket", mode: 0o777), "can be written by its group or others (mode 777)"),
            (try folder("foreign-socket", owner: 65534, group: 65534, mode: 0o700), "is owned by uid 65534"),
        ]
        for (directory, problem) in cases {
            let run = try DaemonProcess.runToCompletion([
                "--storage-dir", storage, "--state-dir", root + "/state", "--socket", directory + "/socket",
                "--managed-dir", root + "/managed",
            ])
            #expect(run.status != 0, "\(directory)")
            #expect(run.errors.contains("socket directory \(directory) is not safe: \(directory) \(problem)"), "\(run.errors)")
            #expect(run.errors.contains("refusing to listen there"), "\(run.errors)")
            #expect(!FileManager.default.fileExists(atPath: directory + "/socket"), "the socket never opens")
        }
    }

    @Test("a folder its owner's private group may write, and one below a sticky folder, are the user's own")
    func trustedStorage() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try folder("sticky", mode: 0o1777)
        for storage in [try folder("private-group", mode: 0o770), try folder("sticky/storage", mode: 0o700)] {
            let daemon = try DaemonProcess(arguments: ["--storage-dir", storage])
            #expect(try daemon.connect().request(#"{"op":"set","domain":"com.example.trust","key":"k","value":1}"#)
                == #"{"ok":true,"generation":1}"#)
            #expect(try daemon.connect().request(#"{"op":"synchronize"}"#) == #"{"ok":true}"#)
            #expect(FileManager.default.fileExists(atPath: storage + "/com.example.trust.plist"))
        }
    }
}
