import DaemonTestSupport
import DefaultsCore
@testable import EtcdWire
import Foundation
import TestThreads
import Testing

/// Reading what an etcd gateway answers is work linear in the answer: range pages with many
/// keys, long base64 values, watch messages with many events, transactions with many responses,
/// and deep or wide JSON around them, of about n and 8n bytes, take CPU time that grows by at
/// most ``WorkGrowth/bound``, parsing (`JSONParser.parse`) and reading (`GatewayJSON`,
/// `EtcdRangePages`) together, as the client does; what they give, or the refusal, is checked too.
@Suite(.ownThreads) struct GatewayJSONWorkTests {
    /// The size of the small answer, in bytes: one reading of most shapes takes milliseconds in a
    /// debug build, and 8 times it is an ordinary page of a large range.
    static let n = 32 << 10

    /// How an answer is read, and what its count counts.
    enum Reader: String, Sendable {
        /// `GatewayJSON.rangePage`: the keys.
        case rangePage = "GatewayJSON.rangePage"
        /// `GatewayJSON.rangePage`: the bytes of the values, decoded.
        case rangeValueBytes = "GatewayJSON.rangePage, value bytes"
        /// `EtcdRangePages.take` of one page, with no limit reached: the keys gathered.
        case rangePages = "EtcdRangePages.take"
        /// `GatewayJSON.watchMessage`: the events.
        case watch = "GatewayJSON.watchMessage"
        /// `GatewayJSON.watchMessage`: the bytes of the events' values, decoded.
        case watchValueBytes = "GatewayJSON.watchMessage, value bytes"
        /// `GatewayJSON.transactionResult`: the reads.
        case transaction = "GatewayJSON.transactionResult"
        /// `GatewayJSON.memberStatus`: the member's errors.
        case status = "GatewayJSON.memberStatus"

        func read(_ bytes: [UInt8]) -> ReadOutcome {
            do {
                let json = try JSONParser.parse(bytes)
                switch self {
                case .rangePage:
                    return .read(try GatewayJSON.rangePage(json).keyValues.count)
                case .rangeValueBytes:
                    return .read(try GatewayJSON.rangePage(json).keyValues.reduce(0) { $0 + $1.value.utf8.count })
                case .rangePages:
                    var pages = EtcdRangePages(keysPerPage: 1 << 30, maximumKeys: 1 << 30, maximumBytes: 1 << 40)
                    _ = try pages.take(json)
                    return .read(pages.range.keyValues.count)
                case .watch:
                    return .read(try GatewayJSON.watchMessage(json).events.count)
                case .watchValueBytes:
                    return .read(try GatewayJSON.watchMessage(json).events.reduce(0) { $0 + $1.keyValue.value.utf8.count })
                case .transaction:
                    return .read(try GatewayJSON.transactionResult(json).reads.count)
                case .status:
                    return .read(try GatewayJSON.memberStatus(json).errors.count)
                }
            } catch {
                return .refused("\(error)")
            }
        }
    }

    struct Shape: Sendable, CustomTestStringConvertible {
        let reader: Reader
        let name: String
        /// The answer of about the given size in bytes.
        let input: @Sendable (Int) -> WorkInput
        /// What reading it gives, for the count of its input.
        let expected: @Sendable (Int) -> ReadOutcome

        init(
            _ reader: Reader, _ name: String, _ input: @escaping @Sendable (Int) -> WorkInput,
            _ expected: @escaping @Sendable (Int) -> ReadOutcome
        ) {
            self.reader = reader
            self.name = name
            self.input = input
            self.expected = expected
        }

        var testDescription: String { "\(reader.rawValue): \(name)" }
    }

