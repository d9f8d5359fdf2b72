import DefaultsCore
@testable import DefaultsServer
import Foundation
import Logging
import NIOCore
import NIOPosix
import TestThreads
import Testing

/// The store on a real event loop and writer thread, against a temporary directory.
final class StoreFixture {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let writer = NIOThreadPool(numberOfThreads: 1)
    let directory: String
    let store: DefaultsStore

    /// The machine id that names the fixture's by-host files.
    static let machineID = "0123456789abcdef0123456789abcdef"

    /// A new store; with `directory`, one restarted on an earlier fixture's files.
    init(
        maximumDomainBytes: Int = 4 << 20, coalesce: TimeAmount = .milliseconds(20), hostID: String? = StoreFixture.machineID,
        directory: String? = nil
    ) {
        self.directory = directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID().uuidString)").path
        var configuration = DaemonConfiguration(socketPath: self.directory + "/socket", storageDirectory: self.directory)
        configuration.maximumDomainBytes = maximumDomainBytes
        configuration.coalesceDelay = coalesce
        writer.start()
        let files = DomainFiles(directory: self.directory, format: .xml, hostID: hostID)
        try! files.prepare()
        let loop = group.next()
        store = DaemonAssembly.server(
            on: loop, configuration: configuration, files: files,
            writer: ThreadedFileWriter(eventLoop: loop, thread: writer, files: files), scannerThread: writer, daemonUID: getuid(),
            logger: Logger(label: "test")
        ).store
    }

    /// The store, handed to its own loop (NIOLoopBound can only be made there): `value` traps anywhere else.
    struct OnItsLoop: @unchecked Sendable {
        private let store: DefaultsStore
        init(_ store: DefaultsStore) { self.store = store }
        var value: DefaultsStore {
            store.eventLoop.preconditionInEventLoop()
            return store
        }
    }

    /// Runs `body` on the store's loop: the only place the store may be used.
    func onLoop<T: Sendable>(_ body: @escaping @Sendable (DefaultsStore) throws -> T) throws -> T {
        let store = OnItsLoop(self.store)
        return try self.store.eventLoop.submit { try body(store.value) }.wait()
    }

    func onLoop<T: Sendable>(_ body: @escaping @Sendable (DefaultsStore) -> EventLoopFuture<T>) throws -> T {
        let store = OnItsLoop(self.store)
        return try self.store.eventLoop.flatSubmit { body(store.value) }.wait()
    }

    deinit {
        try? writer.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
        try? FileManager.default.removeItem(atPath: directory)
    }
}

@Suite(.ownThreads) struct StoreTests {
    let domain = try! DomainName("com.example.bridge")

