import DefaultsCore
import FoundationEssentials
import Glibc

/// One version of a file: the inode, what every write changes (size and modification time, to
/// the nanosecond), and a digest of its bytes. A file renamed over the path is another inode; a
/// file written in place keeps its inode but not its modification time, except for two writes of
/// the same size within one tick of the file system's clock (a few milliseconds): only their bytes
/// tell those apart.
struct FileVersion: Sendable, Hashable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    /// Seconds and nanoseconds apart: a file's time may be any 64-bit second (`touch -d 2300-01-01`),
    /// past what nanoseconds in one Int64 can hold.
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64
    /// A digest of the bytes, from this process's seeded `Hasher`: it is only ever compared with
    /// others this process made. Nil when the bytes could not be read (a file not permitted, past
    /// the size cap), which compares equal only with another such version of the same status.
    var contentDigest: Int?

    init(_ status: stat, contents: Data? = nil) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = Int64(status.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(status.st_mtim.tv_nsec)
        contentDigest = contents.map(FileVersion.digest(of:))
    }

    private static func digest(of contents: Data) -> Int {
        var hasher = Hasher()
        contents.withUnsafeBytes { hasher.combine(bytes: $0) }
        return hasher.finalize()
    }

    /// Seconds from the file's last change to `now`; negative for a time in the future.
    func age(at now: Date) -> Double {
        now.timeIntervalSince1970 - Double(modifiedSeconds) - Double(modifiedNanoseconds) / 1e9
    }

    /// The version at `path` now, through any link, as a read through the link sees it, its bytes
    /// read without blocking; nil when there is no file.
    init?(atPath path: String) {
        switch RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes) {
        case .success(let file):
            self.init(file.status, contents: file.data)
        case .failure(.missing):
            return nil
        case .failure:
            var status = stat()
            guard stat(path, &status) == 0 else { return nil }
            self.init(status)
        }
    }

    /// The version at `path` as its status alone says (no digest): enough to see that a file
    /// refused as a whole (not a regular file, too large) changed, at the cost of one `stat`.
    init?(statusAt path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }

    /// The version of an open file whose bytes are `contents`.
    init?(descriptor: Int32, contents: Data) {
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return nil }
        self.init(status, contents: contents)
    }
}

/// Which versions of each domain file the daemon already holds in memory: those it wrote, read
/// at load, or took in as a hand edit; what the newest of them held, the bases a hand edit is
/// merged against; and the version it refused, if any. With it the daemon tells its own writes
/// from a person's, never writes a domain over an edit it has not read, and takes in of an edit
/// only what the edit changed.
///
/// Owned by the state-owning event loop, in ``DomainTable``. The writer thread gets a copy in
/// each snapshot and answers what it wrote (``FlushOutcome``); the loop records that here. File
/// events for a domain whose flush is in flight wait for the flush (``WriteBehind/afterFlush(_:)``),
/// so the loop never reads the daemon's own write before it has recorded it.
struct KnownFileVersions: Sendable {
    /// A state of the domain's file that memory held: its version (nil for "no file") and,
    /// for the newest few, its values.
    private struct Known: Sendable {
        var version: FileVersion?
        var values: [String: PlistValue]?
    }

    /// The last few states per domain, newest last.
    private var recent: [DomainName: [Known]] = [:]
    /// Domains whose file the daemon itself removed last.
    private var removed: Set<DomainName> = []
    private var rejected: [DomainName: FileVersion] = [:]
    /// The folders whose edits are watched now: a write waits for an edit to be read only where
    /// edits are read, and losing one folder's watch leaves the other's check in force.
    var watchedFolders: WatchedFolders = []

    /// The storage directory and its `ByHost` folder.
    struct WatchedFolders: OptionSet, Sendable {
        let rawValue: UInt8
        static let main = WatchedFolders(rawValue: 1)
        static let byHost = WatchedFolders(rawValue: 2)
        static let both: WatchedFolders = [.main, .byHost]

        /// The folder that holds `domain`'s file.
        static func holding(_ domain: DomainName) -> WatchedFolders { domain.isCurrentHost ? .byHost : .main }
    }

    /// Whether edits to `domain`'s file are read while the daemon runs.
    func isWatched(_ domain: DomainName) -> Bool { watchedFolders.contains(.holding(domain)) }

    /// Enough to cover a write in flight while an edit is read.
    private static let kept = 4
    /// How many of them keep their values as bases: a writer's edit starts from the daemon's last
    /// write, or from the one before when it read the file just before that write landed. Each
    /// costs at most one domain's size, and only while memory has moved on from it.
    private static let keptBases = 2

    /// Memory holds what `version` of the domain's file holds: `values`, when known.
    mutating func remember(_ version: FileVersion?, of domain: DomainName, holding values: [String: PlistValue]? = nil) {
        var states = recent[domain] ?? []
        if let version { states.removeAll { $0.version == version } }
        states.append(Known(version: version, values: values))
        if states.count > Self.kept { states.removeFirst(states.count - Self.kept) }
        for index in states.indices.dropLast(Self.keptBases) { states[index].values = nil }
        recent[domain] = states
        if version != nil { removed.remove(domain) }
    }

    /// The daemon removed the domain's file (the domain became empty), or saw it removed.
    mutating func rememberRemoval(of domain: DomainName) {
        removed.insert(domain)
    }

    /// The domain's file was removed by someone and memory emptied: what it held before is no
    /// base any more, and a file put back, even the very same one, is news, taken in whole.
    mutating func forgetFile(of domain: DomainName) {
        recent[domain] = [Known(version: nil, values: [:])]
        removed.insert(domain)
    }

    func isKnown(_ version: FileVersion, of domain: DomainName) -> Bool {
        recent[domain]?.contains { $0.version == version } ?? false
    }

    /// Whether the daemon's own last act on the domain's file was removing it.
    func removalIsKnown(of domain: DomainName) -> Bool {
        removed.contains(domain)
    }

    /// The values of the newest states of the domain's file that memory held, newest first: the
    /// versions a writer's edit may have started from.
    func bases(of domain: DomainName) -> [[String: PlistValue]] {
        (recent[domain] ?? []).reversed().compactMap(\.values)
    }

    /// A version that could not be taken in: kept aside before the daemon next writes the domain.
    mutating func reject(_ version: FileVersion, of domain: DomainName) {
        rejected[domain] = version
    }

    /// The version of the domain's file that was refused, while it is the one to keep aside.
    func rejectedVersion(of domain: DomainName) -> FileVersion? { rejected[domain] }

    /// Forgets the refused version: it was kept aside, or replaced by one taken in.
    mutating func clearRejected(of domain: DomainName, ifItIs version: FileVersion? = nil) {
        guard version == nil || rejected[domain] == version else { return }
        rejected[domain] = nil
    }

    /// Records what a flush did to the files: the versions it wrote, with the values of the
    /// snapshot it wrote them from; the files it removed; the refused versions it kept aside.
    mutating func record(_ outcome: FlushOutcome, of snapshot: WriteBehind.Snapshot) {
        guard !outcome.written.isEmpty || !outcome.keptAside.isEmpty else { return }
        var written: [DomainName: [String: PlistValue]] = [:]
        for (domain, values) in snapshot.domains where outcome.written[domain] != nil { written[domain] = values }
        for (domain, file) in outcome.written {
            switch file {
            case .version(let version): remember(version, of: domain, holding: written[domain])
            case .removed:
                rememberRemoval(of: domain)
                remember(nil, of: domain, holding: [:])
            }
        }
        for (domain, version) in outcome.keptAside { clearRejected(of: domain, ifItIs: version) }
    }
}
