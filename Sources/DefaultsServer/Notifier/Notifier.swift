import DefaultsCore
import NIOCore
import OrderedCollections

/// Fans `didChange` events out to subscribers.
///
/// Owned by the store's event loop. Changes published during one read batch (or, outside
/// one, one event-loop turn) are gathered per (domain, writer) and sent as one event when it
/// ends, so a changeset, or a pipelined burst read in one go, becomes one event. Each event is
/// encoded once and the same bytes go to every subscriber.
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

    func unsubscribeFromEverything(_ sink: EventSink) {
        eventLoop.preconditionInEventLoop()
        everything[sink.sinkID] = nil
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
        if bursts[key] != nil {
            bursts[key]!.merge(event)
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
        for sink in everyone.values { sink.deliver(event, line: line) }
        for (id, sink) in specific ?? [:] where everyone[id] == nil { sink.deliver(event, line: line) }
        if line.capacity <= BufferSizes.largestKept { eventLine = line }
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
        for sink in sinks { sink.deliverNotice(line, domain: domain) }
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
