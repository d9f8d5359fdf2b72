import DefaultsCore
@testable import EtcdWire
@testable import DefaultsServer
@testable import EtcdGateway
import Foundation
import TestThreads
import Testing

@Suite("Roaming: the key layout, the etcd values, the gateway's JSON", .ownThreads)
struct RoamingUnitTests {
    let keys = RoamingKeys(prefix: "/defaultsd/ada/")
    let domain = try! DomainName("com.example.editor")

    @Test("a key's slashes and percent signs are escaped, and every key comes back as it was")
    func keyLayout() throws {
        let cases = ["plain": "plain", "a/b": "a%2Fb", "100%": "100%25", "%2F": "%252F", "ü/ñ/": "ü%2Fñ%2F", "": ""]
        for (key, escaped) in cases where !key.isEmpty {
            let etcdKey = keys.etcdKey(domain: domain, key: key)
            #expect(etcdKey == "/defaultsd/ada/com.example.editor/" + escaped)
            let located = try #require(keys.locate(etcdKey))
            #expect(located.domain == domain && located.key == key)
        }
        #expect(keys.domainPrefix(domain) == "/defaultsd/ada/com.example.editor/")
        // Keys this layout did not make.
        for foreign in ["/defaultsd/bob/com.example.editor/k", "/defaultsd/ada/no-separator", "/defaultsd/ada/com.example.editor/%zz",
                        "/defaultsd/ada/com.example.editor/", "/defaultsd/ada/bad domain!/k"] {
            #expect(keys.locate(foreign) == nil, "\(foreign)")
        }
    }

    @Test("an etcd value holds the wire value with its type and the writing host; a removal is a tombstone")
    func entries() throws {
        let values: [PlistValue] = [
            .string("Earl Grey"), .integer(1), .real(1), .bool(true), .date(Date(timeIntervalSince1970: 1_800_000_000.25)),
            .data(Data([0, 1, 255])), .array([.integer(1), .string("two")]), .dictionary(["$a": .bool(false)]),
        ]
        for value in values {
            let text = RoamingKeys.encode(.init(value: value, host: "laptop"))
            #expect(RoamingKeys.decode(text) == RoamingKeys.Entry(value: value, host: "laptop"), "\(text)")
        }
        #expect(RoamingKeys.encode(.init(value: .real(1), host: "A")) == #"{"host":"A","value":1.0}"#)
        #expect(RoamingKeys.encode(.init(value: nil, host: "A")) == #"{"host":"A","removed":true}"#)
        #expect(RoamingKeys.decode(#"{"host":"A","removed":true}"#) == RoamingKeys.Entry(value: nil, host: "A"))
        for garbage in ["", "42", #"{"value":1}"#, #"{"host":"A"}"#, #"{"host":"A","value":null}"#] {
            #expect(RoamingKeys.decode(garbage) == nil, "\(garbage)")
        }
    }

    @Test("a roaming change's event names the writing machine")
    func roamingOrigin() throws {
        var changes = Changeset(domain: domain)
        changes.set("fontSize", to: .integer(14))
        let line = String(decoding: ChangeEvent(changeset: changes, generation: 3, origin: .roaming(host: "desktop")).encoded(), as: UTF8.self)
        #expect(line == #"{"event":"didChange","domain":"com.example.editor","generation":3,"changes":{"fontSize":14},"origin":{"source":"roaming","host":"desktop"}}"# + "\n")
    }

