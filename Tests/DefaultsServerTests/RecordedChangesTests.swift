@testable import DefaultsServer
import DefaultsCore
import Foundation
import TestThreads
import Testing

/// The journal's recorded changes on the loop: one entry per changed key with what it held
/// before, secure keys without their values, each domain's list kept apart while changes move
/// from one domain to another, and the durable entries taken by generation.
@Suite(.ownThreads) struct RecordedChangesTests {
    static let alpha = try! DomainName("com.example.alpha")
    static let beta = try! DomainName("com.example.beta")
    static let time = Date(timeIntervalSince1970: 1_800_000_000)
    static let writer = Origin(pid: 42, uid: 1000, connection: 7)
    static let bounds = JournalBounds(maximumEntries: 100, maximumAge: 86_400, maximumBytes: 1 << 20)

    static func set(_ domain: DomainName, _ changes: [String: PlistValue?]) -> Changeset {
        Changeset(domain: domain, changes: changes)
    }

    static func record(
        _ recorded: inout RecordedChanges, _ changeset: Changeset, before: ChangeJournal.Before, generation: Int64,
        secure: Set<String> = [], bounds: JournalBounds = RecordedChangesTests.bounds
    ) {
        if !secure.isEmpty { recorded.replaceSecureKeys(SecureKeys(byDomain: [changeset.domain.anyHost: secure])) }
        recorded.record(
            changeset, before: before, in: changeset.domain, generation: generation, time: time, origin: writer, bounds: bounds)
    }

    @Test("changes to two domains in turn are each domain's, in order, with their old values; a secure key has no values")
    func domainsInTurn() {
        var recorded = RecordedChanges()
        var one = Changeset(domain: Self.alpha)
        one.set("size", to: .integer(2))
        Self.record(&recorded, one, before: .one(.integer(1)), generation: 1)
        Self.record(
            &recorded, Self.set(Self.beta, ["b": .string("new"), "a": nil, "token": .string("secret")]),
            before: .many(["a": .bool(true), "token": .string("old")]), generation: 1, secure: ["token"])
        one.set("size", to: .integer(3))
        Self.record(&recorded, one, before: .one(.integer(2)), generation: 2)
        #expect(recorded.has(Self.alpha) && recorded.has(Self.beta))
        let waiting = recorded.waiting(in: nil)
        #expect(waiting.keys.sorted() == [Self.alpha, Self.beta])
        let alpha = waiting[Self.alpha]!.entries(of: Self.alpha)
        #expect(alpha.map(\.id) == [1, 2])
        #expect(alpha.map(\.change) == [.values(old: .integer(1), new: .integer(2)), .values(old: .integer(2), new: .integer(3))])
        #expect(alpha.allSatisfy { $0.origin == Self.writer && $0.time == Self.time && $0.key == "size" })
        // One change's keys in a stable order, the secure one without its values.
        let beta = recorded.waiting(in: Self.beta)[Self.beta]!.entries(of: Self.beta)
        #expect(beta.map(\.key) == ["a", "b", "token"])
        #expect(beta.map(\.change) == [.values(old: .bool(true), new: nil), .values(old: nil, new: .string("new")), .secure])
        #expect(beta.allSatisfy { $0.id == 1 })
    }

    @Test("the entries up to a durable generation are taken, the rest wait; a domain with none left is no longer waiting")
    func takenByGeneration() {
        var recorded = RecordedChanges()
        for generation in 1...5 {
            var change = Changeset(domain: Self.alpha)
            change.set("n", to: .integer(Int64(generation)))
            Self.record(&recorded, change, before: .one(generation == 1 ? nil : .integer(Int64(generation - 1))), generation: Int64(generation))
        }
        #expect(recorded.take(Self.alpha, upTo: 0) == nil)
        #expect(recorded.take(Self.beta, upTo: 5) == nil)
        #expect(recorded.take(Self.alpha, upTo: 3)?.entries(of: Self.alpha).map(\.id) == [1, 2, 3])
        #expect(recorded.waiting(in: Self.alpha)[Self.alpha]?.entries(of: Self.alpha).map(\.id) == [4, 5])
        #expect(recorded.take(Self.alpha, upTo: 9)?.entries(of: Self.alpha).map(\.id) == [4, 5])
        #expect(!recorded.has(Self.alpha))
        #expect(recorded.waiting(in: nil).isEmpty)
    }

    @Test("a domain's list is held within the bounds as it grows")
    func boundsHeld() {
        var recorded = RecordedChanges()
        let bounds = JournalBounds(maximumEntries: 4, maximumAge: 86_400, maximumBytes: 1 << 20)
        for generation in 1...7 {
            var change = Changeset(domain: Self.alpha)
            change.set("n", to: .integer(Int64(generation)))
            Self.record(&recorded, change, before: .one(nil), generation: Int64(generation), bounds: bounds)
        }
        // Past the point of compaction (6 entries), the oldest go down to the bound.
        #expect(recorded.waiting(in: Self.alpha)[Self.alpha]?.entries(of: Self.alpha).map(\.id) == [4, 5, 6, 7])
    }

    @Test("secure keys replaced while a domain is the one recorded last apply to its next change, its by-host variant's too, and stop applying once replaced again")
    func secureKeysReplaced() {
        var recorded = RecordedChanges()
        func set(_ domain: DomainName, _ value: Int64, generation: Int64) {
            var change = Changeset(domain: domain)
            change.set("token", to: .integer(value))
            recorded.record(
                change, before: .one(.integer(value - 1)), in: domain, generation: generation, time: Self.time, origin: Self.writer,
                bounds: Self.bounds)
        }
        set(Self.alpha, 1, generation: 1)
        recorded.replaceSecureKeys(SecureKeys(byDomain: [Self.alpha: ["token"]]))
        set(Self.alpha, 2, generation: 2)
        set(Self.alpha.currentHost, 3, generation: 1)
        set(Self.beta, 4, generation: 1)
        set(Self.alpha, 5, generation: 3)
        recorded.replaceSecureKeys(SecureKeys())
        set(Self.alpha, 6, generation: 4)
        let alpha = recorded.waiting(in: Self.alpha)[Self.alpha]!.entries(of: Self.alpha)
        #expect(alpha.map(\.change) == [
            .values(old: .integer(0), new: .integer(1)), .secure, .secure, .values(old: .integer(5), new: .integer(6)),
        ])
        #expect(recorded.waiting(in: Self.alpha.currentHost)[Self.alpha.currentHost]!.entries(of: Self.alpha.currentHost).map(\.change) == [.secure])
        #expect(recorded.waiting(in: Self.beta)[Self.beta]!.entries(of: Self.beta).map(\.change) == [.values(old: .integer(3), new: .integer(4))])
    }
}
