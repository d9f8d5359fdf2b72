import DefaultsCore
import FoundationEssentials
import Glibc
import NIOCore

/// The storage directory: one property-list file per domain, and in its `ByHost` folder one per
/// by-host domain of this machine (`<domain>.<host id>.plist`).
///
/// An immutable value (folders, format, host id), so the writer thread and the event loop each
/// hold a copy and share nothing: what the daemon knows of the files is the loop's
/// (``KnownFileVersions``). Writes use POSIX calls directly because Foundation's atomic `Data.write` neither
/// fsyncs the file nor the directory, and a write must be durable when `synchronize` answers.
struct DomainFiles: Sendable {
    let directory: String
    let format: PropertyListFile.Format
    /// The id in the names of this machine's by-host files (``DomainFiles/hostID(sharesFoundationFolder:machineID:)``);
    /// nil when there is none, and then by-host domains read as empty and are never written.
    let hostID: String?
    /// Where the daemon keeps its own files: the generation ledger, the roaming journal and the
    /// copies of rejected hand edits. Apart from `directory` when that is the folder Foundation
    /// shares (`$XDG_STATE_HOME/defaultsd`), so that folder holds domain files only.
    let stateDirectory: String

    init(
        directory: String, stateDirectory: String? = nil, format: PropertyListFile.Format, hostID: String? = nil
    ) {
        self.directory = directory
        self.stateDirectory = stateDirectory ?? directory
        self.format = format
        self.hostID = hostID
    }

    /// The id that names this machine's by-host files. In the folder shared with Foundation it is
    /// Foundation's own, empty (`ByHost/<domain>..plist`, which `UserDefaults` searches before the
    /// domain), so that a program and the daemon share by-host values too; in a folder of the
    /// daemon's own it is the machine id, as macOS names them, so that machines sharing that
    /// folder keep theirs apart.
    static func hostID(sharesFoundationFolder: Bool, machineID: String?) -> String? {
        sharesFoundationFolder ? foundationHostID : machineID
    }

    /// The host id Foundation on Linux puts in by-host file names: none.
    static let foundationHostID = ""

    /// The folder of this machine's by-host files.
    var byHostDirectory: String { directory + "/" + DomainName.byHostFolder }

    /// The prefix of the daemon's temporary files; one left by a crash is removed at start.
    /// Named for the daemon: the folder is shared with other programs, whose own temporary files
    /// are not the daemon's to remove.
    static let temporaryPrefix = ".defaultsd-tmp-"

    /// The domain's file; nil for a by-host domain on a machine without an id.
    func path(of domain: DomainName) -> String? {
        guard domain.isCurrentHost else { return directory + "/" + domain.fileName }
        guard domain.hasByHostVariant else { return nil }
        return hostID.map { byHostDirectory + "/" + domain.byHostFileName(hostID: $0) }
    }

    /// The domain a file of the storage directory, or of its `ByHost` folder, holds.
    func domain(ofFile name: String, inByHostFolder: Bool) -> DomainName? {
        guard inByHostFolder else { return DomainName.fromFileName(name) }
        return hostID.flatMap { DomainName.fromByHostFileName(name, hostID: $0) }
    }

