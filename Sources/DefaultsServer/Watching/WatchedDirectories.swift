import DefaultsCore
import FoundationEssentials
import Glibc
import NIOCore

/// A set of directories, each watched with its own mask, kept equal to the set its owner wants
/// as directories come and go. Owned by the store's event loop, like the `DirectoryWatcher`.
///
/// ```swift
/// let watched = WatchedDirectories(watcher: watcher)
/// watched.update(["/etc/defaultsd/managed": DirectoryWatcher.fileChanges]) { event, mask in rescanSoon() }
/// ```
final class WatchedDirectories {
    private let watcher: DirectoryWatcher
    private var watches: [String: (watch: Int32, mask: UInt32)] = [:]

    init(watcher: DirectoryWatcher) { self.watcher = watcher }

    /// Watches exactly `wanted` (directory → mask); `handler` receives each event of a new watch
    /// with that watch's mask. Answers the first watch that could not be added to a directory
    /// that exists; one that vanished since it was listed is no failure (its removal is an
    /// event of its parent's watch).
    @discardableResult
    func update(_ wanted: [String: UInt32], _ handler: @escaping (InotifyEvent, UInt32) -> Void) -> DirectoryWatcher.WatchError? {
        for (path, entry) in watches where wanted[path] != entry.mask {
            watcher.unwatch(entry.watch)
            watches[path] = nil
        }
        for (path, mask) in wanted.sorted(by: { $0.key < $1.key }) where watches[path] == nil {
            do {
                let watch = try watcher.watch(path, mask: mask) { [self] event in
                    if event.endsWatch { watches = watches.filter { $0.value.watch != event.watch } }
                    handler(event, mask)
                }
                watches[path] = (watch, mask)
            } catch {
                if FileManager.default.fileExists(atPath: path) || !watcher.isAvailable { return error }
            }
        }
        return nil
    }

    func removeAll() { update([:]) { _, _ in } }

    /// The nearest directory at or above `path` that exists (`/` at the most); where a watch
    /// sees a missing directory being created.
    static func nearestExisting(_ path: String) -> String {
        var candidate = path
        while candidate.count > 1, access(candidate, F_OK) != 0 {
            candidate = SystemText.parentDirectory(of: candidate)
        }
        return candidate.isEmpty ? "/" : candidate
    }
}

/// Runs its owner's work once, `delay` after the first of a burst of events. Owned by `eventLoop`.
final class SettleTimer {
    let eventLoop: EventLoop
    let delay: TimeAmount
    private var scheduled: Scheduled<Void>?

    init(eventLoop: EventLoop, delay: TimeAmount) {
        self.eventLoop = eventLoop
        self.delay = delay
    }

    /// Schedules `work` unless it is already scheduled; `work` runs on the loop.
    func schedule(_ work: @escaping () -> Void) {
        guard scheduled == nil else { return }
        scheduled = eventLoop.assumeIsolated().scheduleTask(in: delay) { [self] in
            scheduled = nil
            work()
        }
    }

    func cancel() {
        scheduled?.cancel()
        scheduled = nil
    }
}
