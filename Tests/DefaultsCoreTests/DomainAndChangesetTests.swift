import DefaultsCore
import Foundation
import TestThreads
import Testing

@Suite(.ownThreads) struct DomainNameTests {
    @Test(arguments: ["com.example.app", "NSGlobalDomain", "a", "A-b_c.9", String(repeating: "x", count: 249), "x.plist", "My Tool"])
    func acceptsValidNames(_ name: String) throws {
        #expect(try DomainName(name).rawValue == name)
    }

    @Test(arguments: [
        "", ".", "..", "../x", "a/b", "/etc/passwd", ".hidden", "a..b", "a\u{0}b", " a", "a ", "é", "a\tb",
        String(repeating: "x", count: 250), "x\n", "NSRegistrationDomain", "NSArgumentDomain", "a\\b",
    ])
    func refusesEverythingElse(_ name: String) {
        let error = #expect(throws: DefaultsError.self) { try DomainName(name) }
        #expect(error?.code == .invalidDomain)
    }

    @Test func fileNames() throws {
        #expect(DomainName.global.fileName == ".GlobalPreferences.plist")
        #expect(try DomainName("com.x").fileName == "com.x.plist")
        #expect(DomainName.fromFileName(".GlobalPreferences.plist") == .global)
        #expect(DomainName.fromFileName("com.x.plist") == (try DomainName("com.x")))
        #expect(DomainName.fromFileName(".defaultsd-generations.plist") == nil)
        #expect(DomainName.fromFileName("com.x.plist.corrupt-20261121T100000Z") == nil)
        #expect(DomainName.fromFileName(".tmp-abc") == nil)
    }

    @Test func keys() {
        #expect(throws: Never.self) { try DefaultsKey.validate("a.dotted.key") }
        #expect(throws: Never.self) { try DefaultsKey.validate(String(repeating: "k", count: 1024)) }
        #expect((#expect(throws: DefaultsError.self) { try DefaultsKey.validate("") })?.code == .invalidKey)
        #expect((#expect(throws: DefaultsError.self) { try DefaultsKey.validate(String(repeating: "k", count: 1025)) })?.code == .invalidKey)
    }
}

@Suite(.ownThreads) struct ChangesetTests {
    let domain = try! DomainName("com.example.bridge")

    @Test func applyReportsOnlyRealChanges() {
        var values: [String: PlistValue] = ["warp": true, "rank": "Ensign", "factor": 5]
        var changes = Changeset(domain: domain)
        changes.set("warp", to: true)          // same value: no change
        changes.set("factor", to: 5.0)         // integer → real is a change
        changes.remove("rank")
        changes.remove("missing")              // nothing to remove: no change
        changes.set("officer", to: "Picard")
        let effective = changes.apply(to: &values)
        #expect(effective.changes == ["factor": .real(5), "rank": .none, "officer": "Picard"])
        #expect(values == ["warp": true, "factor": 5.0, "officer": "Picard"])
    }

    @Test func mergeKeepsTheLatestValue() {
        var first = Changeset(domain: domain, changes: ["a": 1, "b": 2])
        first.merge(Changeset(domain: domain, changes: ["a": .none, "c": 3]))
        #expect(first.changes == ["a": .none, "b": 2, "c": 3])
    }

    @Test func oneChangeAndManyBehaveAlike() {
        var one = Changeset(domain: domain)
        one.set("warp", to: 1)
        one.set("warp", to: 2)                 // the same key again: still one change, the latest
        #expect(one.count == 1 && one["warp"] == .some(.integer(2)) && one["rank"] == nil)
        #expect(one == Changeset(domain: domain, changes: ["warp": 2]))
        #expect(one.hashValue == Changeset(domain: domain, changes: ["warp": 2]).hashValue)
        #expect(Array(one).map(\.key) == ["warp"])

        one.remove("rank")                     // a second key
        #expect(one.count == 2 && one["rank"] == .some(nil))
        #expect(one.changes == ["warp": 2, "rank": .none])

        var removal = Changeset(domain: domain)
        removal.remove("rank")
        #expect(removal.changes == ["rank": .none] && removal != Changeset(domain: domain, changes: ["rank": "x"]))
        removal.merge(Changeset(domain: domain, changes: ["rank": "Ensign", "warp": 9]))
        #expect(removal.changes == ["rank": "Ensign", "warp": 9])

        var values: [String: PlistValue] = ["warp": 2]
        var same = Changeset(domain: domain)
        same.set("warp", to: 2)
        #expect(same.apply(to: &values).isEmpty)
    }

    @Test func differenceTurnsOldIntoNew() {
        let old: [String: PlistValue] = ["a": 1, "b": 2, "c": 3]
        let new: [String: PlistValue] = ["a": 1, "b": 20, "d": 4]
        let diff = Changeset.difference(from: old, to: new, domain: domain)
        #expect(diff.changes == ["b": 20, "c": .none, "d": 4])
        var applied = old
        _ = diff.apply(to: &applied)
        #expect(applied == new)
    }
}

/// One reading of an answer's error, for the client library and `defaults` alike.
@Suite(.ownThreads) struct AnswerErrorTests {
    @Test(arguments: [
        (#"{"ok":true,"generation":1}"#, nil),
        (#"{"ok":false,"error":{"code":"too_large","message":"domain d would be 2015 bytes"}}"#, DefaultsError(.tooLarge, "domain d would be 2015 bytes")),
        (#"{"ok":false,"error":{"code":"brand_new","message":"later"}}"#, DefaultsError(.internal, "brand_new: later")),
        (#"{"ok":false,"error":{"message":"no code"}}"#, DefaultsError(.internal, "no code")),
        (#"{"ok":false}"#, DefaultsError(.internal, #"malformed answer: object(["ok": DefaultsCore.JSON.bool(false)])"#)),
    ] as [(String, DefaultsError?)])
    func anAnswerCarriesItsRefusal(line: String, expected: DefaultsError?) throws {
        #expect(DefaultsError(answer: try JSONParser.parse(line)) == expected)
    }
}

/// The protocol's framing rule, shared by the daemon's framer and LineSocket.
@Suite(.ownThreads) struct LineFramingTests {
    @Test func linesEndAtANewlineAndLoseACarriageReturnBeforeIt() {
        let bytes = Array("{\"op\":\"ping\"}\r\nnext\n\r\n".utf8)
        bytes.withUnsafeBytes { raw in
            #expect(LineFraming.newline(in: raw, from: 0) == 14)
            #expect(LineFraming.contentLength(of: raw, upTo: 14) == 13)
            #expect(LineFraming.newline(in: raw, from: 15) == 19)
            #expect(LineFraming.contentLength(of: raw, from: 15, upTo: 19) == 4)
            #expect(LineFraming.newline(in: raw, from: 20) == 21)
            #expect(LineFraming.contentLength(of: raw, from: 20, upTo: 21) == 0, "a lone \\r line is empty")
            #expect(LineFraming.contentLength(of: raw, from: 15, upTo: 15) == 0)
            #expect(LineFraming.newline(in: raw, from: 22) == nil)
        }
    }
}
