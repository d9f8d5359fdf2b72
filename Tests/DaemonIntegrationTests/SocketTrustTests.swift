import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Clients check whom they talk to before their first request: a socket directory that another
/// user owns or could write, or a server that runs as another user, is refused with a clear
/// message, and nothing is sent. `defaults` and `LineSocket` here; the client library and the
/// Settings app in their own tests.
@Suite(.enabled(if: getuid() == 0, "making files and processes of another user needs root"), .ownThreads)
struct SocketTrustTests {
    func folder(owner: uid_t, group: gid_t? = nil, mode: mode_t, in parent: String? = nil) throws -> String {
        let path = (parent ?? FileManager.default.temporaryDirectory.path) + "/trust-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(chown(path, owner, group ?? owner) == 0 && chmod(path, mode) == 0)
        return path
    }

    @Test("a socket directory another user owns, or anyone may write, is refused before connecting")
    func untrustedDirectories() throws {
        let cases: [(uid_t, gid_t, mode_t, String)] = [
            (65534, 65534, 0o700, "is owned by uid 65534"),
            (0, 0, 0o777, "can be written by its group or others (mode 777)"),
            (0, 65534, 0o770, "can be written by its group or others (mode 770)"),
        ]
        for (owner, group, mode, problem) in cases {
            let directory = try folder(owner: owner, group: group, mode: mode)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let run = try DefaultsCommandTests.run(nil, ["read", "com.example.x"], socket: directory + "/socket")
            #expect(run.status != 0)
            #expect(run.message.contains("the daemon's socket directory \(directory) is not safe: \(directory) \(problem)"), "\(run.err)")
            #expect(run.message.contains("refusing to connect"))
            #expect(throws: DefaultsError.self) { try LineSocket(path: directory + "/socket") }
        }
        // A link to the directory counts as its target, and must itself be the user's or root's.
        let target = try folder(owner: 0, mode: 0o700)
        defer { try? FileManager.default.removeItem(atPath: target) }
        let link = target + "-link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        defer { try? FileManager.default.removeItem(atPath: link) }
        #expect(lchown(link, 65534, 65534) == 0)
        let run = try DefaultsCommandTests.run(nil, ["read", "com.example.x"], socket: link + "/socket")
        #expect(run.message.contains("is a link owned by uid 65534"), "\(run.err)")
    }

    @Test("a folder above the socket directory that others may write is refused; a sticky one (as /tmp) is not")
    func foldersAbove() throws {
        let open = try folder(owner: 0, mode: 0o777)
        defer { try? FileManager.default.removeItem(atPath: open) }
        let inOpen = try folder(owner: 0, mode: 0o700, in: open)
        let refused = try DefaultsCommandTests.run(nil, ["read", "com.example.x"], socket: inOpen + "/socket")
        #expect(refused.message.contains("is not safe: \(open) can be written by its group or others (mode 777)"), "\(refused.err)")

        let sticky = try folder(owner: 0, mode: 0o1777)
        defer { try? FileManager.default.removeItem(atPath: sticky) }
        let inSticky = try folder(owner: 0, mode: 0o700, in: sticky)
        let accepted = try DefaultsCommandTests.run(nil, ["read", "com.example.x"], socket: inSticky + "/socket")
        #expect(accepted.status != 0, "nothing listens there")
        #expect(!accepted.message.contains("refusing to connect"), "\(accepted.err)")
    }

    @Test("a folder its owner's private group may write is the owner's own (umask 002 with user private groups)")
    func aPrivateGroup() throws {
        let privateGroup = try folder(owner: 0, group: 0, mode: 0o770)
        defer { try? FileManager.default.removeItem(atPath: privateGroup) }
        let run = try DefaultsCommandTests.run(nil, ["read", "com.example.x"], socket: privateGroup + "/socket")
        #expect(run.status != 0, "nothing listens there")
        #expect(!run.message.contains("refusing to connect"), "\(run.err)")
    }

    @Test("a server that runs as another user is refused, and its forged answer never read")
    func aForeignServer() throws {
        let server = try ForeignServer()
        let run = try DefaultsCommandTests.run(nil, ["read", "com.example.x", "k"], socket: server.socketPath)
        #expect(run.status != 0)
        #expect(!run.out.contains("forged"))
        #expect(run.message.contains("runs as uid 65534"), "\(run.err)")
        #expect(run.message.contains("neither you nor root; refusing to talk to it"))
        do {
            _ = try LineSocket(path: server.socketPath)
            Issue.record("LineSocket talked to another user's server")
        } catch let error as DefaultsError {
            #expect(error.code == .notPermitted)
        }
    }

    @Test("the daemon's own socket, in its private directory, is trusted")
    func theOwnDaemon() throws {
        let daemon = try DaemonProcess()
        #expect(try daemon.connect().request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
        #expect(try DefaultsCommandTests.run(daemon, ["domains"]).status == 0)
    }
}
