import DefaultsCore
import FoundationEssentials

/// One key of etcd as a range, a transaction or a watch reports it.
///
/// etcd keys and values are bytes; the gateway carries them in base64. defaultsd only ever
/// writes UTF-8 (its key layout and JSON values), so they are held as text here; bytes that are
/// not UTF-8 (another program's keys under the prefix) come out with replacement characters and
/// fail the caller's parsing, which skips them.
public struct EtcdKeyValue: Sendable, Hashable {
    public var key: String
    public var value: String
    /// The revision of the last write to the key.
    public var modRevision: Int64

    public init(key: String, value: String, modRevision: Int64) {
        self.key = key
        self.value = value
        self.modRevision = modRevision
    }
}

/// A change a watch reports: a put with the new value, or a removal.
public struct EtcdEvent: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case put, delete }
    public var kind: Kind
    /// For a removal, `value` is empty and `modRevision` is the removal's revision.
    public var keyValue: EtcdKeyValue
}

/// One message of a watch stream.
public struct EtcdWatchMessage: Sendable, Hashable {
    /// The revisions taken from etcd: a cluster writing a million times a second would need 285
    /// years to pass 2^53, so a larger (or negative) one is a malformed answer, never arithmetic
    /// that overflows, and never a revision kept in the roaming journal.
    public static let possibleRevisions: ClosedRange<Int64> = 0...(1 << 53)

    /// The cluster's revision when the message was sent.
    public var revision: Int64
    public var events: [EtcdEvent]
    /// Set when the watch was cancelled because its start revision was compacted away: the
    /// oldest revision still kept.
    public var compactRevision: Int64?
    public var canceled: Bool
}

/// A guard of a transaction: the key was last written at `modRevision` (0: it does not exist).
public struct EtcdCompare: Sendable, Hashable {
    public var key: String
    public var modRevision: Int64

    public init(key: String, modRevision: Int64) {
        self.key = key
        self.modRevision = modRevision
    }
}

/// One operation of a transaction.
public enum EtcdOperation: Sendable, Hashable {
    case put(key: String, value: String)
    case delete(key: String)
    /// Reads one key (a transaction's failure branch reads the keys whose guard failed).
    case get(key: String)
}

/// What a transaction did: which branch ran, at which revision, and what its reads found.
public struct EtcdTransactionResult: Sendable, Hashable {
    public var succeeded: Bool
    /// The cluster's revision after the transaction: the revision of its writes when it wrote.
    public var revision: Int64
    /// For each `.get` of the branch that ran, in order: the key, or nil when it does not exist.
    public var reads: [EtcdKeyValue?]
}

/// The keys under a prefix at one revision.
public struct EtcdRange: Sendable, Hashable {
    public var revision: Int64
    public var keyValues: [EtcdKeyValue]

    package init(revision: Int64, keyValues: [EtcdKeyValue]) {
        self.revision = revision
        self.keyValues = keyValues
    }
}

/// What one member says of itself (`/v3/maintenance/status`): how far it has applied the
/// cluster's history and which leader it follows. A member cut off from the others keeps
/// answering this, with no leader once its election timeout passes and a revision that stops.
public struct EtcdMemberStatus: Sendable, Hashable {
    /// The member's own ID, as etcd prints it (hexadecimal).
    public var memberID: String
    /// The leader's ID, or nil when the member has none.
    public var leader: String?
    /// The cluster's revision as this member has applied it.
    public var revision: Int64
    /// The member's own problems, e.g. "etcdserver: no leader".
    public var errors: [String]

    public init(memberID: String, leader: String?, revision: Int64, errors: [String] = []) {
        self.memberID = memberID
        self.leader = leader
        self.revision = revision
        self.errors = errors
    }
}

/// Why a request to etcd did not give an answer.
public enum EtcdError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No endpoint answered: the cluster is not reachable from here.
    case unreachable(String)
    /// The cluster answered with an error (gRPC code and message), e.g. no leader, bad credentials.
    case refused(code: Int, message: String)
    /// An answer that is not what etcd's gateway sends.
    case malformed(String)

    public var description: String {
        switch self {
        case .unreachable(let reason): "no etcd endpoint answered: \(reason)"
        case .refused(let code, let message): "etcd refused the request (code \(code)): \(message)"
        case .malformed(let reason): "unexpected answer from etcd: \(reason)"
        }
    }
}

// MARK: - The gateway's JSON

