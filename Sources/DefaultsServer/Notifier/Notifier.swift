import DefaultsCore
import NIOCore
import OrderedCollections

/// Who is told of what, and when: the one place that decides every event's way out.
///
/// Owned by the store's event loop. The rule, top to bottom:
///
/// 1. **Who.** A connection subscribed to a domain, or to everything, gets the domain's events;
///    each event once, even when it subscribed both ways. Subscriptions count as they stand when
///    the event leaves.
/// 2. **What.** The changes published during one read batch of the writer's connection (outside
///    one, during one event-loop turn) are gathered per (domain, writer) into one `didChange`, so
///    a changeset, or a pipelined burst read in one go, is one event. It is encoded once, and the
///    same bytes go to every subscriber.
/// 3. **When.** At the end of that batch (``releaseDelivery()``), before the writer's own answers
///    are written, so a subscriber never waits for the writer's socket; outside a batch, at the end
///    of the loop turn. The events of one delivery leave in the order their bursts began.
/// 4. **After the answers it is owed.** A subscriber takes an event only when nothing of its own
///    is still to be written (``EventSink/canTakeEventNow``): a connection that subscribes and
///    writes reads the answer to its request before the event that request caused.
/// 5. **When a connection is slow.** Whatever it cannot take now waits in its ``EventOutbox``:
///    a domain's events merge into one (the latest value of each key wins) and its
///    `bundleDefaultsChanged` notices into one, sent first. So a subscriber that does not read
///    grows neither the daemon's memory nor anyone's latency. The connection says when it can
///    take them again (``sendWaiting(to:)``: its answers are written, or its socket drained).
final class Notifier {
    private struct BurstKey: Hashable {
        var domain: DomainName
        var source: OriginSource
        var connection: UInt64
        var host: String?

        init(_ event: ChangeEvent) {
            domain = event.changeset.domain
            source = event.origin.source
            connection = event.origin.connection
            host = event.origin.host
        }
    }

    private let eventLoop: EventLoop
    private var byDomain: [DomainName: [UInt64: EventSink]] = [:]
    private var everything: [UInt64: EventSink] = [:]
    /// The bursts gathered since the last delivery, in the order they began.
    private var bursts: OrderedDictionary<BurstKey, ChangeEvent> = [:]
    /// The table `bursts` is swapped with when they are delivered, so neither is reallocated.
    private var spareBursts: OrderedDictionary<BurstKey, ChangeEvent> = [:]
    private var deliveryScheduled = false
    /// Connections running a read batch; they deliver when it ends (`releaseDelivery`).
    private var holds = 0
    /// Reused for every event, so encoding allocates nothing.
    private var encoder = JSONWriter(capacity: BufferSizes.initialWriter)
    /// The buffer events leave in. Once every subscriber's socket took it, nothing else holds
    /// it and the next event reuses its storage.
    private var eventLine: ByteBuffer?
    /// What each slow subscriber could not take yet; no entry for one that took everything.
    private var outboxes: [UInt64: EventOutbox] = [:]
    private(set) var eventsPublished = 0

    init(eventLoop: EventLoop) { self.eventLoop = eventLoop }

    var subscriberCount: Int {
        var ids = Set(everything.keys)
        for sinks in byDomain.values { ids.formUnion(sinks.keys) }
        return ids.count
    }

    func subscribe(_ sink: EventSink, to domains: [DomainName]) {
        eventLoop.preconditionInEventLoop()
        for domain in domains { byDomain[domain, default: [:]][sink.sinkID] = sink }
    }

    func subscribeToEverything(_ sink: EventSink) {
        eventLoop.preconditionInEventLoop()
        everything[sink.sinkID] = sink
    }

    func unsubscribe(_ sink: EventSink, from domains: [DomainName]) {
        eventLoop.preconditionInEventLoop()
        for domain in domains {
            byDomain[domain]?[sink.sinkID] = nil
            if byDomain[domain]?.isEmpty == true { byDomain[domain] = nil }
        }
    }

    /// Ends every subscription of the sink (its connection closed), and drops what waited for it.
    func unsubscribeFromEverything(_ sink: EventSink) {
        eventLoop.preconditionInEventLoop()
        everything[sink.sinkID] = nil
        outboxes[sink.sinkID] = nil
        for domain in Array(byDomain.keys) { unsubscribe(sink, from: [domain]) }
    }

    /// Queues an effective change for delivery at the end of the writer's read batch
    /// (`releaseDelivery`) or, outside a batch, of this event-loop turn. Builds no event
    /// when nobody subscribes to the domain.
    func publish(_ changeset: Changeset, generation: Int64, origin: Origin) {
        eventLoop.preconditionInEventLoop()
        guard !everything.isEmpty || byDomain[changeset.domain] != nil else { return }
        let event = ChangeEvent(changeset: changeset, generation: generation, origin: origin)
        let key = BurstKey(event)
        if let index = bursts.index(forKey: key) {
            bursts.values[index].merge(event)
        } else {
            bursts[key] = event
        }
        if holds == 0 && !deliveryScheduled {
            deliveryScheduled = true
            // Tasks run after the I/O of the current turn, so every read of this turn is gathered.
            eventLoop.assumeIsolated().execute { [self] in
                deliveryScheduled = false
                deliverPending()
            }
        }
    }