    /// Creates the directory (mode 0700), and its `ByHost` folder when the machine has an id, if
    /// they are missing, and checks that the directories are usable and nobody else can change
    /// them.
    func prepare() throws(DefaultsError) {
        if FileManager.default.fileExists(atPath: directory) {
            guard SystemText.isDirectory(directory) else {
                throw DefaultsError(.ioError, "storage path \(directory) exists and is not a directory")
            }
        } else {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DefaultsError(.ioError, "cannot create storage directory \(directory): \(SystemText.reason(error))")
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw DefaultsError(.ioError, "storage directory \(directory) is not writable: \(String(cString: strerror(errno)))")
        }
        if stateDirectory != directory, !SystemText.isDirectory(stateDirectory) {
            do {
                try FileManager.default.createDirectory(
                    atPath: stateDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DefaultsError(.ioError, "cannot create state directory \(stateDirectory): \(SystemText.reason(error))")
            }
        }
        if hostID != nil { try prepareByHostDirectory() }
        try checkTrust()
    }

    /// Refuses folders someone else could change. The daemon writes through the links it finds
    /// there, so another user who could put a link in the storage directory, or swap the
    /// directory itself, could make the daemon overwrite any file of the user's, or read the
    /// user's preferences. ``PathTrust/yoursOrRoot(uid:)`` is the rule.
    func checkTrust(uid: UInt32 = getuid()) throws(DefaultsError) {
        let folders = [directory, stateDirectory] + (hostID != nil ? [byHostDirectory] : [])
        for folder in Set(folders).sorted() {
            guard let problem = PathTrust.yoursOrRoot(uid: uid).problem(with: folder) else { continue }
            throw DefaultsError(
                .notPermitted,
                "\(folder) is not safe to keep preferences in: \(problem), so another user could replace them"
                    + (problem.isWritableByOthers ? "; make it writable by you alone (chmod go-w \(problem.component))" : ""))
        }
    }

    /// Creates the `ByHost` folder (mode 0700) when it is missing, durably.
    func prepareByHostDirectory() throws(DefaultsError) {
        if mkdir(byHostDirectory, 0o700) == 0 {
            try syncDirectory(directory)
        } else if errno != EEXIST {
            throw ioError("cannot create \(byHostDirectory)")
        }
    }

    /// Removes the temporary files a crash left behind; answers their names.
    @discardableResult
    func removeTemporaryFiles() -> [String] {
        Set([directory, byHostDirectory, stateDirectory]).sorted().flatMap { folder in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.filter { $0.hasPrefix(DomainFiles.temporaryPrefix) && unlink(folder + "/" + $0) == 0 }
        }
    }

    /// A state file of the daemon's as `load(atPath:)` found it.
    enum LoadResult: Sendable {
        case missing
        case loaded([String: PlistValue])
        /// The file could not be parsed and was moved to `movedTo`.
        case corrupt(reason: String, movedTo: String)
    }

    /// A domain's file as `load(_:)` found it.
    enum DomainLoad: Sendable {
        case missing
        case loaded([String: PlistValue], FileVersion)
        /// The file could not be taken in and has not changed for ``DomainFiles/settleTime``:
        /// torn. It stays where it is (its bytes are kept by ``keepTorn(_:of:now:)``), and the
        /// domain starts empty; the domain's next write replaces it.
        case torn(reason: String, version: FileVersion)
        /// The file could not be taken in and changed within ``DomainFiles/settleTime``: perhaps
        /// a write under way. The error says to try again.
        case settling(DefaultsError)
    }

    /// How long a file that cannot be taken in must stay unchanged before it is judged torn: far
    /// longer than any writer takes between its write and its close, and short enough that a
    /// program starting after a crash finds the last good state.
    static let settleTime = TimeAmount.seconds(1)

    /// Reads a domain's file; never moves it. A file that cannot be taken in (empty, cut short, not
    /// a property list) and changed within ``settleTime`` may be a write under way (`.settling`,
    /// with `io_error`), and the file is read again at the next request. One that has not changed
    /// for that long is torn (``DomainLoad/torn(reason:version:)``). A file that cannot be
    /// read at all (a FIFO, a directory, past the size cap, not permitted) fails with `io_error`
    /// and is left as it is.
    func load(_ domain: DomainName, now: Date = Date()) throws(DefaultsError) -> DomainLoad {
        guard let path = path(of: domain) else { return .missing }
        let version: FileVersion
        let reason: String
        switch DomainFiles.read(atPath: path) {
        case .missing: return .missing
        case .parsed(let values, let read): return .loaded(values, read)
        case .unreadable(let error): throw error
        case .beingWritten(let read): (version, reason) = (read, "the file is empty")
        case .unparseable(let problem, let read): (version, reason) = (read, problem)
        }
        // A time in the future (a wrong clock, `touch -d`) says nothing of a write under way.
        let age = version.age(at: now)
        guard age < 0 || age >= Double(DomainFiles.settleTime.nanoseconds) / 1e9 else {
            return .settling(DefaultsError(
                .ioError, "\(domain)'s file cannot be read as it stands (\(reason)); it changed \(Int(max(age, 0) * 1000)) ms ago, perhaps a write under way: try again"))
        }
        return .torn(reason: reason, version: version)
    }

    /// Keeps the bytes of a domain file judged torn at load as `<file>.corrupt-<time>`, through
    /// any link to its target (the link itself is never moved); nil when it holds no bytes.
    func keepTorn(_ version: FileVersion, of domain: DomainName, now: Date = Date()) throws(DefaultsError) -> String? {
        guard version.size > 0, let path = path(of: domain) else { return nil }
        return try keepCopy(of: DomainFiles.linkTarget(of: path) ?? path, suffix: ".corrupt-", now: now)
    }

    /// A domain's file as it is now.
    enum FileContents: Sendable {
        case missing
        case parsed([String: PlistValue], FileVersion)
        case unparseable(reason: String, FileVersion)
        case unreadable(DefaultsError)
        /// No bytes: a file being written in place. Foundation's `UserDefaults` truncates a
        /// domain's file, then writes it, so an empty file is a write in progress (or one a
        /// crash cut short), never a domain emptied: that is a missing file. It is read again
        /// at the write's end (`IN_CLOSE_WRITE`).
        case beingWritten(FileVersion)
    }

    /// Reads a domain's file and the version read, from one open descriptor, so the two match.
    func read(_ domain: DomainName) -> FileContents { path(of: domain).map(DomainFiles.read(atPath:)) ?? .missing }

    /// Reads a property-list file and the version read, from one open descriptor, so the two
    /// match. A link is read through; anything but a regular file of at most
    /// ``PropertyListLimits/maximumFileBytes`` is unreadable, found so without blocking.
    static func read(atPath path: String) -> FileContents {
        switch RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes) {
        case .failure(.missing):
            return .missing
        case .failure(let failure):
            return .unreadable(DefaultsError(.ioError, "\(path) \(failure)"))
        case .success(let file):
            let version = FileVersion(file.status, contents: file.data)
            if file.data.isEmpty { return .beingWritten(version) }
            do {
                return .parsed(try PropertyListFile.decode(file.data), version)
            } catch {
                return .unparseable(reason: error.message, version)
            }
        }
    }

