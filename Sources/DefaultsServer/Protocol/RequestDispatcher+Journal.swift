import DefaultsCore
import FoundationEssentials
import NIOCore

/// `history` and `revert`: the change journal's operations (docs/PROTOCOL.md).
extension RequestDispatcher {
    /// The most bytes of entries one `history` answer carries: older entries past it are left
    /// out, and the answer says so (`"truncated":true`).
    static let maximumHistoryAnswerBytes = 16 << 20

    func history(_ request: Request, session: Session) throws(DefaultsError) -> EventLoopFuture<Reply> {
        guard let journal = store.journal else { throw ChangeJournal.notKept(nil) }
        let query = HistoryQuery(
            domain: request.has("domain") ? try session.domain(of: request) : nil,
            key: request.has("key") ? try request.key() : nil,
            since: try request.time("since"), until: try request.time("until"),
            writer: try request.optionalString("writer"),
            limit: Int(try request.integer("limit", in: 1...Int64(HistoryQuery.maximumLimit)) ?? Int64(HistoryQuery.defaultLimit)))
        return journal.history(query) { entries in
            // Newest first until the answer is full, then written oldest first.
            var encoded: [[UInt8]] = []
            var bytes = 0
            var writer = JSONWriter(capacity: 512)
            for entry in entries.reversed() {
                writer.removeAll()
                entry.encode(into: &writer, withDomain: true)
                guard bytes + writer.count <= Self.maximumHistoryAnswerBytes else { break }
                bytes += writer.count + 1
                encoded.append(writer.bytes)
            }
            var list = JSONWriter(capacity: bytes + 2)
            list.beginArray()
            for entry in encoded.reversed() { list.raw(entry) }
            list.endArray()
            return HistoryAnswer(entries: list.bytes, truncated: encoded.count < entries.count)
        }.map(\.reply)
    }

    /// Undoes changes back to an entry, a time or the latest change, as one `apply` under the
    /// same checks as any other, whose origin names the entry it returned the domain to before.
    func revert(_ request: Request, session: Session) throws(DefaultsError) -> EventLoopFuture<Reply> {
        guard let journal = store.journal else { throw ChangeJournal.notKept(nil) }
        let domain = try session.domain(of: request)
        let target: RevertPlan.Target =
            if let id = try request.integer("to", in: 0...Int64.max) { .entry(id) }
            else if let time = try request.time("time") { .time(time) }
            else { .latest }
        let key = request.has("key") ? try request.key() : nil
        var origin = session.origin
        let dispatcher = self
        return journal.revertPlan(of: domain, to: target, key: key).assumeIsolated().flatMapThrowing { plan in
            try dispatcher.refuseWritesWhenStopping()
            let current = try dispatcher.store.values(of: domain)
            var changeset = Changeset(domain: domain)
            for (key, value) in plan.values.sorted(by: { $0.key < $1.key }) where current[key] != value {
                if let value { changeset.set(key, to: value) } else { changeset.remove(key) }
            }
            origin.revert = plan.from
            let generation = try dispatcher.store.apply(changeset, origin: origin)
            var changes = JSONWriter(capacity: 128)
            changes.changes(changeset)
            var fields: [(String, Reply.Field)] = [("generation", .integer(generation))]
            if let from = plan.from { fields.append(("to", .integer(from))) }
            fields.append(("changes", .raw(changes.bytes)))
            if !plan.skipped.isEmpty { fields.append(("skipped", .strings(plan.skipped))) }
            return Reply(fields)
        }.nonisolated()
    }
}

/// A `history` answer made on the journal thread: the entries, encoded.
private struct HistoryAnswer: Sendable {
    let entries: [UInt8]
    /// Whether older entries were left out for the answer's size.
    let truncated: Bool

    var reply: Reply { Reply([("entries", .raw(entries))] + (truncated ? [("truncated", .bool(true))] : [])) }
}
