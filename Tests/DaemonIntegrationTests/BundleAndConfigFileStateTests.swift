import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Every state a Settings bundle's files and the daemon's configuration file can be in (the
/// states of the domain files' matrix, ``FileState/all``), crossed with what has the daemon
/// read them: its start with the file in that state, and the file turning into it while the
/// daemon runs (the watch of the bundle folders; SIGHUP for the configuration), each followed
/// by a `lookup` of a key the bundle gives a default. The assertion is the same in every cell:
/// each request is answered within ``answerWithin``, another app's bundle and other domains
/// keep working, memory stays bounded, the orderly stop finishes at once, and the file, which
/// the daemon only ever reads, is left as it was (the same type at its path, the same bytes
/// through it), with what a link leads to never replaced. A new state, kind of file or
/// operation is one line.
///
/// The configuration is the one file the daemon cannot do without. In every state but the one
/// replaced again and again it holds nothing the daemon may take in, so the start fails at once
/// with one line naming the file (`defaultsd: <file>: <what is wrong>`, exit 78), and a reload
/// is refused with the configuration in force kept (the bundle it names still gives its
/// defaults); replaced again and again, it may be read whole at the moment the daemon looks.
///
/// A file the daemon may not read is tested as a user who is not root meets it: the tests run
/// as root, who reads anything, so the daemon is started without the capabilities that let root
/// pass file permissions (``FileState/unprivilegedCommandPrefix``), and a file of mode 000 is
/// then refused to it as to any user.
@Suite(.ownThreads) struct BundleAndConfigFileStateTests {
    static let domain = "com.example.BridgeControl"
    /// Another app, with a whole copy of the same bundle that no state touches.
    static let otherApp = "com.example.Other"
    /// The torn delay (1 s) and the longest deferral of a write (3 s), with room; also more than
    /// the 5 s a start waits at most for the first read of the bundles.
    static let answerWithin = 6.0
    /// The most the daemon's heap and stacks may hold after any cell.
    static let memoryBoundKiB = 256 * 1024
    /// What the daemon logs each time it has read a bundle again.
    static let bundleLoaded = "settings bundle loaded"
    /// The largest configuration file the daemon reads (`ConfigurationLoader.maximumFileBytes`).
    static let configurationMaximumBytes = 1 << 20

    static func lookup(_ domain: String) -> String { #"{"op":"lookup","domain":"\#(domain)","key":"warpFactor"}"# }
    /// The answer to ``lookup(_:)`` while the bundle of `domain` is installed and whole.
    static func bundleDefault(_ domain: String) -> String { #"{"ok":true,"value":5.0,"domain":"\#(domain)","layer":"bundle"}"# }

    /// A cell's files, in a folder of its own: the bundle folder with Bridge Control and the
    /// other app, and the configuration that names that folder.
    struct Layout {
        let root: String
        var bundles: String { root + "/settings-bundles" }
        var bundle: String { bundles + "/" + BundleAndConfigFileStateTests.domain + "/Settings.bundle" }
        var configuration: String { root + "/defaultsd.json" }
        /// The bundle folder, scanned on a timer only once an hour, so that only the watch
        /// explains a bundle read again.
        var configurationText: String { #"{ "settingsBundleDirectories": ["\#(bundles)"], "settingsBundleScanMilliseconds": 3600000 }"# }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-states-\(UUID().uuidString.prefix(8))").path
            for app in [BundleAndConfigFileStateTests.domain, BundleAndConfigFileStateTests.otherApp] {
                try FileManager.default.createDirectory(atPath: bundles + "/" + app, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: SharedData.bridgeControlBundle, toPath: bundles + "/" + app + "/Settings.bundle")
            }
            for kind in Kind.allCases {
                try FileManager.default.createDirectory(atPath: kind.scratch(in: self), withIntermediateDirectories: true)
            }
            try configurationText.write(toFile: configuration, atomically: true, encoding: .utf8)
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    /// A file the daemon reads.
    enum Kind: String, CaseIterable, Sendable {
        /// The bundle's root page.
        case rootPlist
        /// The strings table of the bundle's pages in the daemon's language (`en`, from `LANG`).
        case stringsFile
        /// The daemon's configuration file (`--config`).
        case configurationFile

        var operations: [Operation] { self == .configurationFile ? [.start, .reloadOnHangup] : [.start, .bundleWatch] }

        /// The file's path inside the bundle.
        var pathInBundle: String? {
            switch self {
            case .rootPlist: "Root.plist"
            case .stringsFile: "en.lproj/Root.strings"
            case .configurationFile: nil
            }
        }

        func path(in layout: Layout) -> String { pathInBundle.map { layout.bundle + "/" + $0 } ?? layout.configuration }

        /// Where what a link leads to is made: inside the bundle for a bundle's file, so that
        /// the daemon follows the link (a link out of its bundle is never read), beside the
        /// configuration for that.
        func scratch(in layout: Layout) -> String { self == .configurationFile ? layout.root + "/scratch" : layout.bundle + "/scratch" }

        /// The file's valid bytes, as the layout holds them before the state is made, and its
        /// reader's cap: every file of a bundle is read as a property list, with that cap
        /// (`BundleFiles`).
        func contents(in layout: Layout) throws -> FileState.Contents {
            try FileState.Contents(
                valid: Data(contentsOf: URL(fileURLWithPath: path(in: layout))),
                maximumBytes: self == .configurationFile ? BundleAndConfigFileStateTests.configurationMaximumBytes : PropertyListLimits.maximumFileBytes)
        }
    }

    /// What has the daemon read the file.
    enum Operation: String, Sendable {
        /// The file is in the state when the daemon starts.
        case start
        /// The daemon runs with the bundle whole; the file is removed, then made in the state, and
        /// the watch of the bundle folder has the daemon read the bundle again after each.
        case bundleWatch
        /// The daemon runs with the configuration whole; the file turns into the state, and
        /// SIGHUP has the daemon read it again.
        case reloadOnHangup
    }

    /// How a start with a file in a state may end.
    enum StartOutcome: Equatable {
        case listens, refuses, eitherOne
    }

    struct Cell: Sendable, CustomTestStringConvertible {
        let state: Int
        let kind: Kind
        let operation: Operation
        var testDescription: String { "\(FileState.all[state].name), \(kind.rawValue), \(operation.rawValue)" }
    }

    static var cells: [Cell] {
        FileState.all.indices.flatMap { state in
            Kind.allCases.flatMap { kind in kind.operations.map { Cell(state: state, kind: kind, operation: $0) } }
        }
    }

    @Test(arguments: cells)
    func everyRequestIsAnsweredAndTheFileIsOnlyRead(_ cell: Cell) throws {
        let state = FileState.all[cell.state]
        let note = cell.testDescription
        let layout = try Layout()
        defer { layout.remove() }
        let path = cell.kind.path(in: layout)
        let scratch = cell.kind.scratch(in: layout)
        let contents = try cell.kind.contents(in: layout)

        var undo: @Sendable () -> Void = {}
        defer { undo() }
        // What the path held once the state was made: what it must hold once the daemon stopped.
        var made = FileSnapshot(at: path)
        func make() {
            unlink(path)
            undo = state.make(path, scratch, contents)
            made = state.changesUntilUndone ? FileSnapshot(regularFileHolding: contents.valid) : FileSnapshot(at: path)
        }

        let daemon: DaemonProcess?
        switch cell.operation {
        case .start:
            make()
            let expected: StartOutcome = cell.kind != .configurationFile ? .listens : state.changesUntilUndone ? .eitherOne : .refuses
            daemon = start(layout, expecting: expected, note)
        case .bundleWatch:
            let running = start(layout, expecting: .listens, note)
            daemon = running
            if let running {
                let loaded = running.logOccurrences(of: Self.bundleLoaded)
                unlink(path)
                #expect(running.waitForLog(Self.bundleLoaded, occurrences: loaded + 1, timeout: Self.answerWithin), "\(note): the removal was not seen")
                let reloaded = running.logOccurrences(of: Self.bundleLoaded)
                make()
                var status = stat()
                if lstat(path, &status) == 0 {
                    #expect(running.waitForLog(Self.bundleLoaded, occurrences: reloaded + 1, timeout: Self.answerWithin), "\(note): the state was not seen")
                }
            }
        case .reloadOnHangup:
            let running = start(layout, expecting: .listens, note)
            daemon = running
            if let running {
                // Both "configuration reloaded" and "configuration not reloaded; …" end a reload.
                let reloads = running.logOccurrences(of: "reloaded")
                let refusals = running.logOccurrences(of: "configuration not reloaded")
                let mentions = running.logOccurrences(of: path)
                make()
                running.send(SIGHUP)
                #expect(running.waitForLog("reloaded", occurrences: reloads + 1, timeout: Self.answerWithin), "\(note): no reload ended")
                if !state.changesUntilUndone {
                    #expect(running.logOccurrences(of: "configuration not reloaded") == refusals + 1, "\(note): \(running.logText)")
                    #expect(running.logOccurrences(of: path) > mentions, "\(note): the refusal does not name the file: \(running.logText)")
                }
            }
        }

        if let daemon {
            let client = try daemon.connect()
            let found = try answered(client, Self.lookup(Self.domain), note)
            // The configuration in force, the one read at start, names the bundle folder.
            if cell.kind == .configurationFile { #expect(found == Self.bundleDefault(Self.domain), "\(note)") }

            // Another app and other domains keep working: the other bundle's defaults, a write on disk.
            let other = try daemon.connect()
            #expect(try answered(other, Self.lookup(Self.otherApp), note) == Self.bundleDefault(Self.otherApp), "\(note)")
            #expect(try answered(other, #"{"op":"set","domain":"com.example.other","key":"k","value":1}"#, note).hasPrefix(#"{"ok":true"#), "\(note)")
            _ = try answered(other, #"{"op":"synchronize"}"#, note)
            #expect(try daemon.storedValues("com.example.other") == ["k": 1], "\(note)")
            #expect(daemon.anonymousResidentKiB() < Self.memoryBoundKiB, "\(note)")

            let stopping = Date()
            #expect(daemon.terminate() == 0, "\(note): \(daemon.logText)")
            #expect(Date().timeIntervalSince(stopping) < Self.answerWithin, "\(note)")
        }

        // The daemon only reads the file: what is at its path, and what it reads as, are as made.
        if state.changesUntilUndone { undo() }
        let left = FileSnapshot(at: path)
        #expect(left == made, "\(note): made as \(made), left as \(left)")
        // What a link leads to is never replaced.
        var status = stat()
        if lstat(scratch + "/fifo", &status) == 0 { #expect(status.st_mode & S_IFMT == S_IFIFO, "\(note)") }
        if lstat(scratch + "/folder", &status) == 0 { #expect(status.st_mode & S_IFMT == S_IFDIR, "\(note)") }
    }

    /// The daemon on the cell's configuration, or nil when it refused to start. A start with a
    /// file in any state ends within ``answerWithin``, with the bundles read (a file that held
    /// their first read would make the daemon say it opened its socket without them); a refusal
    /// is one line that names the configuration file.
    func start(_ layout: Layout, expecting expected: StartOutcome, _ note: String) -> DaemonProcess? {
        let starting = Date()
        var refusal: String?
        var daemon: DaemonProcess?
        do {
            let started = try DaemonProcess(arguments: ["--config", layout.configuration], commandPrefix: FileState.unprivilegedCommandPrefix)
            // The end of its log can wake the harness before the exit is seen: a daemon that never
            // said it listens has refused too.
            if started.logText.contains(" listening") {
                daemon = started
            } else {
                #expect(started.terminate() == 78, "\(note): \(started.logText)")
                refusal = started.logText
            }
        } catch {
            refusal = "\(error)"
        }
        #expect(Date().timeIntervalSince(starting) < Self.answerWithin, "\(note)")
        if let refusal {
            #expect(expected != .listens, "\(note): the daemon did not start: \(refusal)")
            #expect(refusal.contains("defaultsd: \(layout.configuration): "), "\(note): the refusal does not name the file: \(refusal)")
        }
        if let daemon {
            #expect(expected != .refuses, "\(note): the daemon started with a configuration it cannot read: \(daemon.logText)")
            #expect(!daemon.logText.contains("Settings bundles are still being read"), "\(note): \(daemon.logText)")
        }
        return daemon
    }

    /// `line`'s answer on `client`, which comes within ``answerWithin``: an answer, not
    /// necessarily a success.
    func answered(_ client: LineSocket, _ line: String, _ note: String) throws -> String {
        let started = Date()
        let reply = try client.request(line, timeout: Self.answerWithin)
        #expect(Date().timeIntervalSince(started) < Self.answerWithin, "\(note): \(line)")
        #expect(reply.hasPrefix(#"{"ok":"#), "\(note): \(reply)")
        return reply
    }
}
