import DefaultsCore
@testable import DefaultsServer
import NIOCore
import NIOEmbedded
import TestThreads
import Testing

/// The notifier on an EmbeddedEventLoop with recording subscribers: one event per burst, and
/// subscriptions that change inside a batch.
@Suite(.ownThreads) struct NotifierTests {
    final class RecordingSink: EventSink {
        let sinkID: UInt64
        private(set) var events: [JSON] = []
        private(set) var notices: [String] = []

        init(_ id: UInt64) { sinkID = id }

        /// Whether the sink takes events now; while false, the notifier keeps them in its outbox.
        var canTakeEventNow = true

        func write(eventLine line: ByteBuffer) {
            let text = String(buffer: line)
            if text.contains("\"bundleDefaultsChanged\"") { notices.append(text) } else { events.append(try! JSONParser.parse(text)) }
        }
    }

    let a = try! DomainName("com.a")
    let b = try! DomainName("com.b")
    let writer = Origin(pid: 1, uid: 1, connection: 7)
    let other = Origin(pid: 2, uid: 1, connection: 8)

    @Test func aBatchsChangesToOneDomainByOneWriterAreOneEvent() {
        let loop = EmbeddedEventLoop()
        let notifier = Notifier(eventLoop: loop)
        let sink = RecordingSink(1)
        notifier.subscribe(sink, to: [a, b])
        notifier.holdDelivery()
        notifier.publish(Changeset(domain: a, changes: ["x": 1]), generation: 1, origin: writer)
        notifier.publish(Changeset(domain: a, changes: ["x": 2, "y": 1]), generation: 2, origin: writer)
        notifier.publish(Changeset(domain: b, changes: ["z": 1]), generation: 1, origin: writer)
        notifier.publish(Changeset(domain: a, changes: ["y": nil]), generation: 3, origin: writer)
        notifier.publish(Changeset(domain: a, changes: ["w": 1]), generation: 4, origin: other)
        #expect(sink.events.isEmpty, "held until the batch ends")
        notifier.releaseDelivery()
        #expect(sink.events.count == 3)
        #expect(sink.events[0]["domain"] == "com.a" && sink.events[0]["generation"] == 3)
        #expect(sink.events[0]["changes"] == .object(["x": 2, "y": .null]))
        #expect(sink.events[1]["domain"] == "com.b")
        #expect(sink.events[2]["changes"] == .object(["w": 1]) && sink.events[2]["origin"]?["connection"] == 8)
        #expect(notifier.eventsPublished == 3)
    }

    @Test func outsideABatchTheChangesOfOneLoopTurnAreOneEvent() {
        let loop = EmbeddedEventLoop()
        let notifier = Notifier(eventLoop: loop)
        let sink = RecordingSink(1)
        notifier.subscribeToEverything(sink)
        notifier.publish(Changeset(domain: a, changes: ["x": 1]), generation: 1, origin: writer)
        notifier.publish(Changeset(domain: a, changes: ["x": 2]), generation: 2, origin: writer)
        #expect(sink.events.isEmpty)
        loop.run()
        #expect(sink.events.count == 1 && sink.events[0]["changes"] == .object(["x": 2]))
    }

    @Test func subscriptionsAsTheyStandWhenTheBatchEndsGetItsEvents() {
        let loop = EmbeddedEventLoop()
        let notifier = Notifier(eventLoop: loop)
        let leaving = RecordingSink(1), joining = RecordingSink(2), staying = RecordingSink(3)
        notifier.subscribe(leaving, to: [a])
        notifier.subscribe(staying, to: [a])
        notifier.holdDelivery()
        notifier.publish(Changeset(domain: a, changes: ["x": 1]), generation: 1, origin: writer)
        notifier.unsubscribe(leaving, from: [a])
        notifier.subscribe(joining, to: [a])
        notifier.releaseDelivery()
        #expect(leaving.events.isEmpty)
        #expect(joining.events.count == 1 && staying.events.count == 1)
        // Nobody subscribed: no event is built at all.
        notifier.publish(Changeset(domain: b, changes: ["x": 1]), generation: 1, origin: writer)
        loop.run()
        #expect(notifier.eventsPublished == 1)
    }

    @Test func bundleNoticesGoToTheDomainsSubscribers() {
        let loop = EmbeddedEventLoop()
        let notifier = Notifier(eventLoop: loop)
        let sink = RecordingSink(1), elsewhere = RecordingSink(2)
        notifier.subscribe(sink, to: [a])
        notifier.subscribe(elsewhere, to: [b])
        notifier.publishBundleDefaultsChanged(a)
        #expect(sink.notices == [#"{"event":"bundleDefaultsChanged","domain":"com.a"}"# + "\n"])
        #expect(elsewhere.notices.isEmpty)
    }

    /// Rule 5: a subscriber that cannot take events keeps them in its outbox, merged per domain,
    /// notices first; they leave when it says it can take them, and only while it can.
    @Test func aSlowSubscribersEventsWaitMergedAndLeaveWhenItCanTakeThem() {
        let loop = EmbeddedEventLoop()
        let notifier = Notifier(eventLoop: loop)
        let slow = RecordingSink(1), quick = RecordingSink(2)
        notifier.subscribe(slow, to: [a, b])
        notifier.subscribe(quick, to: [a])
        slow.canTakeEventNow = false
        notifier.publish(Changeset(domain: a, changes: ["x": 1]), generation: 1, origin: writer)
        loop.run()
        notifier.publish(Changeset(domain: b, changes: ["y": 1]), generation: 1, origin: writer)
        loop.run()
        notifier.publish(Changeset(domain: a, changes: ["x": 2, "z": 1]), generation: 2, origin: writer)
        loop.run()
        notifier.publishBundleDefaultsChanged(a)
        #expect(quick.events.count == 2 && quick.notices.count == 1, "the quick subscriber is not held back")
        #expect(slow.events.isEmpty && slow.notices.isEmpty)
        notifier.sendWaiting(to: slow)
        #expect(slow.events.isEmpty, "it still cannot take them")
        slow.canTakeEventNow = true
        notifier.sendWaiting(to: slow)
        #expect(slow.notices == [#"{"event":"bundleDefaultsChanged","domain":"com.a"}"# + "\n"])
        #expect(slow.events.count == 2)
        #expect(slow.events[0]["domain"] == "com.a" && slow.events[0]["generation"] == 2)
        #expect(slow.events[0]["changes"] == .object(["x": 2, "z": 1]))
        #expect(slow.events[1]["domain"] == "com.b")
        // Nothing waits any more: the next event goes straight out.
        notifier.publish(Changeset(domain: b, changes: ["y": 2]), generation: 2, origin: writer)
        loop.run()
        #expect(slow.events.count == 3)
    }

    @Test func aClosedSubscribersWaitingEventsAreDropped() {
        let loop = EmbeddedEventLoop()
        let notifier = Notifier(eventLoop: loop)
        let sink = RecordingSink(1)
        notifier.subscribe(sink, to: [a])
        sink.canTakeEventNow = false
        notifier.publish(Changeset(domain: a, changes: ["x": 1]), generation: 1, origin: writer)
        loop.run()
        notifier.unsubscribeFromEverything(sink)
        sink.canTakeEventNow = true
        notifier.sendWaiting(to: sink)
        #expect(sink.events.isEmpty)
    }
}