    @Test("the gateway's prefix range end, watch messages, and a transaction's failed reads")
    func gatewayJSON() throws {
        #expect(GatewayJSON.prefixEnd("/a/") == .string(Data("/a0".utf8).base64EncodedString()))
        let b64 = { (text: String) in Data(text.utf8).base64EncodedString() }
        let events = try GatewayJSON.watchMessage(JSONParser.parse("""
            {"result":{"header":{"revision":"9"},"events":[{"kv":{"key":"\(b64("/p/d/k"))","mod_revision":"8","value":"\(b64("v"))"}},\
            {"type":"DELETE","kv":{"key":"\(b64("/p/d/j"))","mod_revision":"9"}}]}}
            """))
        #expect(events.revision == 9 && !events.canceled && events.compactRevision == nil)
        #expect(events.events == [
            EtcdEvent(kind: .put, keyValue: EtcdKeyValue(key: "/p/d/k", value: "v", modRevision: 8)),
            EtcdEvent(kind: .delete, keyValue: EtcdKeyValue(key: "/p/d/j", value: "", modRevision: 9)),
        ])
        let compacted = try GatewayJSON.watchMessage(JSONParser.parse(
            #"{"result":{"header":{"revision":"40"},"created":true,"canceled":true,"compact_revision":"31","cancel_reason":"mvcc: required revision has been compacted"}}"#))
        #expect(compacted.canceled && compacted.compactRevision == 31)
        #expect(throws: EtcdError.refused(code: 14, message: "etcdserver: no leader")) {
            try GatewayJSON.watchMessage(JSONParser.parse(#"{"error":{"grpc_code":14,"http_code":503,"message":"etcdserver: no leader","code":14}}"#))
        }
        // A failed transaction: the guard did not hold; its reads say what is there.
        let failed = try GatewayJSON.transactionResult(try JSONParser.parse("""
            {"header":{"revision":"12"},"responses":[{"response_range":{"kvs":[{"key":"\(b64("/p/d/k"))","mod_revision":"11","value":"\(b64("x"))"}],"count":"1"}},{"response_range":{}}]}
            """))
        #expect(!failed.succeeded && failed.revision == 12)
        #expect(failed.reads == [EtcdKeyValue(key: "/p/d/k", value: "x", modRevision: 11), nil])
    }

    @Test("a journal holding an impossible revision is read as none: the next start reads etcd whole")
    func impossibleJournal() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("journal-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let journal = RoamingJournal(files: DomainFiles(directory: directory, format: .xml))
        try journal.write(RoamingJournal.Contents(prefix: "/p/", revision: .max, seen: ["/p/d/k": -5, "/p/d/j": 7], queue: []))
        #expect(journal.load(prefix: "/p/") == RoamingJournal.Contents(prefix: "/p/", revision: 0, seen: [:], queue: []))
        try journal.write(RoamingJournal.Contents(prefix: "/p/", revision: 9, seen: ["/p/d/k": -5, "/p/d/j": 7], queue: []))
        #expect(journal.load(prefix: "/p/") == RoamingJournal.Contents(prefix: "/p/", revision: 9, seen: ["/p/d/j": 7], queue: []))
        // The digests of synced values come back as written, the full 64 bits of each.
        let synced: [String: UInt64] = ["/p/d/j": RoamingKeys.digest(.string("x")), "/p/d/k": RoamingKeys.digest(nil), "/p/d/m": .max]
        try journal.write(RoamingJournal.Contents(prefix: "/p/", revision: 9, seen: ["/p/d/j": 7], synced: synced, queue: []))
        #expect(journal.load(prefix: "/p/").synced == synced)
        #expect(RoamingKeys.digest(.integer(1)) != RoamingKeys.digest(.real(1)) && RoamingKeys.digest(.string("")) != RoamingKeys.digest(nil))
    }

    @Test("a revision etcd cannot have sent is a malformed answer, never an overflow later")
    func impossibleRevisions() throws {
        let b64 = { (text: String) in Data(text.utf8).base64EncodedString() }
        for revision in ["9223372036854775807", "-1", String(EtcdWatchMessage.possibleRevisions.upperBound + 1)] {
            #expect(throws: EtcdError.malformed("an impossible revision \(Int64(revision)!)")) {
                try GatewayJSON.watchMessage(JSONParser.parse(#"{"result":{"header":{"revision":"\#(revision)"}}}"#))
            }
            #expect(throws: EtcdError.self) {
                try GatewayJSON.watchMessage(JSONParser.parse("""
                    {"result":{"header":{"revision":"9"},"events":[{"kv":{"key":"\(b64("/p/d/k"))","mod_revision":"\(revision)","value":"\(b64("v"))"}}]}}
                    """))
            }
            #expect(throws: EtcdError.self) {
                try GatewayJSON.transactionResult(JSONParser.parse(#"{"header":{"revision":"\#(revision)"},"succeeded":true}"#))
            }
        }
    }

    @Test("a configuration section becomes dotted keys, each its own option")
    func sections() {
        let flattened = ConfigurationLoader.flattened([
            "roaming": .object(["domains": .array([.string("a.b")]), "hostName": .string("A")]), "logLevel": .string("debug"),
        ])
        #expect(flattened.map(\.0) == ["logLevel", "roaming.domains", "roaming.hostName"])
        #expect(ConfigurationOption.isSection("roaming") && !ConfigurationOption.isSection("logLevel"))
    }
}

/// When the roaming link starts its next watch (`RoamingLink.restart(after:delay:)`): a member
/// that ends every watch cleanly is asked again after a wait that doubles to 2 s, never in a
/// tight loop.
@Suite(.ownThreads) struct WatchRestartTests {
    @Test func aWatchTheMemberEndsIsStartedAgainAfterAGrowingWait() {
        var delay = RoamingLink.firstRetryDelay
        var waits: [Duration] = []
        for _ in 0..<7 {
            let next = RoamingLink.restart(after: .endedByMember, delay: delay)
            #expect(!next.anotherMember)
            waits.append(next.wait)
            delay = next.delay
        }
        #expect(waits == [.milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600), .seconds(2), .seconds(2)])
    }

    @Test func eachEndHasItsOwnRule() {
        let second = Duration.milliseconds(200)
        #expect(RoamingLink.restart(after: .compacted, delay: second) == (.zero, RoamingLink.firstRetryDelay, false))
        #expect(RoamingLink.restart(after: .refused, delay: second) == (second, .milliseconds(400), true))
        #expect(RoamingLink.restart(after: .broken, delay: RoamingLink.firstRetryDelay) == (.zero, .milliseconds(200), true))
        #expect(RoamingLink.restart(after: .broken, delay: second) == (.milliseconds(100), .milliseconds(400), true))
    }
}
