import DefaultsCore
import FoundationEssentials
import Glibc
import NIOConcurrencyHelpers

/// One version of a file: the inode and what every write changes (size and modification time,
/// to the nanosecond). A file renamed over the path is another inode; a file written in place
/// keeps its inode but not its modification time.
struct FileVersion: Sendable, Hashable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modified: Int64

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modified = Int64(status.st_mtim.tv_sec) * 1_000_000_000 + Int64(status.st_mtim.tv_nsec)
    }

    /// The version at `path` now, through any link, as a read through the link sees it; nil
    /// when there is no file.
    init?(atPath path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// The version of an open file.
    init?(descriptor: Int32) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status)
    }
}

/// Which versions of each domain file the daemon already holds in memory: those it wrote, read
/// at load, or took in as a hand edit; and the version it refused, if any.
///
/// Shared by the writer thread, which records each file it writes before renaming it into
/// place, and the event loop, which reads files and decides whether a change on disk is news;
/// hence the lock. With it the daemon tells its own writes from a person's, and never writes a
/// domain over an edit it has not read yet.
final class KnownFileVersions: Sendable {
    private struct State {
        /// The last few versions per domain, newest last.
        var recent: [DomainName: [FileVersion]] = [:]
        /// Domains whose file the daemon itself removed last.
        var removed: Set<DomainName> = []
        var rejected: [DomainName: FileVersion] = [:]
        var isWatched = false
    }

    private let state = NIOLockedValueBox(State())
    /// Enough to cover a write in flight while an edit is read.
    private static let kept = 4

    /// True while hand edits are watched: only then does the writer wait for one to be read.
    var isWatched: Bool {
        get { state.withLockedValue { $0.isWatched } }
        set { state.withLockedValue { $0.isWatched = newValue } }
    }

    /// Memory holds what `version` of the domain's file holds.
    func remember(_ version: FileVersion, of domain: DomainName) {
        state.withLockedValue { state in
            var versions = state.recent[domain] ?? []
            versions.removeAll { $0 == version }
            versions.append(version)
            if versions.count > Self.kept { versions.removeFirst(versions.count - Self.kept) }
            state.recent[domain] = versions
            state.removed.remove(domain)
        }
    }

    /// The daemon removed the domain's file (the domain became empty).
    func rememberRemoval(of domain: DomainName) {
        state.withLockedValue { _ = $0.removed.insert(domain) }
    }

    func isKnown(_ version: FileVersion, of domain: DomainName) -> Bool {
        state.withLockedValue { $0.recent[domain]?.contains(version) ?? false }
    }

    /// Whether the daemon's own last act on the domain's file was removing it.
    func removalIsKnown(of domain: DomainName) -> Bool {
        state.withLockedValue { $0.removed.contains(domain) }
    }

    /// A version that could not be taken in: kept aside before the daemon next writes the domain.
    func reject(_ version: FileVersion, of domain: DomainName) {
        state.withLockedValue { $0.rejected[domain] = version }
    }

    /// Takes the rejected version of the domain, when it is `version`.
    func takeRejected(_ version: FileVersion, of domain: DomainName) -> Bool {
        state.withLockedValue { state in
            guard state.rejected[domain] == version else { return false }
            state.rejected[domain] = nil
            return true
        }
    }

    func clearRejected(of domain: DomainName) {
        state.withLockedValue { _ = $0.rejected.removeValue(forKey: domain) }
    }
}
