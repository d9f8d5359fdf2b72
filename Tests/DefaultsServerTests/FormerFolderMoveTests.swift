import DefaultsCore
@testable import DefaultsServer
import Foundation
import Logging
import TestThreads
import Testing

/// FormerFolderMove on real folders: what goes where, and a move a crash cut short.
@Suite(.ownThreads) struct FormerFolderMoveTests {
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("former-\(UUID().uuidString.prefix(8))").path
    var former: String { root + "/config/defaultsd" }
    var shared: String { root + "/config" }
    var state: String { root + "/state" }

    func put(_ path: String, _ text: String = "x") throws {
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func read(_ path: String) -> String? { (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) } }

    @Test("a move cut short by a crash is finished by the next start: every file ends in one place, none is lost")
    func aMoveCutShortIsFinished() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try put(former + "/com.a.plist", "a")
        try put(former + "/.GlobalPreferences.plist", "global")
        try put(former + "/.defaultsd-generations.plist", "ledger")
        try put(former + "/com.a.plist.rejected-2026-11-25T10.00.00Z", "rejected")
        try put(former + "/.tmp-leftover", "partial")
        try put(former + "/defaultsd.json", "{}")
        try put(former + "/ByHost/com.a.machine.plist", "by-host")
        // Where a crash left the first move: com.b already in the shared folder, the by-host file too.
        try put(shared + "/com.b.plist", "b")
        try put(shared + "/ByHost/com.b.machine.plist", "by-host b")

        let move = FormerFolderMove(former: former, shared: shared, state: state)
        let first = move.run()
        #expect(first.failed.isEmpty)
        #expect(Set(first.moved.map(\.to)) == [
            shared + "/com.a.plist", shared + "/.GlobalPreferences.plist", state + "/.defaultsd-generations.plist",
            state + "/com.a.plist.rejected-2026-11-25T10.00.00Z", shared + "/ByHost/com.a.machine.plist",
        ])
        #expect(read(shared + "/com.a.plist") == "a" && read(shared + "/com.b.plist") == "b")
        #expect(read(shared + "/ByHost/com.a.machine.plist") == "by-host" && read(shared + "/ByHost/com.b.machine.plist") == "by-host b")
        #expect(read(state + "/.defaultsd-generations.plist") == "ledger")
        #expect(try FileManager.default.contentsOfDirectory(atPath: former) == ["defaultsd.json"], "the temporary file removed, the configuration kept")

        // A crash between two renames: run again from any point, and nothing more moves.
        #expect(move.run().moved.isEmpty)
    }

    @Test("nothing moves into a shared folder others can write: the files stay where they are")
    func anUnsafeSharedFolderMovesNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try put(former + "/com.a.plist", "a")
        try put(former + "/.defaultsd-generations.plist", "ledger")
        #expect(chmod(shared, 0o777) == 0)
        FormerFolderMove.run(former: former, shared: shared, state: state, machineID: nil, logger: Logger(label: "test"))
        #expect(read(former + "/com.a.plist") == "a" && read(former + "/.defaultsd-generations.plist") == "ledger")
        #expect(!FileManager.default.fileExists(atPath: shared + "/com.a.plist"))
        #expect(!FileManager.default.fileExists(atPath: state + "/.defaultsd-generations.plist"))

        // Once the folder is mended, the next start moves them.
        #expect(chmod(shared, 0o755) == 0)
        FormerFolderMove.run(former: former, shared: shared, state: state, machineID: nil, logger: Logger(label: "test"))
        #expect(read(shared + "/com.a.plist") == "a" && read(state + "/.defaultsd-generations.plist") == "ledger")
    }

    @Test("a domain Foundation already wrote in the shared folder keeps its file; the former one is kept in the state directory")
    func aConflictKeepsBoth() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try put(former + "/com.both.plist", "defaultsd")
        try put(shared + "/com.both.plist", "foundation")
        let result = FormerFolderMove(former: former, shared: shared, state: state).run()
        #expect(result.moved == [FormerFolderMove.Move(from: former + "/com.both.plist", to: state + "/com.both.plist.before-sharing", keptAside: true)])
        #expect(read(shared + "/com.both.plist") == "foundation" && read(state + "/com.both.plist.before-sharing") == "defaultsd")
        #expect(!FileManager.default.fileExists(atPath: former), "an emptied former folder is removed")
    }

    @Test("this machine's by-host files take Foundation's names; another machine's stay; Foundation's own file wins and ours is kept aside")
    func byHostFilesAreRenamed() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: true)
        try put(shared + "/ByHost/com.a.mine.plist", "a")
        try put(shared + "/ByHost/.GlobalPreferences.mine.plist", "global")
        try put(shared + "/ByHost/com.b.mine.plist", "ours")
        try put(shared + "/ByHost/com.b..plist", "foundation's")
        try put(shared + "/ByHost/com.a.other.plist", "another machine")

        let outcome = FormerFolderMove.renameByHostFiles(in: shared, machineID: "mine", state: state)
        #expect(outcome.failed.isEmpty)
        #expect(read(shared + "/ByHost/com.a..plist") == "a")
        #expect(read(shared + "/ByHost/.GlobalPreferences..plist") == "global")
        #expect(read(shared + "/ByHost/com.b..plist") == "foundation's")
        #expect(read(state + "/ByHost-com.b.mine.plist.before-sharing") == "ours")
        #expect(read(shared + "/ByHost/com.a.other.plist") == "another machine")
        #expect(outcome.moved.filter(\.keptAside).map(\.from) == [shared + "/ByHost/com.b.mine.plist"])
        // Once: nothing is left to rename.
        #expect(FormerFolderMove.renameByHostFiles(in: shared, machineID: "mine", state: state).moved.isEmpty)
    }
}
