import DefaultsCore
import DequeModule
import NIOCore

/// The answers of one connection, in request order. An answer that must wait (`synchronize`,
/// `registerBundle`) holds the answers behind it until it completes; the others are encoded at
/// once into one writer, which leaves as one buffer when the handler asks for it.
///
/// Owned by one `ConnectionHandler`, on the state-owning loop.
struct ReplyQueue: ~Copyable {
    /// An answer that waited: its result arrives later, through this reference.
    final class Waiting {
        let id: JSON?
        var result: Result<Reply, DefaultsError>?

        init(id: JSON?, result: Result<Reply, DefaultsError>? = nil) {
            self.id = id
            self.result = result
        }
    }

    private var queued: Deque<Waiting> = []
    /// Answers encoded but not yet handed to the channel.
    private var encoded = JSONWriter(capacity: BufferSizes.initialWriter)
    /// The buffer answers leave in. By the next batch the channel has usually written and
    /// released it, so clearing it reuses its storage instead of allocating.
    private var outbound: ByteBuffer?

    /// True while an answer waits (and so every later one behind it).
    var isHoldingAnswers: Bool { !queued.isEmpty }

    /// The answers that wait, and those held behind them.
    var heldCount: Int { queued.count }

    /// The bytes of the answers encoded and not yet taken.
    var encodedBytes: Int { encoded.count }

    /// Queues an answer that is ready now: encoded at once, unless an earlier answer waits.
    mutating func answer(id: JSON?, _ result: Result<Reply, DefaultsError>) {
        if queued.isEmpty {
            ResponseEncoding.encode(id: id, result, into: &encoded)
        } else {
            queued.append(Waiting(id: id, result: result))
        }
    }

    /// Queues an answer that will be ready later; set its `result`, then call ``encodeCompleted()``.
    mutating func wait(id: JSON?) -> Waiting {
        let waiting = Waiting(id: id)
        queued.append(waiting)
        return waiting
    }

    /// Encodes the answers at the head of the queue that are complete.
    mutating func encodeCompleted() {
        while let head = queued.first, let result = head.result {
            queued.removeFirst()
            ResponseEncoding.encode(id: head.id, result, into: &encoded)
        }
    }

    /// The answers encoded so far as one buffer, or nil when there are none.
    mutating func takeEncoded(allocator: ByteBufferAllocator) -> ByteBuffer? {
        guard !encoded.isEmpty else { return nil }
        var buffer = outbound ?? allocator.buffer(capacity: BufferSizes.initialOutbound)
        outbound = nil  // the only reference again, so clearing and writing reuse the storage
        buffer.clear()
        encoded.withBytes { buffer.writeBytes($0) }
        outbound = buffer.capacity > BufferSizes.largestKept ? nil : buffer
        // Keep the writer's storage for the next batch, unless one huge answer grew it.
        if encoded.capacity > BufferSizes.largestKept {
            encoded = JSONWriter(capacity: BufferSizes.initialWriter)
        } else {
            encoded.removeAll()
        }
        return buffer
    }
}