    // Depths: the answer, `kvs` and a key are 3 levels, so arrays 509 deep beside a key reach the
    // parser's 512; the answer, `result`, `events` and an event are 4.
    static let shapes: [Shape] = [
        Shape(.rangePage, "many keys", { .filling($0, rangeHead + "[", numbered: { i in keyValue("/p/k\(i)") + "," }, keyValue("/p/last") + "]}") }, { .read($0 + 1) }),
        Shape(.rangeValueBytes, "a long base64 value", { .filling($0, rangeHead + #"[{"key":"a2V5","value":""#, "QUFB", #"","mod_revision":"3"}]}"#) }, { .read(3 * $0) }),
        Shape(.rangeValueBytes, "a long base64 value of \\u escapes", { .filling($0, rangeHead + #"[{"key":"a2V5","value":""#, #"\u0051\u0055\u0046\u0042"#, #"","mod_revision":"3"}]}"#) }, { .read(3 * $0) }),
        Shape(.rangePage, "a long base64 key", { .filling($0, rangeHead + #"[{"key":""#, "QUFB", #"","value":"dg==","mod_revision":"3"}]}"#) }, { _ in .read(1) }),
        Shape(.rangePage, "keys beside arrays 509 deep", { .filling($0, rangeHead + "[", numbered: { i in String(keyValue("/p/k\(i)").dropLast()) + #","x":"# + arrays(509) + "}," }, keyValue("/p/last") + "]}") }, { .read($0 + 1) }),
        Shape(.rangePage, "many members beside the keys", { .filling($0, "{", numbered: { i in #""x\#(i)":[1,2,3],"# }, String(rangeHead.dropFirst()) + "[" + keyValue("/p/k") + "]}") }, { _ in .read(1) }),
        Shape(.rangePage, "nesting past the limit", { .filling($0, #"{"kvs":"#, "[", "") }, { _ in .refused("nesting deeper than 512") }),
        Shape(.rangePage, "an impossible revision after many keys", { .filling($0, #"{"kvs":["#, numbered: { i in keyValue("/p/k\(i)") + "," }, keyValue("/p/last") + #"],"header":{"revision":"-1"}}"#) }, { _ in .refused("an impossible revision") }),
        Shape(.rangePage, "a key of an impossible revision after many", { .filling($0, rangeHead + "[", numbered: { i in keyValue("/p/k\(i)") + "," }, keyValue("/p/last", revision: "-5") + "]}") }, { _ in .refused("an impossible revision") }),
        Shape(.rangePages, "a page of many ascending keys", { .filling($0, rangeHead + "[", numbered: { i in keyValue(ascendingKey(i)) + "," }, keyValue("/p/~") + "]}") }, { .read($0 + 1) }),

        Shape(.watch, "many events", { .filling($0, watchHead + "[", numbered: { i in event("/p/k\(i)", delete: i % 2 == 1) + "," }, event("/p/last") + "]}}") }, { .read($0 + 1) }),
        Shape(.watchValueBytes, "an event with a long base64 value", { .filling($0, watchHead + #"[{"type":"PUT","kv":{"key":"a2V5","value":""#, "QUFB", #"","mod_revision":"3"}}]}}"#) }, { .read(3 * $0) }),
        Shape(.watch, "events beside arrays 508 deep", { .filling($0, watchHead + "[", numbered: { i in String(event("/p/k\(i)").dropLast()) + #","x":"# + arrays(508) + "}," }, event("/p/last") + "]}}") }, { .read($0 + 1) }),
        Shape(.watch, "nesting past the limit", { .filling($0, #"{"result":{"events":"#, "[", "") }, { _ in .refused("nesting deeper than 512") }),
        Shape(.watch, "an error with a long message", { .filling($0, #"{"error":{"code":14,"message":""#, "a", #""}}"#) }, { _ in .refused("(code 14)") }),
        Shape(.watch, "an error with a long message of \\u escapes", { .filling($0, #"{"error":{"code":14,"message":""#, #"\u0041"#, #""}}"#) }, { _ in .refused("(code 14)") }),
        Shape(.watch, "an error without a message, with many details", { .filling($0, #"{"error":{"code":14,"details":["#, "1,", "1]}}") }, { _ in .refused("(code 14)") }),

        Shape(.transaction, "many responses", { .filling($0, #"{"header":{"revision":"9"},"succeeded":false,"responses":["#, numbered: { i in #"{"response_range":{"kvs":["# + keyValue("/p/k\(i)") + "]}}," }, #"{"response_range":{}}]}"#) }, { .read($0 + 1) }),
        Shape(.status, "many errors", { .filling($0, #"{"header":{"member_id":"1","revision":"9"},"leader":"1","errors":["#, numbered: { i in #""e\#(i)","# }, #""last"]}"#) }, { .read($0 + 1) }),
    ]

    @Test(arguments: Self.shapes)
    func workGrowsLinearly(_ shape: Shape) {
        let small = shape.input(Self.n)
        let large = shape.input(WorkGrowth.factor * Self.n)
        for input in [small, large] {
            let outcome = shape.reader.read(input.bytes)
            #expect(shape.expected(input.count).admits(outcome), "\(shape.name), \(input.bytes.count) bytes: \(outcome)")
        }
        let growth = WorkGrowth.measure(small: small.bytes, large: large.bytes) { shape.reader.read($0) }
        #expect(growth.ratio <= WorkGrowth.bound, "\(shape.name): \(growth)")
    }
}

/// A range answer up to its `kvs` array's value: `{"header":…,"kvs":`.
private let rangeHead = #"{"header":{"revision":"9"},"kvs":"#

/// A watch message up to its `events` array's value.
private let watchHead = #"{"result":{"header":{"revision":"9"},"events":"#

/// One key as the gateway writes it, key and value in base64.
private func keyValue(_ key: String, _ value: String = "v", revision: String = "3") -> String {
    #"{"key":"\#(base64(key))","value":"\#(base64(value))","mod_revision":"\#(revision)"}"#
}

private func event(_ key: String, delete: Bool = false) -> String {
    #"{"type":"\#(delete ? "DELETE" : "PUT")","kv":\#(keyValue(key))}"#
}

private func base64(_ text: String) -> String { Data(text.utf8).base64EncodedString() }

/// Keys whose byte order is their number's: `/p/00000000`, `/p/00000001`, ….
private func ascendingKey(_ index: Int) -> String {
    let digits = String(index)
    return "/p/" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
}

/// `depth` arrays, each holding the next.
private func arrays(_ depth: Int) -> String {
    String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
}
