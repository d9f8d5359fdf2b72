import DefaultsCore
import EtcdWire
import FoundationEssentials
import SettingsBundles

/// The coverage-guided fuzz harness of every parser that takes input from outside: request
/// lines and wire values (JSON), the three property-list formats, `.strings` files, the
/// answers of an etcd cluster's gateway, and the change journal's lines. Each
/// harness feeds one input to its parser and, where the parser accepts it, checks the round
/// trip: decode → encode → decode gives the first decode again. A failed check traps, which is
/// what libFuzzer reports as a crash.
///
/// The same code runs under libFuzzer (`make fuzz`, through `defaultsd-fuzz`) and over every
/// input kept in `fuzz/seeds` and `fuzz/regressions` in the ordinary tests.
///
/// ```swift
/// FuzzHarness.binaryPropertyList.run(Array(bytes))   // returns, or traps on a broken invariant
/// ```
public enum FuzzHarness: String, CaseIterable, Sendable {
    case json
    case xmlPropertyList = "xml-plist"
    case binaryPropertyList = "binary-plist"
    case oldStylePropertyList = "old-style-plist"
    case stringsFile = "strings"
    case etcdGateway = "etcd-gateway"
    case journalEntry = "journal-entry"

    public func run(_ bytes: [UInt8]) {
        switch self {
        case .json: Self.json(bytes)
        case .xmlPropertyList:
            guard let value = try? XMLPropertyList.decode(bytes) else { return }
            Self.expectRoundTrips(value, through: "XML") { try XMLPropertyList.decode(XMLPropertyList.encode($0)) }
            Self.expectRoundTrips(value, through: "binary") { try BinaryPropertyList.decode(BinaryPropertyList.encode($0)) }
        case .binaryPropertyList:
            guard let value = try? BinaryPropertyList.decode(bytes) else { return }
            Self.expectRoundTrips(value, through: "binary") { try BinaryPropertyList.decode(BinaryPropertyList.encode($0)) }
        case .oldStylePropertyList:
            // The text path of PropertyListFile: encodings detected, then the old-style grammar.
            guard !BinaryPropertyList.isBinary(bytes), let value = try? PropertyListFile.decodeValue(Data(bytes)) else { return }
            Self.expectRoundTrips(value, through: "XML") { try XMLPropertyList.decode(XMLPropertyList.encode($0)) }
        case .stringsFile:
            _ = StringsFile.read(Data(bytes), path: "fuzz.strings")
        case .etcdGateway:
            Self.etcdGateway(bytes)
        case .journalEntry:
            Self.journalEntry(bytes)
        }
    }

    /// A line of a change journal file, and an entry of a `history` answer: whatever is taken
    /// as an entry writes back as the same entry, with its domain and without.
    private static func journalEntry(_ bytes: [UInt8]) {
        let fileDomain = try! DomainName("com.example.fuzz")
        guard let json = try? JSONParser.parse(bytes), let entry = JournalEntry(json: json, domain: fileDomain) else { return }
        for withDomain in [true, false] {
            var writer = JSONWriter()
            entry.encode(into: &writer, withDomain: withDomain)
            let again = (try? JSONParser.parse(writer.bytes)).flatMap { JournalEntry(json: $0, domain: withDomain ? nil : entry.domain) }
            precondition(again == entry, "a journal entry does not round-trip: \(entry)")
        }
    }

    /// A request line as the daemon reads it: the whole line checked, its members found, and a
    /// value taken as a property-list value where it is one.
    private static func json(_ bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes) else {
            precondition((try? JSONParser.parseObjectMembers(bytes)) == nil, "parseObjectMembers accepted what parse refused")
            return
        }
        var writer = JSONWriter()
        writer.json(json)
        let again = try? JSONParser.parse(writer.bytes)
        precondition(again == json, "JSON does not round-trip: \(json) → \(String(decoding: writer.bytes, as: UTF8.self))")
        if case .object = json {
            precondition((try? JSONParser.parseObjectMembers(bytes)) != nil, "parseObjectMembers refused an object parse accepted")
        }
        guard let value = try? WireValue.decode(json) else { return }
        let wire = WireValue.encode(value)
        precondition(wire.count == WireValue.encodedSize(of: value), "encodedSize disagrees with the encoding of \(value)")
        let decoded = try? WireValue.decode(try JSONParser.parse(wire))
        precondition(decoded == value, "a wire value does not round-trip: \(value)")
    }

    /// An answer of etcd's gateway, read as each request's answer: a range page, a
    /// transaction's result, a watch line, a member's status, an error body. Whatever is accepted holds only
    /// revisions etcd can have sent.
    private static func etcdGateway(_ bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes) else { return }
        let possible = EtcdWatchMessage.possibleRevisions
        if let page = try? GatewayJSON.rangePage(json) {
            precondition(possible.contains(page.revision) && page.keyValues.allSatisfy { possible.contains($0.modRevision) })
        }
        if let result = try? GatewayJSON.transactionResult(json) {
            precondition(possible.contains(result.revision) && result.reads.allSatisfy { $0.map { possible.contains($0.modRevision) } ?? true })
        }
        if let message = try? GatewayJSON.watchMessage(json) {
            precondition(possible.contains(message.revision) && message.events.allSatisfy { possible.contains($0.keyValue.modRevision) })
            precondition(message.compactRevision.map { $0 > 0 && possible.contains($0) } ?? true)
        }
        if let status = try? GatewayJSON.memberStatus(json) {
            precondition(possible.contains(status.revision) && status.leader != "0")
        }
        _ = GatewayJSON.refusal(json)
    }

    private static func expectRoundTrips(
        _ value: PlistValue, through format: String, _ roundTrip: (PlistValue) throws -> PlistValue
    ) {
        let again: PlistValue
        do { again = try roundTrip(value) } catch { preconditionFailure("\(format) refuses what it wrote of \(value): \(error)") }
        precondition(again == value, "\(format) does not round-trip: \(value) → \(again)")
    }
}