    @Test func applyIsAllOrNothingUnderTheSizeLimit() throws {
        let fixture = StoreFixture(maximumDomainBytes: 64)
        let domain = self.domain
        let generation = try fixture.onLoop { store in
            try store.apply(Changeset(domain: domain, changes: ["a": "small"]), origin: .file)
        }
        #expect(generation == 1)
        let error = #expect(throws: DefaultsError.self) {
            try fixture.onLoop { store in
                try store.apply(Changeset(domain: domain, changes: ["b": "ok", "c": .string(String(repeating: "x", count: 100))]), origin: .file)
            }
        }
        #expect(error?.code == .tooLarge)
        let after = try fixture.onLoop { store in try store.state(of: domain) }
        #expect(after.values == ["a": "small"])
        #expect(after.generation == 1)
    }

    /// One size rule for every write, whole-domain replacement included: past the limit only
    /// when smaller than before, so a domain left past a lowered limit can still shrink.
    @Test func aDomainPastALoweredLimitMayShrinkByAnyWriteButNotGrow() throws {
        let fixture = StoreFixture(maximumDomainBytes: 8192)
        let domain = self.domain
        let large = String(repeating: "x", count: 2000)
        let size = try fixture.onLoop { store -> Int in
            try store.apply(Changeset(domain: domain, changes: ["a": .string(large), "b": .string(large)]), origin: .file)
            var configuration = DaemonConfiguration(socketPath: "/unused/socket", storageDirectory: "/unused")
            configuration.maximumDomainBytes = 1024
            store.reconfigure(configuration)
            // Still past the limit, but smaller: taken, as `replaceDomain` and `import` send it.
            try store.replace(domain, with: ["a": .string(large), "b": "small"], origin: .file)
            return try store.state(of: domain).size
        }
        #expect(size > 1024 && size < 2 * 2000)
        let error = #expect(throws: DefaultsError.self) {
            try fixture.onLoop { store in
                try store.replace(domain, with: ["a": .string(large), "b": .string(large)], origin: .file)
            }
        }
        #expect(error?.code == .tooLarge)
        #expect(try fixture.onLoop { store in try store.state(of: domain).values["b"] } == "small")
    }

    @Test func theDomainUsedLastStaysRightWhileOthersAreLoaded() throws {
        let fixture = StoreFixture()
        let domain = self.domain
        let generations = try fixture.onLoop { store -> [Int64] in
            var generations = [try store.apply(Changeset(domain: domain, changes: ["k": 1]), origin: .file)]
            // Enough new domains to grow the table several times, each remembered as used last.
            for index in 0..<40 {
                let other = try DomainName("com.example.other\(index)")
                try store.apply(Changeset(domain: other, changes: ["k": .integer(Int64(index))]), origin: .file)
                generations.append(try store.apply(Changeset(domain: domain, changes: ["k": .integer(Int64(index + 2))]), origin: .file))
            }
            return generations
        }
        #expect(generations == Array(1...41))
        let values = try fixture.onLoop { store in (try store.state(of: domain).values, try store.values(of: DomainName("com.example.other39"))) }
        #expect(values.0 == ["k": 41])
        #expect(values.1 == ["k": 39])
    }

    @Test func sizeIsTrackedIncrementally() throws {
        let fixture = StoreFixture()
        let domain = self.domain
        let state = try fixture.onLoop { store in
            try store.apply(Changeset(domain: domain, changes: ["a": 1, "b": "two", "c": [1.5]]), origin: .file)
            try store.apply(Changeset(domain: domain, changes: ["a": .none, "b": "three"]), origin: .file)
            return try store.state(of: domain)
        }
        #expect(state.size == DomainState.size(of: state.values))
        #expect(state.generation == 2)
    }

    @Test func singleChangesKeepValuesSizeAndGenerationExact() throws {
        let fixture = StoreFixture(maximumDomainBytes: 64)
        let domain = self.domain
        @Sendable func one(_ key: String, _ value: PlistValue?) -> Changeset {
            var changeset = Changeset(domain: domain)
            if let value { changeset.set(key, to: value) } else { changeset.remove(key) }
            return changeset
        }
        let steps: [(Changeset, Int64, [String: PlistValue])] = [
            (one("a", 1), 1, ["a": 1]),                        // a new key
            (one("a", "one"), 2, ["a": "one"]),                // overwritten in place
            (one("a", "one"), 2, ["a": "one"]),                // the same value: no change
            (one("b", true), 3, ["a": "one", "b": true]),
            (one("c", .none), 3, ["a": "one", "b": true]),     // removing an absent key: no change
            (one("a", .none), 4, ["b": true]),                 // removed
        ]
        for (changeset, generation, values) in steps {
            let state = try fixture.onLoop { store in
                let answered = try store.apply(changeset, origin: .file)
                let state = try store.state(of: domain)
                #expect(answered == state.generation)
                return state
            }
            #expect(state.generation == generation)
            #expect(state.values == values)
            #expect(state.size == DomainState.size(of: state.values))
        }
        let error = #expect(throws: DefaultsError.self) {
            let big = one("big", .string(String(repeating: "x", count: 100)))
            _ = try fixture.onLoop { store in try store.apply(big, origin: .file) }
        }
        #expect(error?.code == .tooLarge)
        let after = try fixture.onLoop { store in try store.state(of: domain) }
        #expect(after.values == ["b": true])
        #expect(after.generation == 4)
        #expect(after.size == DomainState.size(of: after.values))
    }

    @Test func anEqualValueWrittenDifferentlyChangesNeitherTheValueNorTheSize() throws {
        let fixture = StoreFixture()
        let domain = self.domain
        @Sendable func set(_ value: PlistValue) -> Changeset {
            var changeset = Changeset(domain: domain)
            changeset.set("r", to: value)
            return changeset
        }
        let state = try fixture.onLoop { store in
            try store.apply(set(.real(0.0)), origin: .file)
            // -0.0 == 0.0, but it is written one byte longer: no change, and the size must not drift.
            for _ in 0..<3 { try store.apply(set(.real(-0.0)), origin: .file) }
            // The same in a changeset of several changes: only "s" changes.
            try store.apply(Changeset(domain: domain, changes: ["r": .real(-0.0), "s": 1]), origin: .file)
            return try store.state(of: domain)
        }
        #expect(state.generation == 2)
        #expect(state.values.count == 2)
        #expect(state.size == DomainState.size(of: state.values))
        guard case .real(let stored)? = state.values["r"] else {
            Issue.record("not a real")
            return
        }
        #expect(stored.sign == .plus)
    }

    @Test func aWriteThatChangesNothingKeepsTheGeneration() throws {
        let fixture = StoreFixture()
        let domain = self.domain
        let generations = try fixture.onLoop { store in
            [try store.apply(Changeset(domain: domain, changes: ["a": 1]), origin: .file),
             try store.apply(Changeset(domain: domain, changes: ["a": 1]), origin: .file)]
        }
        #expect(generations == [1, 1])
    }

    @Test func synchronizeWritesTheFileAndGenerationsSurvive() throws {
        let fixture = StoreFixture()
        let domain = self.domain
        try fixture.onLoop { store in
            _ = try? store.apply(Changeset(domain: domain, changes: ["warp": true]), origin: .file)
            _ = try? store.apply(Changeset(domain: domain, changes: ["warpFactor": 7]), origin: .file)
            return store.synchronize()
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: fixture.directory + "/com.example.bridge.plist"))
        #expect(try PropertyListFile.decode(data) == ["warp": true, "warpFactor": 7])
        // While the daemon runs the ledger holds a ceiling above the generation.
        #expect(GenerationLedger(files: DomainFiles(directory: fixture.directory, format: .xml)).load() == [domain: 2 + GenerationLedger.reserve])
        try fixture.onLoop { store in store.finish() }
        #expect(GenerationLedger(files: DomainFiles(directory: fixture.directory, format: .xml)).load() == [domain: 2])
    }

    @Test func aFlushBelowTheCeilingWritesNoLedgerAndOnePastItRaisesIt() throws {
        let fixture = StoreFixture()
        let domain = self.domain
        let ledger = fixture.directory + "/" + GenerationLedger.fileName
        try fixture.onLoop { store in
            _ = try? store.apply(Changeset(domain: domain, changes: ["n": 0]), origin: .file)
            return store.synchronize()
        }
        let first = try #require(FileVersion(atPath: ledger))
        for n in 1..<4 {
            try fixture.onLoop { store in
                _ = try? store.apply(Changeset(domain: domain, changes: ["n": .integer(Int64(n))]), origin: .file)
                return store.synchronize()
            }
        }
        #expect(FileVersion(atPath: ledger) == first, "three flushes under the ceiling left the ledger as it was")
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: fixture.directory + "/com.example.bridge.plist"))) == ["n": 3])

        // A burst past the ceiling: the ledger is raised before the domain's file is replaced.
        try fixture.onLoop { store in
            for n in 0...GenerationLedger.reserve { _ = try? store.apply(Changeset(domain: domain, changes: ["n": .integer(100 + n)]), origin: .file) }
            return store.synchronize()
        }
        let generation = try fixture.onLoop { store in try store.state(of: domain).generation }
        #expect(generation == 5 + GenerationLedger.reserve)
        #expect(GenerationLedger(files: DomainFiles(directory: fixture.directory, format: .xml)).load() == [domain: generation + GenerationLedger.reserve])
    }

    @Test func afterACrashAGenerationRestartsAtItsCeilingAndAfterAStopWhereItWas() throws {
        let domain = self.domain
        let crashed = StoreFixture()
        try crashed.onLoop { store in
            _ = try? store.apply(Changeset(domain: domain, changes: ["a": 1]), origin: .file)
            _ = try? store.apply(Changeset(domain: domain, changes: ["a": 2]), origin: .file)
            return store.synchronize()
        }
        // No finish(): the process died with the ceiling in the ledger.
        let restarted = StoreFixture(directory: crashed.directory)
        #expect(try restarted.onLoop { store in try store.state(of: domain).generation } == 2 + GenerationLedger.reserve)
        #expect(try restarted.onLoop { store in try store.state(of: domain).values } == ["a": 2])

        try restarted.onLoop { store in
            _ = try? store.apply(Changeset(domain: domain, changes: ["a": 3]), origin: .file)
            return store.finish()
        }
        let again = StoreFixture(directory: crashed.directory)
        #expect(try again.onLoop { store in try store.state(of: domain).generation } == 3 + GenerationLedger.reserve)
        withExtendedLifetime((crashed, restarted)) {}  // each fixture removes the shared directory when it goes
    }

    @Test func aByHostDomainHasItsOwnFileAndLedgerEntry() throws {
        let fixture = StoreFixture()
        let domain = self.domain
        try fixture.onLoop { store in
            _ = try? store.apply(Changeset(domain: domain.currentHost, changes: ["scale": 2]), origin: .file)
            _ = try? store.apply(Changeset(domain: .global.currentHost, changes: ["theme": "light"]), origin: .file)
            return store.synchronize()
        }
        let byHost = fixture.directory + "/ByHost/"
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: byHost + "com.example.bridge.\(StoreFixture.machineID).plist")))
            == ["scale": 2])
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: byHost + ".GlobalPreferences.\(StoreFixture.machineID).plist")))
            == ["theme": "light"])
        #expect(!FileManager.default.fileExists(atPath: fixture.directory + "/com.example.bridge.plist"))
        let files = DomainFiles(directory: fixture.directory, format: .xml, hostID: StoreFixture.machineID)
        #expect(GenerationLedger(files: files).load() == [domain.currentHost: 1 + GenerationLedger.reserve, DomainName.global.currentHost: 1 + GenerationLedger.reserve])
        // Another machine sharing the directory does not take them for its own.
        let other = DomainFiles(directory: fixture.directory, format: .xml, hostID: String(repeating: "f", count: 32))
        #expect(GenerationLedger(files: other).load() == [:])
        #expect(Set(files.storedDomains()) == [domain.currentHost, DomainName.global.currentHost])
        // Another machine's by-host file is not this machine's domain.
        #expect(files.domain(ofFile: "com.example.bridge.ffffffffffffffffffffffffffffffff.plist", inByHostFolder: true) == nil)
    }

    @Test func theMachineIDIsReadAsSystemdWritesIt() throws {
        let path = fixtureFile("machine-id")
        defer { unlink(path) }
        for (text, id) in [
            ("3d1219c7c4c5404aaa1f6d2a48adfda4\n", "3d1219c7c4c5404aaa1f6d2a48adfda4" as String?),
            ("uninitialized\n", nil), ("", nil), ("3D1219C7C4C5404AAA1F6D2A48ADFDA4\n", nil), ("../../etc/passwd0000000000000000", nil),
        ] {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            #expect(MachineID.read(path: path) == id, "\(text)")
        }
        #expect(MachineID.read(path: path + ".missing") == nil)
    }

    private func fixtureFile(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8))").path
    }

    /// Loading never moves a live file: one that does not parse and changed just now may be a
    /// write under way, and is read again at the next request; one that stayed so is torn, its
    /// bytes kept beside in a copy, and the domain starts empty.
    @Test func aFileThatDoesNotParseAtLoadIsNeverMoved() throws {
        let fixture = StoreFixture()
        let path = fixture.directory + "/com.example.bridge.plist"
        try Data("<plist><dict><key>torn".utf8).write(to: URL(fileURLWithPath: path))
        let domain = self.domain
        let busy = #expect(throws: DefaultsError.self) { try fixture.onLoop { store in try store.values(of: domain) } }
        #expect(busy?.code == .ioError)
        #expect(busy?.message.contains("try again") == true, "\(busy?.message ?? "")")
        #expect(try String(contentsOfFile: path, encoding: .utf8) == "<plist><dict><key>torn", "left where it is")
        // The writer finishes: the next request reads it.
        try PropertyListFile.encode(["done": true], format: .xml).write(to: URL(fileURLWithPath: path))
        #expect(try fixture.onLoop { store in try store.values(of: domain) } == ["done": true])

        let other = try DomainName("com.example.settled")
        let settled = fixture.directory + "/com.example.settled.plist"
        try Data("<plist><dict><key>torn".utf8).write(to: URL(fileURLWithPath: settled))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-5)], ofItemAtPath: settled)
        #expect(try fixture.onLoop { store in try store.values(of: other) }.isEmpty)
        #expect(try String(contentsOfFile: settled, encoding: .utf8) == "<plist><dict><key>torn", "still in place")
        let names = try FileManager.default.contentsOfDirectory(atPath: fixture.directory)
        let kept = names.filter { $0.hasPrefix("com.example.settled.plist.corrupt-") }
        #expect(kept.count == 1)
        #expect(try String(contentsOfFile: fixture.directory + "/" + kept[0], encoding: .utf8) == "<plist><dict><key>torn")
        // The domain's next write replaces it, without waiting for it to be read.
        _ = try fixture.onLoop { store in try store.apply(Changeset(domain: other, changes: ["fresh": 1]), origin: .file) }
        try fixture.onLoop { store in store.synchronize() }
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: settled))) == ["fresh": 1])
    }

    /// A ledger entry past 2^53 (a hand-edited ledger) is not taken: it would overflow as the
    /// domain's generation grows, at its first flush.
    @Test func aLedgerEntryPastTheRevisionsPossibleIsNotTaken() throws {
        let fixture = StoreFixture()
        let files = DomainFiles(directory: fixture.directory, format: .xml)
        let ledger = GenerationLedger(files: files)
        try PropertyListFile.encode(["com.example.bridge": .integer(Int64.max - 1), "com.example.fine": .integer(7)], format: .binary)
            .write(to: URL(fileURLWithPath: ledger.path))
        #expect(ledger.load() == [try DomainName("com.example.fine"): 7])
        let domain = self.domain
        let generation = try fixture.onLoop { store in try store.apply(Changeset(domain: domain, changes: ["k": 1]), origin: .file) }
        #expect(generation == 1)
        try fixture.onLoop { store in store.synchronize() }
    }

    /// A domain's size limit holds at load too: a file past it is refused with `too_large` and left as it is.
    @Test func aFilePastTheDomainLimitIsNotLoaded() throws {
        let fixture = StoreFixture(maximumDomainBytes: 1024)
        let path = fixture.directory + "/com.example.bridge.plist"
        let large = try PropertyListFile.encode(["k": .string(String(repeating: "x", count: 4000))], format: .xml)
        try large.write(to: URL(fileURLWithPath: path))
        let domain = self.domain
        let error = #expect(throws: DefaultsError.self) { try fixture.onLoop { store in try store.values(of: domain) } }
        #expect(error?.code == .tooLarge)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == large)
    }
}
