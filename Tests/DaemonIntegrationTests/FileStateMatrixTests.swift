import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Every state a domain file can be in, crossed with every operation that touches it, through
/// the real daemon. The assertion is the same in every cell: each request is answered within
/// ``answerWithin``, other domains keep working, memory stays bounded, the orderly stop finishes
/// at once, the bytes that were in the file are still there or kept beside it, and what a link
/// leads to is never replaced. A new state (in ``FileState/all``, shared with the matrices of
/// the bundle files, the configuration and the Settings app's files) or a new operation is one
/// line.
///
/// A file the daemon may not read is tested as a user who is not root meets it: the tests run
/// as root, who reads anything, so the daemon is started without the capabilities that let root
/// pass file permissions (``FileState/unprivilegedCommandPrefix``), and a file of mode 000 is
/// then refused to it as to any user. A file replaced between a check and the open, again and
/// again, must never be read as the other one: the type and size checks run on the open
/// descriptor (`RegularFile`).
@Suite(.ownThreads) struct FileStateMatrixTests {
    static let domain = "com.example.matrix"
    /// The torn delay (1 s) and the longest deferral of a write (3 s), with room.
    static let answerWithin = 6.0
    /// The most the daemon's heap and stacks may hold after any cell.
    static let memoryBoundKiB = 256 * 1024

    /// The states of every file-state matrix (``FileState/all``); ``contents`` is what they are made of here.
    static let states = FileState.all

    static let halfAPropertyList = Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>rank</key><string>Ens"#.utf8)

    /// A domain file the daemon takes in, the same cut short, and the cap of every property-list reader.
    static let contents = FileState.Contents(
        valid: Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>rank</key><string>Ensign</string></dict></plist>"#.utf8),
        truncated: halfAPropertyList, maximumBytes: PropertyListLimits.maximumFileBytes)

    /// What touches the file, from the daemon's start to its stop.
    enum Operation: String, CaseIterable, Sendable {
        /// The file is there when the daemon starts; the first request loads it.
        case loadAtStart
        /// The file appears while the daemon runs; a `get` loads it.
        case firstGet
        /// A `set` loads it, then `synchronize`.
        case setAndSynchronize
        /// The domain is loaded and written; the file turns into the state; then a `set` and `synchronize`.
        case handEditPickup
    }

    static var cells: [(Int, Operation)] { states.indices.flatMap { state in Operation.allCases.map { (state, $0) } } }

    @Test(arguments: cells)
    func everyRequestIsAnsweredAndNothingIsLost(state index: Int, operation: Operation) throws {
        let state = Self.states[index]
        let cell = "\(state.name), \(operation.rawValue)"
        let daemon = try DaemonProcess(commandPrefix: FileState.unprivilegedCommandPrefix)
        let scratch = daemon.directory + "/scratch"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let path = daemon.storagePath + "/" + Self.domain + ".plist"
        let set = #"{"op":"set","domain":"\#(Self.domain)","key":"warpFactor","value":9}"#

        func answered(_ client: LineSocket, _ line: String) throws -> String {
            let started = Date()
            let reply = try client.request(line, timeout: Self.answerWithin)
            #expect(Date().timeIntervalSince(started) < Self.answerWithin, "\(cell): \(line)")
            #expect(reply.hasPrefix(#"{"ok":"#), "\(cell): \(reply)")
            return reply
        }

        var undo: @Sendable () -> Void = {}
        // What the file held once made (nothing for a FIFO, a folder or a device).
        var bytes: Data?
        func make() {
            undo = state.make(path, scratch, Self.contents)
            bytes = Self.regularFileBytes(at: path)
        }
        switch operation {
        case .loadAtStart:
            make()
            try daemon.restart()
            _ = try answered(try daemon.connect(), #"{"op":"get","domain":"\#(Self.domain)"}"#)
        case .firstGet:
            make()
            _ = try answered(try daemon.connect(), #"{"op":"get","domain":"\#(Self.domain)"}"#)
        case .setAndSynchronize:
            make()
            let client = try daemon.connect()
            _ = try answered(client, set)
            _ = try answered(client, #"{"op":"synchronize"}"#)
        case .handEditPickup:
            let client = try daemon.connect()
            _ = try answered(client, #"{"op":"set","domain":"\#(Self.domain)","key":"rank","value":"Ensign"}"#)
            _ = try answered(client, #"{"op":"synchronize"}"#)
            unlink(path)
            make()
            _ = try answered(client, set)
            _ = try answered(client, #"{"op":"synchronize"}"#)
        }
        defer { undo() }

        // Other domains keep working: written and on disk. (`synchronize` itself answers a failure
        // while a domain that cannot be written stays unwritten, as it must.)
        let other = try daemon.connect()
        #expect(try answered(other, #"{"op":"set","domain":"com.example.other","key":"k","value":1}"#).hasPrefix(#"{"ok":true"#), "\(cell)")
        _ = try answered(other, #"{"op":"synchronize"}"#)
        #expect(try daemon.storedValues("com.example.other") == ["k": 1], "\(cell)")
        #expect(daemon.anonymousResidentKiB() < Self.memoryBoundKiB, "\(cell)")

        let stopping = Date()
        #expect(daemon.terminate() == 0, "\(cell): \(daemon.logText)")
        #expect(Date().timeIntervalSince(stopping) < Self.answerWithin, "\(cell)")
        // A path replaced again and again holds the file of valid bytes once that stops; what it
        // held before is compared with that.
        if state.changesUntilUndone { undo() }

        if let bytes, !bytes.isEmpty {
            let kept = Self.regularFileBytes(at: path) == bytes
                || (daemon.storageListing() + ((try? FileManager.default.contentsOfDirectory(atPath: daemon.statePath)) ?? []))
                    .filter { $0.hasPrefix(Self.domain + ".plist.") }
                    .contains { name in
                        [daemon.storagePath, daemon.statePath].contains { Self.regularFileBytes(at: $0 + "/" + name) == bytes }
                    }
            #expect(kept, "\(cell): the file's bytes are neither in place nor kept beside it; \(daemon.storageListing())")
        }
        // What a link leads to is never replaced by the daemon's file.
        var status = stat()
        if lstat(scratch + "/fifo", &status) == 0 { #expect(status.st_mode & S_IFMT == S_IFIFO, "\(cell)") }
        if lstat(scratch + "/folder", &status) == 0 { #expect(status.st_mode & S_IFMT == S_IFDIR, "\(cell)") }
    }

    /// A regular file's bytes, through any link; nil for anything else, or past the size cap.
    static func regularFileBytes(at path: String) -> Data? {
        guard case .success(let file) = RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes) else { return nil }
        return file.data
    }
}
