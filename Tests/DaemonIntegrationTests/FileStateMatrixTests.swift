import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import Testing

/// Every state a domain file can be in, crossed with every operation that touches it, through
/// the real daemon. The assertion is the same in every cell: each request is answered within
/// ``answerWithin``, other domains keep working, memory stays bounded, the orderly stop finishes
/// at once, the bytes that were in the file are still there or kept beside it, and what a link
/// leads to is never replaced. A new state or a new operation is one line.
///
/// Not in the table: a file the daemon may not read (its user is root in the tests, who reads
/// anything; the type and size checks run on the open descriptor, so a file replaced between a
/// check and the open cannot pass one and be read as another (`RegularFile`).
@Suite struct FileStateMatrixTests {
    static let domain = "com.example.matrix"
    /// The torn delay (1 s) and the longest deferral of a write (3 s), with room.
    static let answerWithin = 6.0
    /// The most the daemon's heap and stacks may hold after any cell.
    static let memoryBoundKiB = 256 * 1024

    /// A state made at the domain file's `path`, with `scratch` for what a link leads to. It
    /// answers what undoes it after the cell (a writer's descriptor held open).
    struct State: Sendable {
        let name: String
        let make: @Sendable (_ path: String, _ scratch: String) -> (@Sendable () -> Void)
    }

    static let halfAPropertyList = Data(#"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0"><dict><key>rank</key><string>Ens"#.utf8)

    static let states: [State] = [
        State(name: "absent") { _, _ in {} },
        State(name: "0 bytes") { path, _ in
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            return {}
        },
        State(name: "half-written, its writer still holding it open") { path, _ in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            halfAPropertyList.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
            return { close(fd) }
        },
        State(name: "truncated mid-element") { path, _ in
            _ = FileManager.default.createFile(atPath: path, contents: halfAPropertyList)
            return {}
        },
        State(name: "binary with shared references past the expansion cap") { path, _ in
            _ = FileManager.default.createFile(atPath: path, contents: Data(HostilePropertyLists.sharedData(references: 1 << 12, bytes: 1 << 14)))
            return {}
        },
        State(name: "over the size cap") { path, _ in
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            _ = truncate(path, off_t(PropertyListLimits.maximumFileBytes + 1))
            return {}
        },
        State(name: "a dangling symlink") { path, scratch in
            _ = symlink(scratch + "/nowhere.plist", path)
            return {}
        },
        State(name: "a symlink loop") { path, _ in
            _ = symlink(path + ".other", path)
            _ = symlink(path, path + ".other")
            return {}
        },
        State(name: "a symlink to a FIFO") { path, scratch in
            _ = mkfifo(scratch + "/fifo", 0o600)
            _ = symlink(scratch + "/fifo", path)
            return {}
        },
        State(name: "a symlink to /dev/zero") { path, _ in
            _ = symlink("/dev/zero", path)
            return {}
        },
        State(name: "a symlink to a directory") { path, scratch in
            _ = mkdir(scratch + "/folder", 0o700)
            _ = symlink(scratch + "/folder", path)
            return {}
        },
        State(name: "a FIFO") { path, _ in
            _ = mkfifo(path, 0o600)
            return {}
        },
        State(name: "a directory") { path, _ in
            _ = mkdir(path, 0o700)
            return {}
        },
    ]

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
        let daemon = try DaemonProcess()
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
            undo = state.make(path, scratch)
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