    /// Reads a property-list file of the daemon's (a domain, or the bundle registry). An
    /// unparseable file is moved aside to `<path>.corrupt-<time>`, never overwritten; when it
    /// cannot be moved, the error says so and nothing is read.
    static func load(atPath path: String, now: Date = Date()) throws(DefaultsError) -> LoadResult {
        let data: Data
        switch RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes) {
        case .failure(.missing): return .missing
        case .failure(let failure): throw DefaultsError(.ioError, "\(path) \(failure)")
        case .success(let file): data = file.data
        }
        do {
            return .loaded(try PropertyListFile.decode(data))
        } catch {
            let aside = path + ".corrupt-" + stamp(now)
            guard rename(path, aside) == 0 else {
                throw DefaultsError(.ioError, "cannot move corrupt \(path) aside: \(String(cString: strerror(errno)))")
            }
            return .corrupt(reason: error.message, movedTo: aside)
        }
    }

    /// The domains that have a file: every any-host domain, and this machine's by-host domains.
    func storedDomains() -> [DomainName] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let byHost = (try? FileManager.default.contentsOfDirectory(atPath: byHostDirectory)) ?? []
        return names.compactMap(DomainName.fromFileName) + byHost.compactMap { domain(ofFile: $0, inByHostFolder: true) }
    }

    /// A time as it appears in the names of files kept aside: UTC, without colons.
    static func stamp(_ date: Date) -> String {
        String(RFC3339.format(date).filter { $0 != ":" })
    }

}
