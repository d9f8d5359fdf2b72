import DefaultsCore
import Foundation
import Glibc
@testable import DefaultsServer
import TestThreads
import Testing

/// What an edit of a domain file brings into memory: only what it changed against the state it
/// was made from, so writes that reached memory meanwhile stay.
@Suite(.ownThreads) struct HandEditMergeTests {
    let domain = try! DomainName("com.example.merge")

    func applied(_ changes: Changeset, to memory: [String: PlistValue]) -> [String: PlistValue] {
        var result = memory
        changes.forEachChange { key, value in result[key] = value }
        return result
    }

    @Test func anEditMadeFromTheLastWriteKeepsWhatMemoryGainedSince() {
        let written: [String: PlistValue] = ["a": 1, "d1": 1]
        let memory: [String: PlistValue] = ["a": 1, "d1": 1, "d2": 2]  // d2 not on disk yet
        let file: [String: PlistValue] = ["a": 1, "d1": 1, "p": 7]
        let changes = DomainFileWatcher.changes(from: [written], to: file, memory: memory, domain: domain)
        #expect(changes.count == 1)
        #expect(applied(changes, to: memory) == ["a": 1, "d1": 1, "d2": 2, "p": 7])
    }

    /// A writer that read the file just before the daemon's last write landed made its edit from
    /// the write before: the closest known state is its base, and the newer write is not undone.
    @Test func anEditMadeFromTheWriteBeforeDoesNotUndoTheLastOne() {
        let older: [String: PlistValue] = ["a": 1]
        let newer: [String: PlistValue] = ["a": 1, "d7": 7]
        let file: [String: PlistValue] = ["a": 1, "p": 1]
        let changes = DomainFileWatcher.changes(from: [newer, older], to: file, memory: newer, domain: domain)
        #expect(applied(changes, to: newer) == ["a": 1, "d7": 7, "p": 1])
    }

    @Test func whatTheEditChangedOrRemovedWins() {
        let base: [String: PlistValue] = ["a": 1, "b": 2, "c": 3]
        let memory: [String: PlistValue] = ["a": 10, "b": 2, "c": 3, "d": 4]
        let file: [String: PlistValue] = ["a": 5, "c": 3]
        let changes = DomainFileWatcher.changes(from: [base], to: file, memory: memory, domain: domain)
        #expect(applied(changes, to: memory) == ["a": 5, "c": 3, "d": 4])
    }

    @Test func withNoKnownStateTheFileIsTakenAsItStands() {
        let memory: [String: PlistValue] = ["a": 1, "b": 2]
        let file: [String: PlistValue] = ["a": 3]
        let changes = DomainFileWatcher.changes(from: [], to: file, memory: memory, domain: domain)
        #expect(applied(changes, to: memory) == file)
    }

    /// The known states kept as bases are bounded: the newest two, whatever the number of writes.
    @Test func onlyTheNewestStatesAreKeptAsBases() {
        var known = KnownFileVersions()
        for index in 0..<10 {
            var status = stat()
            status.st_ino = ino_t(index + 1)
            known.remember(FileVersion(status), of: domain, holding: ["k": .integer(Int64(index))])
        }
        #expect(known.bases(of: domain) == [["k": 9], ["k": 8]])
    }

    /// A file removed by someone and put back, even the very same version, is taken in whole:
    /// what it held before is no base for it.
    @Test func aFileRemovedAndPutBackIsNewsAgain() {
        var known = KnownFileVersions()
        var status = stat()
        status.st_ino = 7
        let version = FileVersion(status)
        known.remember(version, of: domain, holding: ["a": 1, "b": 2])
        known.forgetFile(of: domain)
        #expect(!known.isKnown(version, of: domain))
        let back: [String: PlistValue] = ["a": 1, "b": 2]
        let changes = DomainFileWatcher.changes(from: known.bases(of: domain), to: back, memory: [:], domain: domain)
        #expect(applied(changes, to: [:]) == back)
    }

    /// A file's time may be any second: one past 2262 (what nanoseconds in an Int64 reach) is a
    /// version like any other, and one in the future is not a write under way.
    @Test func aFileTimeFarInTheFutureIsAVersionLikeAnyOther() {
        var status = stat()
        status.st_mtim.tv_sec = Int(Int64.max / 2)
        let version = FileVersion(status)
        #expect(version.modifiedSeconds == Int64.max / 2)
        #expect(version.age(at: Date()) < 0)
    }
}
