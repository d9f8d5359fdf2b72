import DaemonTestSupport
import DefaultsCore
import Foundation
import LineSocket
import LocalServices
import TestThreads
import Testing
import WebDriver

@testable import SettingsApp

/// Every state the files behind the Settings app's pages can be in (the states of the domain
/// files' matrix, ``FileState/all``), crossed with the requests that read them, through the real
/// app over the real daemon: a bundle's root page and strings table (read by the daemon, shown
/// by the page and the overview), an image the bundle's page names, the app's desktop entry
/// (its name and icon, read by the app for the page and the overview) and the icon that entry
/// names. The assertion is the same in every cell: each request is answered within
/// ``answerWithin`` (a page with 200; a file with 200, or 404 when it is no regular file within
/// its cap), another app's page and the overview keep being served, the memory of the app and
/// of the daemon stays bounded, both stop at once and cleanly, and the file, which they only
/// ever read, is left as it was (the same type at its path, the same bytes through it), with
/// what a link leads to never replaced. A new state, kind of file or request is one line.
///
/// A file the app or the daemon may not read is tested as a user who is not root meets it: the
/// tests run as root, who reads anything, so both are started without the capabilities that let
/// root pass file permissions (``FileState/unprivilegedCommandPrefix``), and a file of mode 000
/// is then refused to them as to any user.
@Suite(.ownThreads) struct SettingsAppFileStateTests {
    static let domain = "com.example.BridgeControl"
    /// Another app, with a whole copy of the same bundle that no state touches.
    static let otherApp = "com.example.Other"
    /// The icon the desktop entry names, looked up in the hicolor theme.
    static let iconName = "bridge-control"
    /// As the security tests hold a refused image to: the app answers from what the daemon holds
    /// and one read of a capped file, and waits on no file.
    static let answerWithin = 5.0
    /// The most the app's, and the daemon's, heap and stacks may hold after any cell.
    static let memoryBoundKiB = 256 * 1024

    /// A 1×1 transparent PNG.
    static let png = Data([
        0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01,
        0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1F, 0x15, 0xC4, 0x89, 0x00, 0x00, 0x00, 0x0B, 0x49, 0x44, 0x41,
        0x54, 0x78, 0x9C, 0x63, 0x60, 0x00, 0x02, 0x00, 0x00, 0x05, 0x00, 0x01, 0x7A, 0x5E, 0xAB, 0x3F, 0x00, 0x00, 0x00, 0x00,
        0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82,
    ])
    static let desktopEntry = Data("[Desktop Entry]\nType=Application\nName=Bridge Control\nName[fr]=Contrôle de passerelle\nIcon=\(iconName)\n".utf8)

    /// A cell's files, in a folder of its own: the two apps' bundles (Bridge Control's with the
    /// image its slider names), and a data home with Bridge Control's desktop entry and icon.
    /// The app is given this data home and an empty system data folder, so that nothing of the
    /// machine's own (`/usr/share/applications`) is read.
    struct Layout {
        let root: String
        var bundle: String { root + "/bundles/" + SettingsAppFileStateTests.domain + "/Settings.bundle" }
        var otherBundle: String { root + "/bundles/" + SettingsAppFileStateTests.otherApp + "/Settings.bundle" }
        var dataHome: String { root + "/share" }
        var systemData: String { root + "/system-share" }
        var image: String { bundle + "/turtle.png" }
        var desktopEntry: String { dataHome + "/applications/" + SettingsAppFileStateTests.domain + ".desktop" }
        var icon: String { dataHome + "/icons/hicolor/48x48/apps/" + SettingsAppFileStateTests.iconName + ".png" }
        /// What the app's environment says of the data folders.
        var environment: [String: String] { ["XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": systemData] }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-app-states-\(UUID().uuidString.prefix(8))").path
            for folder in [bundle, otherBundle] {
                try FileManager.default.createDirectory(atPath: (folder as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: SharedData.bridgeControlBundle, toPath: folder)
            }
            for kind in Kind.allCases {
                try FileManager.default.createDirectory(atPath: kind.scratch(in: self), withIntermediateDirectories: true)
            }
            for (path, bytes) in [(image, SettingsAppFileStateTests.png), (desktopEntry, SettingsAppFileStateTests.desktopEntry), (icon, SettingsAppFileStateTests.png)] {
                try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try bytes.write(to: URL(fileURLWithPath: path))
            }
            try FileManager.default.createDirectory(atPath: systemData, withIntermediateDirectories: true)
        }

        func remove() { try? FileManager.default.removeItem(atPath: root) }
    }

    /// A file behind the app's pages.
    enum Kind: String, CaseIterable, Sendable {
        /// The bundle's root page, which the daemon reads and describes to the app.
        case rootPlist
        /// The strings table of the bundle's pages in the daemon's language (`en`).
        case stringsFile
        /// The image the bundle's slider names (`MinimumValueImage`), which the app serves.
        case image
        /// The app's desktop entry, which names it and its icon.
        case desktopEntry
        /// The icon the desktop entry names, which the app serves.
        case icon

        var operations: [Operation] {
            switch self {
            case .rootPlist, .stringsFile, .desktopEntry: [.page, .overview]
            case .image: [.image]
            case .icon: [.icon]
            }
        }

        func path(in layout: Layout) -> String {
            switch self {
            case .rootPlist: layout.bundle + "/Root.plist"
            case .stringsFile: layout.bundle + "/en.lproj/Root.strings"
            case .image: layout.image
            case .desktopEntry: layout.desktopEntry
            case .icon: layout.icon
            }
        }

