@testable import DefaultsCore
import Foundation
import TestThreads
import Testing

/// ``PathTrust``, the one rule for folders nobody else may change, on real folders.
@Suite(.ownThreads) struct PathTrustTests {
    let root: String
    let yours = PathTrust.yoursOrRoot()

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("path-trust-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    func folder(_ name: String, mode: mode_t) throws -> String {
        let path = root + "/" + name
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        #expect(chmod(path, mode) == 0)
        return path
    }

    @Test func aFolderOnlyItsOwnerWritesIsSafe() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(yours.problem(with: try folder("own", mode: 0o700)) == nil)
        #expect(yours.problem(with: try folder("readable", mode: 0o755)) == nil)
    }

    @Test func theFirstFolderOthersMayWriteIsNamedWithItsMode() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let open = try folder("open", mode: 0o777)
        let inside = try folder("open/inside", mode: 0o700)
        #expect(yours.problem(with: inside)
            == PathTrust.Problem(component: open, reason: "can be written by its group or others (mode 777)", isWritableByOthers: true))
    }

    @Test func aStickyFolderAboveIsSafeButNotAsTheFolderItself() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let sticky = try folder("sticky", mode: 0o1777)
        #expect(yours.problem(with: try folder("sticky/inside", mode: 0o700)) == nil)
        #expect(yours.problem(with: sticky)?.reason == "can be written by its group or others (mode 1777)")
    }

    @Test func aLinkIsJudgedWithWhereItLeads() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        _ = try folder("open", mode: 0o777)
        let target = try folder("open/target", mode: 0o700)
        let link = root + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        #expect(yours.problem(with: link)?.component == root + "/open")
    }

    @Test func aMissingPathCannotBeInspected() {
        #expect(yours.problem(with: root + "/missing")?.reason == "cannot be inspected: No such file or directory")
    }

    @Test func onlyTheAcceptedOwnersPass() throws {
        defer { try? FileManager.default.removeItem(atPath: root) }
        let own = try folder("own", mode: 0o700)
        let nobody = PathTrust(acceptsOwner: { $0 == 65534 }, acceptsPrivateGroup: false)
        #expect(nobody.problem(with: own)?.reason == "is owned by uid \(getuid())")
        let further = PathTrust(acceptsOwner: { _ in true }, acceptsPrivateGroup: false, furtherProblem: { $0 == own ? "is mine" : nil })
        #expect(further.problem(with: own) == PathTrust.Problem(component: own, reason: "is mine"))
    }

    @Test func theGroupOfAnotherUserIsNotAPrivateGroup() {
        // Root's group is root's own on every system the tests run on; nobody's group is not root's.
        #expect(PathTrust.isPrivateGroup(0, of: 0))
        #expect(!PathTrust.isPrivateGroup(65534, of: 0))
    }
}
