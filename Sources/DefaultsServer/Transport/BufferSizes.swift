/// The sizes the daemon's buffers are made and kept at, in one place.
///
/// A buffer is reused from request to request and from event to event; one that an unusually
/// large line or answer grew past ``largestKept`` is dropped instead, so a single large request
/// does not hold its memory for the rest of a connection's life.
enum BufferSizes {
    /// The most a reused buffer may hold on to (request table, answer writer, outbound buffer,
    /// event encoder and line).
    static let largestKept = 16 * 1024
    /// A new answer or event writer starts this large.
    static let initialWriter = 256
    /// A connection's outbound buffer starts this large.
    static let initialOutbound = 1024
    /// A connection stops being writable past `high` bytes queued and is writable again below
    /// `low`; a subscriber that stops reading then gets its events merged (`EventOutbox`).
    static let writeWaterMarks = (low: 32 * 1024, high: 256 * 1024)
    /// A connection's requests wait while this many answers are held behind one that is not
    /// ready yet (`synchronize`): each holds its result until then.
    static let mostHeldAnswers = 1024
}
