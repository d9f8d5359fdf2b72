import Dispatch
import Synchronization

extension Array where Element: Sendable {
    /// `transform` of every element, in order, computed side by side on the machine's cores.
    /// Dispatch has the parallel loop but no map; this is the map, so no caller keeps a lock of its own.
    ///
    /// ```swift
    /// let sizes = paths.concurrentMap { path in fileSize(path) }
    /// ```
    public func concurrentMap<T: Sendable>(_ transform: @Sendable (Element) -> T) -> [T] {
        guard count > 1 else { return map(transform) }
        let slots = Mutex([T?](repeating: nil, count: count))
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let result = transform(self[index])
            slots.withLock { $0[index] = result }
        }
        let results = slots.withLock { $0.compactMap { $0 } }
        precondition(results.count == count, "concurrentPerform returns only after every iteration has run")
        return results
    }
}