/// The JSON mapping of etcd's protobuf messages as its gateway speaks it: bytes in base64,
/// 64-bit integers as strings, fields at their default value (false, 0, empty) left out.
///
/// Every answer of a cluster is input: each reader here takes any JSON and gives a typed value
/// or ``EtcdError/malformed(_:)``, never a trap (the `etcd-gateway` fuzz harness holds it to that).
///
/// ```swift
/// let message = try GatewayJSON.watchMessage(try JSONParser.parse(line))
/// ```
package enum GatewayJSON {
    package static func base64(_ text: String) -> JSON { .string(Data(text.utf8).base64EncodedString()) }

    package static func text(_ json: JSON?) -> String {
        guard case .string(let encoded)? = json, let data = Data(base64Encoded: encoded) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    package static func int64(_ json: JSON?) -> Int64 {
        switch json {
        case .string(let text)?: Int64(text) ?? 0
        case .integer(let value)?: value
        default: 0
        }
    }

    /// A revision, checked to be one etcd can have sent (``EtcdWatchMessage/possibleRevisions``).
    package static func revision(_ json: JSON?) throws(EtcdError) -> Int64 {
        let value = int64(json)
        guard EtcdWatchMessage.possibleRevisions.contains(value) else { throw .malformed("an impossible revision \(value)") }
        return value
    }

    package static func bool(_ json: JSON?) -> Bool {
        if case .bool(let value)? = json { return value }
        return false
    }

    package static func array(_ json: JSON?) -> [JSON] {
        if case .array(let elements)? = json { return elements }
        return []
    }

    package static func keyValue(_ json: JSON) throws(EtcdError) -> EtcdKeyValue {
        EtcdKeyValue(key: text(json["key"]), value: text(json["value"]), modRevision: try revision(json["mod_revision"]))
    }

    /// The end of the range of every key that starts with `prefix`: the prefix with its last
    /// byte raised by one (etcd's `clientv3.GetPrefixRangeEnd`).
    package static func prefixEnd(_ prefix: String) -> JSON {
        var bytes = Array(prefix.utf8)
        while let last = bytes.last {
            if last < 0xFF {
                bytes[bytes.count - 1] = last + 1
                return .string(Data(bytes).base64EncodedString())
            }
            bytes.removeLast()
        }
        return .string(Data([0]).base64EncodedString())  // every key
    }

    package static func compare(_ compare: EtcdCompare) -> JSON {
        ["result": "EQUAL", "target": "MOD", "key": base64(compare.key), "mod_revision": .string(String(compare.modRevision))]
    }

    package static func operation(_ operation: EtcdOperation) -> JSON {
        switch operation {
        case .put(let key, let value): ["request_put": ["key": base64(key), "value": base64(value)]]
        case .delete(let key): ["request_delete_range": ["key": base64(key)]]
        case .get(let key): ["request_range": ["key": base64(key)]]
        }
    }

    package static func transactionResult(_ json: JSON) throws(EtcdError) -> EtcdTransactionResult {
        var reads: [EtcdKeyValue?] = []
        for response in array(json["responses"]) {
            guard let range = response["response_range"] else { continue }
            if let first = array(range["kvs"]).first { reads.append(try keyValue(first)) } else { reads.append(nil) }
        }
        return EtcdTransactionResult(
            succeeded: bool(json["succeeded"]), revision: try revision(json["header"]?["revision"]), reads: reads)
    }

    package static func watchMessage(_ json: JSON) throws(EtcdError) -> EtcdWatchMessage {
        if let error = json["error"] { throw refusal(error) }
        guard let result = json["result"] else { throw .malformed("a watch message without a result") }
        var events: [EtcdEvent] = []
        for event in array(result["events"]) {
            events.append(EtcdEvent(kind: event["type"] == .string("DELETE") ? .delete : .put, keyValue: try keyValue(event["kv"] ?? .null)))
        }
        let compact = try revision(result["compact_revision"])
        return EtcdWatchMessage(
            revision: try revision(result["header"]?["revision"]), events: events, compactRevision: compact > 0 ? compact : nil,
            canceled: bool(result["canceled"]))
    }

    /// One page of a range answer: its keys, its revision, and where the next page starts
    /// (nil on the last page). Alone it checks nothing across pages; ``EtcdRangePages`` does.
    package static func rangePage(_ answer: JSON) throws(EtcdError) -> (keyValues: [EtcdKeyValue], revision: Int64, nextStart: JSON?) {
        let kvs = array(answer["kvs"])
        let keyValues = try kvs.map { json throws(EtcdError) in try keyValue(json) }
        let revision = try revision(answer["header"]?["revision"])
        guard bool(answer["more"]), case .string(let last)? = kvs.last?["key"], let lastKey = Data(base64Encoded: last) else {
            return (keyValues, revision, nil)
        }
        // The next page starts right after the last key: that key with a zero byte appended.
        return (keyValues, revision, .string((lastKey + [0]).base64EncodedString()))
    }

    /// A member's status answer. IDs arrive as decimal strings and are kept in etcd's own
    /// hexadecimal form; a missing or zero leader means the member has none.
    package static func memberStatus(_ json: JSON) throws(EtcdError) -> EtcdMemberStatus {
        guard let header = json["header"] else { throw .malformed("a status answer without a header") }
        func id(_ json: JSON?) -> String? {
            guard case .string(let text)? = json, let value = UInt64(text), value != 0 else { return nil }
            return String(value, radix: 16)
        }
        let errors = array(json["errors"]).compactMap { error -> String? in
            if case .string(let text) = error { return text }
            return nil
        }
        return EtcdMemberStatus(
            memberID: id(header["member_id"]) ?? "?", leader: id(json["leader"]), revision: try revision(header["revision"]),
            errors: errors)
    }

    /// The gateway's error body, `{"error":"...","code":N,"message":"..."}`.
    package static func refusal(_ json: JSON) -> EtcdError {
        let code = Int(int64(json["code"]))
        if case .string(let message)? = json["message"] { return .refused(code: code, message: message) }
        if case .string(let message)? = json["error"] { return .refused(code: code, message: message) }
        return .refused(code: code, message: "\(json)")
    }
}

// MARK: - A range read in pages

/// A range read in pages, each asked from right after the last key of the page before and all
/// at the revision of the first: the pages' keys gathered, each page held to what etcd sends.
///
/// A member that answers "more" for ever must neither keep a read going nor make it hold more
/// and more. So every page advances (its keys in ascending byte order, the first after the last
/// key of the page before), a page that says more follows holds every key asked for (etcd sets
/// `more` only when it cut the page at the limit), and the whole range stays within
/// `maximumKeys` keys and `maximumBytes` bytes. A read therefore takes at most
/// `maximumKeys / keysPerPage + 1` pages; past any of these rules it fails with
/// ``EtcdError/malformed(_:)``.
///
/// ```swift
/// var pages = EtcdRangePages(keysPerPage: 16, maximumKeys: 1 << 16, maximumBytes: 64 << 20)
/// var start = GatewayJSON.base64(prefix)
/// while let next = try pages.take(try await page(from: start, at: pages.revision)) { start = next }
/// let range = pages.range
/// ```
package struct EtcdRangePages: Sendable {
    package let keysPerPage: Int
    package let maximumKeys: Int
    package let maximumBytes: Int
    /// The revision of the first page, at which every later page is asked.
    package private(set) var revision: Int64?
    private var keyValues: [EtcdKeyValue] = []
    /// The bytes of the keys and values gathered, as they are held.
    private var bytes = 0
    /// The last key read, as bytes: etcd orders keys by their bytes, which the text form (with
    /// replacement characters for bytes that are not UTF-8) does not keep.
    private var lastKey: [UInt8]?

    package init(keysPerPage: Int, maximumKeys: Int, maximumBytes: Int) {
        precondition(keysPerPage > 0, "a range page asks for at least one key")
        self.keysPerPage = keysPerPage
        self.maximumKeys = maximumKeys
        self.maximumBytes = maximumBytes
    }

    /// Every key read so far, at the first page's revision.
    package var range: EtcdRange { EtcdRange(revision: revision ?? 0, keyValues: keyValues) }

    /// Takes one page's answer, and returns where the next page starts (the gateway's base64
    /// form of a key), or nil when it was the last.
    package mutating func take(_ answer: JSON) throws(EtcdError) -> JSON? {
        let kvs = GatewayJSON.array(answer["kvs"])
        guard kvs.count <= keysPerPage else {
            throw .malformed("a range page of \(kvs.count) keys where at most \(keysPerPage) were asked for")
        }
        let more = GatewayJSON.bool(answer["more"])
        if more && kvs.count < keysPerPage {
            throw .malformed("a range page that says more follows with \(kvs.count) of the \(keysPerPage) keys asked for")
        }
        guard keyValues.count + kvs.count <= maximumKeys else { throw .malformed("a range of more than \(maximumKeys) keys") }
        let page = try GatewayJSON.rangePage(answer)
        for json in kvs {
            guard case .string(let encoded)? = json["key"], let key = Data(base64Encoded: encoded).map({ [UInt8]($0) }) else {
                throw .malformed("a range key that is not base64")
            }
            if let lastKey, !lastKey.lexicographicallyPrecedes(key) {
                throw .malformed("a range page that does not advance: a key that is not after the one before it")
            }
            lastKey = key
        }
        let pageBytes = page.keyValues.reduce(0) { $0 + $1.key.utf8.count + $1.value.utf8.count }
        guard bytes + pageBytes <= maximumBytes else {
            throw .malformed("a range of more than \(maximumBytes) bytes of keys and values")
        }
        if revision == nil { revision = page.revision }
        keyValues += page.keyValues
        bytes += pageBytes
        return more ? page.nextStart : nil
    }
}
