import NIOCore

extension EventLoopFuture {
    /// True when this future succeeds within `limit`, false when the limit comes first; a
    /// failure within the limit is passed on. What the future does after the limit is its own
    /// affair: this only stops a caller from waiting for it longer.
    ///
    /// ```swift
    /// let read = try await bundles.start(interval: .seconds(2)).completes(within: .seconds(5)).get()
    /// if !read { logger.warning("still reading; going on") }
    /// ```
    func completes(within limit: TimeAmount) -> EventLoopFuture<Bool> {
        let promise = eventLoop.makePromise(of: Bool.self)
        // Both sides run on this future's loop, so the flag needs no lock; the loop-bound box
        // makes that a checked fact.
        let answered = NIOLoopBoundBox(false, eventLoop: eventLoop)
        let timeout = eventLoop.scheduleTask(in: limit) {
            guard !answered.value else { return }
            answered.value = true
            promise.succeed(false)
        }
        hop(to: eventLoop).whenComplete { result in
            guard !answered.value else { return }
            answered.value = true
            timeout.cancel()
            promise.completeWith(result.map { _ in true })
        }
        return promise.futureResult
    }
}
