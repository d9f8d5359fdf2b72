import DefaultsCore
import EtcdGateway
import EtcdWire
import Foundation
import NIOCore
import NIOPosix
import TestThreads
import Testing

/// A range is read in pages that must advance, within a number of keys and of bytes: a member
/// that answers "more" for ever gets a malformed answer, never an endless read or one that
/// grows without bound (docs/RELIABILITY.md, "Limits").
@Suite(.ownThreads) struct EtcdRangePagingTests {
    static func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

    static func text(_ json: JSON?) -> String? {
        guard case .string(let encoded)? = json, let data = Data(base64Encoded: encoded) else { return nil }
        return String(decoding: data, as: UTF8.self)
    }

    /// A range answer at revision 5 holding `keys`, each with `value`.
    static func page(_ keys: [String], value: String = "1", more: Bool) -> String {
        let kvs = keys.map { #"{"key":""# + base64($0) + #"","mod_revision":"3","value":""# + base64(value) + #""}"# }
        return #"{"header":{"revision":"5"},"kvs":["# + kvs.joined(separator: ",") + "]" + (more ? #","more":true"# : "") + "}"
    }

    /// The n-th key of a prefix without end, in etcd's byte order.
    static func key(_ n: Int) -> String {
        let digits = String(n)
        return "/p/k" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
    }

    /// Pages of 2 keys, at most 8 keys and 1,000 bytes of keys and values in all.
    static func client(_ endpoint: String, on group: EventLoopGroup) throws -> EtcdClient {
        var configuration = EtcdClient.Configuration(endpoints: [endpoint])
        configuration.keysPerPage = 2
        configuration.maximumRangeKeys = 8
        configuration.maximumRangeBytes = 1_000
        // Not what these tests are about: long enough for a busy test run.
        configuration.requestTimeout = .seconds(30)
        return try EtcdClient(configuration: configuration, eventLoopGroup: group)
    }

    @Test("five keys in pages of two: each page asked from right after the last key of the one before, at the first page's revision")
    func pagesAdvance() async throws {
        let keys = (0..<5).map(Self.key)
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        // As etcd answers: the keys from the start asked for, at most the limit, `more` when it cut the page there.
        let gateway = try await ScriptedGateway(on: group) { _, body, _ in
            let start = Self.text(body["key"]) ?? ""
            let rest = keys.filter { !$0.utf8.lexicographicallyPrecedes(start.utf8) }
            return .body(Self.page(Array(rest.prefix(2)), more: rest.count > 2))
        }
        let client = try Self.client(gateway.endpoint, on: group)
        let (result, _) = await timed(cancellingAfter: .seconds(60)) { try await client.range(prefix: "/p/") }
        // Shut down before anything can throw: a client left running traps at its deinit.
        try await client.shutdown()
        let range = try result.get()
        #expect(range.revision == 5)
        #expect(range.keyValues.map(\.key) == keys)
        let requests = gateway.requests.withLockedValue { $0 }.map { $0.body }
        #expect(requests.map { Self.text($0["key"]) } == ["/p/", keys[1] + "\0", keys[3] + "\0"])
        #expect(requests.map { $0["revision"] } == [nil, .string("5"), .string("5")])
        try await gateway.close()
        try await group.shutdownGracefully()
    }

    /// How a member answers the n-th page, what the read ends with, and after how many pages.
    enum Hostile: String, CaseIterable, Sendable {
        /// `more` for ever, with the same keys: the next page does not advance.
        case sameKeysForEver
        /// `more` for ever, with new keys each time: stopped at the limit of keys.
        case everNewKeys
        /// New keys with large values: stopped at the limit of bytes.
        case largeValues
        /// `more` with fewer keys than asked for, which etcd never sends.
        case shortPageWithMore
        /// More keys than asked for.
        case oversizedPage
        /// Keys out of etcd's order within a page.
        case keysOutOfOrder

        func page(_ n: Int) -> String {
            typealias T = EtcdRangePagingTests
            return switch self {
            case .sameKeysForEver: T.page(["/p/a", "/p/b"], more: true)
            case .everNewKeys: T.page([T.key(2 * n), T.key(2 * n + 1)], more: true)
            case .largeValues: T.page([T.key(2 * n), T.key(2 * n + 1)], value: String(repeating: "v", count: 200), more: true)
            case .shortPageWithMore: T.page([T.key(n)], more: true)
            case .oversizedPage: T.page([T.key(3 * n), T.key(3 * n + 1), T.key(3 * n + 2)], more: true)
            case .keysOutOfOrder: T.page(["/p/b", "/p/a"], more: false)
            }
        }

        var error: EtcdError {
            switch self {
            case .sameKeysForEver, .keysOutOfOrder: .malformed("a range page that does not advance: a key that is not after the one before it")
            case .everNewKeys: .malformed("a range of more than 8 keys")
            // 210 bytes a key: two pages hold 840, a third would make 1,260.
            case .largeValues: .malformed("a range of more than 1000 bytes of keys and values")
            case .shortPageWithMore: .malformed("a range page that says more follows with 1 of the 2 keys asked for")
            case .oversizedPage: .malformed("a range page of 3 keys where at most 2 were asked for")
            }
        }

        var pages: Int {
            switch self {
            case .sameKeysForEver: 2
            case .everNewKeys: 5
            case .largeValues: 3
            case .shortPageWithMore, .oversizedPage, .keysOutOfOrder: 1
            }
        }
    }

    @Test("a member that answers more for ever, or with pages etcd never sends, ends the read with a malformed answer at once", arguments: Hostile.allCases)
    func hostilePages(_ hostile: Hostile) async throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let gateway = try await ScriptedGateway(on: group) { _, _, number in .body(hostile.page(number)) }
        let client = try Self.client(gateway.endpoint, on: group)
        let (result, _) = await timed(cancellingAfter: .seconds(60)) { try await client.range(prefix: "/p/") }
        if case .failure(let error as EtcdError) = result {
            #expect(error == hostile.error)
        } else {
            Issue.record("\(hostile): \(result)")
        }
        #expect(gateway.requests.withLockedValue { $0.count } == hostile.pages)
        try await client.shutdown()
        try await gateway.close()
        try await group.shutdownGracefully()
    }
}
