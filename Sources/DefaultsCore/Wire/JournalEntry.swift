import FoundationEssentials

/// One change of one key, as the change journal keeps it and `history` answers it: the one form
/// of an entry, written by the daemon (a line of a journal file, an element of `entries`) and
/// read by every client from here.
///
/// ```swift
/// // {"id":12,"time":"2026-11-27T10:00:00.123Z","key":"volume","old":3,"new":7,"writer":"defaults","origin":{…}}
/// let entry = JournalEntry(json: line, domain: "com.example.app")
/// entry?.change   // .values(old: .integer(3), new: .integer(7))
/// ```
public struct JournalEntry: Sendable, Hashable {
    /// The domain's generation after the change: every key one change touched shares it, and it
    /// grows with every change of the domain, across restarts.
    public var id: Int64
    /// When the daemon applied the change, to the millisecond.
    public var time: Date
    public var domain: DomainName
    public var key: String
    public var change: Change
    public var origin: Origin

    /// What happened to the key.
    public enum Change: Sendable, Hashable {
        /// The value before and after; nil: absent (set for the first time, or removed).
        case values(old: PlistValue?, new: PlistValue?)
        /// A secure key (a Settings bundle's `IsSecure` text field): that it changed, never its values.
        case secure
    }

    public init(id: Int64, time: Date, domain: DomainName, key: String, change: Change, origin: Origin) {
        self.id = id
        self.time = time
        self.domain = domain
        self.key = key
        self.change = change
        self.origin = origin
    }

    /// The entry as one JSON object; with `domain` as an element of `history`'s answer, without
    /// it as a line of the domain's own journal file.
    public func encode(into writer: inout JSONWriter, withDomain: Bool) {
        encode(into: &writer, withDomain: withDomain, time: RFC3339.format(time), writer: origin.writerName, origin: Self.encoded(origin))
    }

    private static func encoded(_ origin: Origin) -> [UInt8] {
        var writer = JSONWriter(capacity: 128)
        writer.origin(origin)
        return writer.bytes
    }

    /// Encodes entries as the lines of a journal file (without their domain), each ended by a
    /// newline, until `writer` holds `limit` bytes or more; answers how many it encoded. A time
    /// or a writer shared with the entry before (a burst of changes, one program's) is
    /// formatted once.
    @discardableResult
    public static func encodeLines(_ entries: some Sequence<JournalEntry>, into writer: inout JSONWriter, upTo limit: Int = .max) -> Int {
        var time: (date: Date, text: String)?
        var origin: (origin: Origin, name: String, bytes: [UInt8])?
        var count = 0
        for entry in entries {
            guard writer.count < limit else { break }
            count += 1
            if time?.date != entry.time { time = (entry.time, RFC3339.format(entry.time)) }
            if origin?.origin != entry.origin { origin = (entry.origin, entry.origin.writerName, encoded(entry.origin)) }
            entry.encode(into: &writer, withDomain: false, time: time!.text, writer: origin!.name, origin: origin!.bytes)
            writer.newline()
        }
        return count
    }

    private func encode(into writer: inout JSONWriter, withDomain: Bool, time: String, writer name: String, origin: [UInt8]) {
        writer.beginObject()
        writer.key(literal: "id"); writer.integer(id)
        writer.key(literal: "time"); writer.string(time)
        if withDomain {
            writer.key(literal: "domain"); writer.string(domain.rawValue)
            if domain.isCurrentHost { writer.key(literal: "host"); writer.string(DomainName.Host.currentWireValue) }
        }
        writer.key(literal: "key"); writer.string(key)
        switch change {
        case .secure:
            writer.key(literal: "secure"); writer.bool(true)
        case .values(let old, let new):
            if let old { writer.key(literal: "old"); writer.value(old) }
            if let new { writer.key(literal: "new"); writer.value(new) }
        }
        writer.key(literal: "writer"); writer.string(name)
        writer.key(literal: "origin"); writer.raw(origin)
        writer.endObject()
    }

    /// Reads an entry; nil for anything that is not a whole entry (a torn line of a journal
    /// file, a value that is not a property-list value). The domain is the entry's own when it
    /// names one, else `domain`.
    public init?(json: JSON, domain: DomainName?) {
        guard case .object(let members) = json,
            case .integer(let id)? = members["id"],
            case .string(let timeText)? = members["time"], let time = RFC3339.parse(timeText),
            case .string(let key)? = members["key"],
            let origin = Origin(wire: members["origin"])
        else { return nil }
        let named: DomainName?
        if case .string(let name)? = members["domain"] {
            let host: DomainName.Host = if case .string(let text)? = members["host"], text == DomainName.Host.currentWireValue { .current } else { .any }
            named = try? DomainName(name, host: host)
        } else {
            named = domain
        }
        guard let named else { return nil }
        let change: Change
        if case .bool(true)? = members["secure"] {
            change = .secure
        } else {
            do throws(DefaultsError) {
                change = .values(old: try members["old"].map(WireValue.decode), new: try members["new"].map(WireValue.decode))
            } catch {
                return nil
            }
        }
        // To the microsecond, as written: an entry read reads the same when written again.
        let microseconds = (time.timeIntervalSince1970 * 1_000_000).rounded()
        self.init(
            id: id, time: Date(timeIntervalSince1970: microseconds / 1_000_000), domain: named, key: key, change: change,
            origin: origin)
    }
}