        /// Where what a link leads to is made: inside the bundle for a bundle's page or table, so
        /// that the daemon follows the link (a link out of its bundle is never read); elsewhere
        /// for the files the app reads, which it reads through any link.
        func scratch(in layout: Layout) -> String {
            switch self {
            case .rootPlist, .stringsFile: layout.bundle + "/scratch"
            case .image, .desktopEntry, .icon: layout.root + "/scratch"
            }
        }

        /// The most bytes the file's reader reads.
        var maximumBytes: Int {
            switch self {
            // Every file of a bundle is read as a property list, with that cap (`BundleFiles`).
            case .rootPlist, .stringsFile: PropertyListLimits.maximumFileBytes
            case .image: SettingsAPI.maximumImageBytes
            case .desktopEntry: DesktopEntry.maximumBytes
            case .icon: DesktopEntryLookup.maximumIconBytes
            }
        }

        /// The file's valid bytes, as the layout holds them before the state is made, and its reader's cap.
        func contents(in layout: Layout) throws -> FileState.Contents {
            try FileState.Contents(valid: Data(contentsOf: URL(fileURLWithPath: path(in: layout))), maximumBytes: maximumBytes)
        }
    }

    /// A request of the page's, as the browser sends it.
    enum Operation: String, Sendable {
        /// The app's page: its pane tree, its name and whether it has an icon.
        case page
        /// The list of apps, each named by its desktop entry or its bundle, and of other domains.
        case overview
        /// The app's icon.
        case icon
        /// The image the bundle's slider names.
        case image

        var path: String {
            switch self {
            case .page: "/api/apps/\(SettingsAppFileStateTests.domain)"
            case .overview: "/api/overview"
            case .icon: "/api/apps/\(SettingsAppFileStateTests.domain)/icon"
            case .image: "/api/apps/\(SettingsAppFileStateTests.domain)/images/turtle.png"
            }
        }

        /// What it may be answered: a page always 200 (a bundle that cannot be read shows its
        /// diagnostics; an app without a desktop entry is named by its bundle), a file 200 when it
        /// is a regular file within its cap and 404 when it is anything else.
        var statuses: Set<Int> {
            switch self {
            case .page, .overview: [200]
            case .icon, .image: [200, 404]
            }
        }
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

        unlink(path)
        let undo = state.make(path, scratch, contents)
        defer { undo() }
        // What the path holds once the state is made: what it must hold once the app and the daemon stopped.
        let made = state.changesUntilUndone ? FileSnapshot(regularFileHolding: contents.valid) : FileSnapshot(at: path)

        // The bundles are registered with the file in its state: the daemon reads them then.
        let daemon = try DaemonProcess(commandPrefix: FileState.unprivilegedCommandPrefix)
        let socket = try daemon.connect()
        for (name, folder) in [(Self.domain, layout.bundle), (Self.otherApp, layout.otherBundle)] {
            let registered = try answered(socket, #"{"op":"registerBundle","domain":"\#(name)","path":"\#(folder)"}"#, note)
            #expect(registered.hasPrefix(#"{"ok":true"#), "\(note): \(registered)")
        }
        let app = try SettingsAppProcess(daemon: daemon, environment: layout.environment, commandPrefix: FileState.unprivilegedCommandPrefix)

        try answered(app, cell.operation.path, accepting: cell.operation.statuses, note)

        // Another app keeps being served, and so does the list of apps.
        try answered(app, "/api/apps/\(Self.otherApp)", accepting: [200], note)
        try answered(app, "/api/overview", accepting: [200], note)
        #expect(app.anonymousResidentKiB() < Self.memoryBoundKiB, "\(note)")
        #expect(daemon.anonymousResidentKiB() < Self.memoryBoundKiB, "\(note)")

        let stopping = Date()
        app.stop()
        #expect(app.process.terminationStatus == 0, "\(note): \(app.log.text)")
        #expect(daemon.terminate() == 0, "\(note): \(daemon.logText)")
        #expect(Date().timeIntervalSince(stopping) < Self.answerWithin, "\(note)")

        // The app and the daemon only read the file: what is at its path, and what it reads as, are as made.
        if state.changesUntilUndone { undo() }
        let left = FileSnapshot(at: path)
        #expect(left == made, "\(note): made as \(made), left as \(left)")
        // What a link leads to is never replaced.
        var status = stat()
        if lstat(scratch + "/fifo", &status) == 0 { #expect(status.st_mode & S_IFMT == S_IFIFO, "\(note)") }
        if lstat(scratch + "/folder", &status) == 0 { #expect(status.st_mode & S_IFMT == S_IFDIR, "\(note)") }
    }

    /// `line`'s answer from the daemon, which comes within ``answerWithin``.
    func answered(_ client: LineSocket, _ line: String, _ note: String) throws -> String {
        let started = Date()
        let reply = try client.request(line, timeout: Self.answerWithin)
        #expect(Date().timeIntervalSince(started) < Self.answerWithin, "\(note): \(line)")
        return reply
    }

    /// The app's answer to a GET of `path` (under the session's prefix, with its cookie), which
    /// comes within ``answerWithin`` with one of `statuses`.
    @discardableResult
    func answered(_ app: SettingsAppProcess, _ path: String, accepting statuses: Set<Int>, _ note: String) throws -> LoopbackHTTP.Answer {
        let started = Date()
        let answer = try LoopbackHTTP.send(port: app.port, "GET", app.prefix + path, headers: ["Cookie": app.cookie])
        #expect(Date().timeIntervalSince(started) < Self.answerWithin, "\(note): \(path)")
        #expect(statuses.contains(answer.status), "\(note): \(path) answered \(answer.status): \(answer.body.prefix(300))")
        return answer
    }
}
