import DefaultsCore
import NIOCore

/// A `didChange` event: the changed keys of one domain, its generation after them, and who changed them.
struct ChangeEvent: Sendable {
    var changeset: Changeset
    var generation: Int64
    var origin: Origin

    /// Folds a later event of the same domain into this one (latest value and generation win).
    mutating func merge(_ later: ChangeEvent) {
        changeset.merge(later.changeset)
        generation = later.generation
        origin = later.origin
    }

    /// The event's line, newline included.
    func encoded() -> [UInt8] {
        var writer = JSONWriter(capacity: 96)
        encode(into: &writer)
        return writer.bytes
    }

    /// Appends the event's line, newline included, to `writer`.
    func encode(into writer: inout JSONWriter) {
        writer.beginEvent(.didChange)
        writer.domain(changeset.domain)
        writer.key(literal: "generation"); writer.integer(generation)
        writer.key(literal: "changes"); writer.changes(changeset)
        writer.key(literal: "origin"); writer.origin(origin)
        writer.endObject()
        writer.newline()
    }
}

/// A subscribed connection, as the ``Notifier`` sees it: where its events go, and whether it can
/// take one now. The notifier decides the rest.
///
/// Called on the store's event loop only.
protocol EventSink: AnyObject {
    var sinkID: UInt64 { get }
    /// True when a line written now is the next the client reads: its socket takes writes, and
    /// none of its answers is still to be written.
    var canTakeEventNow: Bool { get }
    /// Writes and flushes one event line (a `didChange` or a notice), newline included.
    func write(eventLine: ByteBuffer)
}
