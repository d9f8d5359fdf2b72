import DefaultsCore
import NIOCore
import OrderedCollections

/// The events a subscriber could not take when they came (its socket was not writable, or its
/// own answers were still to be sent ahead of them),
/// merged per domain so that it can grow neither the daemon's memory nor anyone's latency: a
/// domain's changes fold into one event (the latest value of each key wins), and a domain's
/// `bundleDefaultsChanged` notices into one.
///
/// Owned by the ``Notifier``, one per slow subscriber, on the state-owning loop; it sends what
/// the outbox gives back once the subscriber can take it.
struct EventOutbox {
    private var events: OrderedDictionary<DomainName, ChangeEvent> = [:]
    private var notices: OrderedDictionary<DomainName, ByteBuffer> = [:]

    var hasEvents: Bool { !events.isEmpty }
    var hasNotices: Bool { !notices.isEmpty }
    var isEmpty: Bool { events.isEmpty && notices.isEmpty }

    mutating func keep(_ event: ChangeEvent) {
        if let index = events.index(forKey: event.changeset.domain) {
            events.values[index].merge(event)
        } else {
            events[event.changeset.domain] = event
        }
    }

    mutating func keep(notice line: ByteBuffer, domain: DomainName) { notices[domain] = line }

    /// The next line to send: the notices first, then the merged events, oldest domain first.
    mutating func next() -> ByteBuffer? {
        if let line = notices.values.first {
            notices.removeFirst()
            return line
        }
        if let event = events.values.first {
            events.removeFirst()
            return ByteBuffer(bytes: event.encoded())
        }
        return nil
    }
}