    /// A connection starts running the requests of one read batch: what they publish waits
    /// for the batch to end instead of a task of its own.
    func holdDelivery() {
        eventLoop.preconditionInEventLoop()
        holds += 1
    }

    /// The batch ended (its answers are sent): delivers what it published.
    func releaseDelivery() {
        eventLoop.preconditionInEventLoop()
        holds -= 1
        if holds == 0 { deliverPending() }
    }

    /// Sends the gathered events now.
    func deliverPending() {
        eventLoop.preconditionInEventLoop()
        guard !bursts.isEmpty else { return }
        // Swapped out before delivering, so that anything published meanwhile starts a burst of its own.
        var ready: OrderedDictionary<BurstKey, ChangeEvent> = [:]
        swap(&ready, &spareBursts)
        swap(&ready, &bursts)
        for event in ready.values { deliver(event) }
        ready.removeAll(keepingCapacity: true)
        spareBursts = ready
        if encoder.capacity > BufferSizes.largestKept { encoder = JSONWriter(capacity: BufferSizes.initialWriter) }
    }

    /// Encodes one event once and hands the same bytes to each of its subscribers.
    private func deliver(_ event: ChangeEvent) {
        guard !event.changeset.isEmpty else { return }
        let specific = byDomain[event.changeset.domain]
        guard !everything.isEmpty || specific != nil else { return }
        eventsPublished += 1
        encoder.removeAll()
        event.encode(into: &encoder)
        var line = eventLine ?? ByteBufferAllocator().buffer(capacity: BufferSizes.initialWriter)
        eventLine = nil
        line.clear()
        encoder.withBytes { line.writeBytes($0) }
        let everyone = everything
        for sink in everyone.values { send(event, line: line, to: sink) }
        for (id, sink) in specific ?? [:] where everyone[id] == nil { send(event, line: line, to: sink) }
        if line.capacity <= BufferSizes.largestKept { eventLine = line }
    }

    /// Rules 4 and 5: written now when the subscriber can take it and nothing waits before it;
    /// else kept in its outbox.
    private func send(_ event: ChangeEvent, line: ByteBuffer, to sink: EventSink) {
        if outboxes.isEmpty || outboxes[sink.sinkID] == nil, sink.canTakeEventNow {
            sink.write(eventLine: line)
        } else {
            outboxes[sink.sinkID, default: EventOutbox()].keep(event)
        }
    }

    private func send(notice line: ByteBuffer, domain: DomainName, to sink: EventSink) {
        if outboxes.isEmpty || outboxes[sink.sinkID] == nil, sink.canTakeEventNow {
            sink.write(eventLine: line)
        } else {
            outboxes[sink.sinkID, default: EventOutbox()].keep(notice: line, domain: domain)
        }
    }

    /// The subscriber can take events again (its answers are written, or its socket drained):
    /// sends what waited for it, as long as it can take them.
    func sendWaiting(to sink: EventSink) {
        eventLoop.preconditionInEventLoop()
        guard !outboxes.isEmpty, var outbox = outboxes.removeValue(forKey: sink.sinkID) else { return }
        while sink.canTakeEventNow, let line = outbox.next() { sink.write(eventLine: line) }
        if !outbox.isEmpty { outboxes[sink.sinkID] = outbox }
    }

    /// Tells the subscribers of `domain` that its Settings bundle defaults changed:
    /// `{"event":"bundleDefaultsChanged","domain":"..."}`; they fetch them again with `bundleDefaults`.
    func publishBundleDefaultsChanged(_ domain: DomainName) {
        eventLoop.preconditionInEventLoop()
        let sinks = subscribers(of: domain)
        guard !sinks.isEmpty else { return }
        var writer = JSONWriter(capacity: 80)
        writer.beginEvent(.bundleDefaultsChanged)
        writer.key(literal: "domain"); writer.string(domain.rawValue)
        writer.endObject()
        writer.newline()
        let line = writer.withBytes { ByteBuffer(bytes: $0) }
        for sink in sinks { send(notice: line, domain: domain, to: sink) }
    }

    private func subscribers(of domain: DomainName) -> [EventSink] {
        let specific = byDomain[domain]
        if everything.isEmpty { return specific.map { Array($0.values) } ?? [] }
        var result = Array(everything.values)
        if let specific {
            for (id, sink) in specific where everything[id] == nil { result.append(sink) }
        }
        return result
    }
}
