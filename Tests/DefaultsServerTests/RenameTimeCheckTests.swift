import DefaultsCore
import Foundation
import Glibc
@testable import DefaultsServer
import TestThreads
import Testing

/// A domain's write is judged against the file it actually replaces: the rename is an exchange,
/// so an edit that lands after the check and before the rename is put back or kept aside, never
/// silently replaced. The gate here makes the edit land in exactly that window: it writes the
/// file in place the first time it is asked.
@Suite(.ownThreads) struct RenameTimeCheckTests {
    let domain = try! DomainName("com.example.window")
    let folder: String
    let files: DomainFiles

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("rename-window-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        files = DomainFiles(directory: folder, format: .xml)
    }

    var path: String { files.path(of: domain)! }

    func write(_ text: String, to path: String) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        precondition(fd >= 0)
        FileDescriptorIO.write(text, to: fd)
        close(fd)
    }

    func contents(_ path: String) -> String? { try? String(contentsOfFile: path, encoding: .utf8) }

    func folderNames() -> [String] { ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted() }

    /// The daemon knows the file as it wrote it; `edit` is written in place inside the window.
    func commitWithEditInTheWindow(_ edit: String, values: [String: PlistValue], keepingUnseenAside: Bool)
        throws -> (DomainFiles.CommitReport<DomainName>, edited: FileVersion?)
    {
        try files.writeAtomically(PropertyListFile.encode(["k": "known"], format: .xml), to: path)
        var known = KnownFileVersions()
        known.watchedFolders = .both
        known.remember(FileVersion(atPath: path), of: domain, holding: ["k": "known"])
        let change = try files.stage(domain, values: values)
        var asked = 0
        var edited: FileVersion?
        let report = files.commit([change], reportingAs: [domain]) { domain, current in
            asked += 1
            if asked == 1 {
                write(edit, to: path)
                edited = FileVersion(atPath: path)
            }
            return files.admit(current, of: domain, knowing: known, keepingUnseenAside: keepingUnseenAside)
        }
        #expect(asked == 2, "the gate is asked again about what the rename displaced")
        return (report, edited)
    }

    @Test func anEditLandingJustBeforeTheRenameIsPutBackAndTheWriteWaits() throws {
        let edit = try String(decoding: PropertyListFile.encode(["k": "edited"], format: .xml), as: UTF8.self)
        let (report, _) = try commitWithEditInTheWindow(edit, values: ["k": "daemon"], keepingUnseenAside: false)
        #expect(report.skipped == [domain])
        #expect(report.failures.isEmpty)
        #expect(contents(path) == edit, "the edit is at the path, as its writer left it")
        #expect(folderNames() == [domain.fileName], "no temporary file and no copy is left behind")
    }

    @Test func anEditLandingJustBeforeTheRenameIsKeptAsideWhenTheDomainMustBeWritten() throws {
        let edit = "not a property list"
        let (report, edited) = try commitWithEditInTheWindow(edit, values: ["k": "daemon"], keepingUnseenAside: true)
        #expect(report.skipped.isEmpty)
        #expect(report.failures.isEmpty)
        #expect(report.keptAside.map(\.1) == [try #require(edited)])
        let written = try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written == ["k": "daemon"])
        let kept = folderNames().filter { $0.hasPrefix(domain.fileName + ".rejected-") }
        #expect(kept.count == 1)
        #expect(contents(folder + "/" + kept[0]) == edit, "the displaced edit's bytes are kept")
        #expect(folderNames().count == 2, "the domain file and its kept edit, nothing else")
    }

    @Test func anEditLandingJustBeforeARemovalIsPutBack() throws {
        let edit = "edited in place"
        let (report, _) = try commitWithEditInTheWindow(edit, values: [:], keepingUnseenAside: false)
        #expect(report.skipped == [domain])
        #expect(contents(path) == edit)
        #expect(folderNames() == [domain.fileName])
    }

    @Test func aKnownFileIsReplacedAndNothingIsLeftBeside() throws {
        try files.writeAtomically(PropertyListFile.encode(["k": "known"], format: .xml), to: path)
        var known = KnownFileVersions()
        known.watchedFolders = .both
        known.remember(FileVersion(atPath: path), of: domain, holding: ["k": "known"])
        let change = try files.stage(domain, values: ["k": "new"])
        var asked = 0
        let report = files.commit([change], reportingAs: [domain]) { domain, current in
            asked += 1
            return files.admit(current, of: domain, knowing: known, keepingUnseenAside: false)
        }
        #expect(asked == 1)
        #expect(report.skipped.isEmpty && report.failures.isEmpty && report.keptAside.isEmpty)
        #expect(try PropertyListFile.decode(Data(contentsOf: URL(fileURLWithPath: path))) == ["k": "new"])
        #expect(FileVersion(atPath: path) == change.version)
        #expect(folderNames() == [domain.fileName])
    }

    /// Two in-place writes of the same size whose times are equal (one timestamp tick) are two
    /// versions: their bytes differ.
    @Test func sameSizeWritesWithinOneTickAreDifferentVersions() throws {
        write("AAAA", to: path)
        var status = stat()
        #expect(stat(path, &status) == 0)
        let first = try #require(FileVersion(atPath: path))
        write("BBBB", to: path)
        var times = [status.st_atim, status.st_mtim]
        #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
        let second = try #require(FileVersion(atPath: path))
        #expect(second.inode == first.inode && second.size == first.size)
        #expect(second.modifiedSeconds == first.modifiedSeconds && second.modifiedNanoseconds == first.modifiedNanoseconds)
        #expect(second != first)
        var known = KnownFileVersions()
        known.remember(first, of: domain)
        #expect(!known.isKnown(second, of: domain))
    }
}
