import DefaultsCore
import FoundationEssentials
import Glibc

/// How a domain's file is written: staged in a temporary file of its own folder and fsynced,
/// then renamed into place with one fsync of each folder touched; a link is written through.
extension DomainFiles {
    /// A change to one file, written and fsynced but not yet in place: `commit` renames it
    /// (or removes the file) and makes that durable.
    struct StagedChange {
        enum Action {
            /// The new contents, in a temporary file of the same folder.
            case replace(temporary: String)
            case remove
            /// Nothing on disk changes (an empty domain without a file, on a machine without an id).
            case none
        }
        let path: String
        let action: Action
        /// The version the file has once renamed into place: the temporary file's own.
        var version: FileVersion?

        /// Removes the temporary file of a change that will not be committed.
        func discard() {
            if case .replace(let temporary) = action { unlink(temporary) }
        }
    }

    /// Prepares a domain's write: its new file's contents written to a temporary file and
    /// fsynced, or its removal when the domain is empty. Whether the file may be replaced is
    /// decided only at the rename (``admit(_:of:knowing:keepingUnseenAside:now:)``).
    func stage(_ domain: DomainName, values: [String: PlistValue]) throws(DefaultsError) -> StagedChange {
        guard let link = path(of: domain) else {
            // The store refuses by-host writes on a machine without an id; an empty domain has no file.
            if values.isEmpty { return StagedChange(path: "", action: .none) }
            throw MachineID.refusal(writing: domain)
        }
        // A domain file that is a symbolic link (stow, home-manager) is written through: its
        // target is replaced in the target's own folder, and the link stays a link.
        let target = DomainFiles.linkTarget(of: link)
        let path = target ?? link
        // What a link leads to is replaced only when it is a regular file: a link to a device, a
        // FIFO or a folder is someone's on purpose, and the daemon's file never takes its place.
        var status = stat()
        if let target, stat(target, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            throw DefaultsError(
                .ioError, "\(link) leads to \(RegularFile.kind(of: status.st_mode)), \(target); the domain is not written through it")
        }
        // An empty domain has no file, unless its file is a link: the link's target then holds
        // an empty dictionary, so that the link stays whole.
        if values.isEmpty && target == nil { return StagedChange(path: path, action: .remove) }
        let data = try PropertyListFile.encode(values, format: format)
        // A file the daemon's own reader would refuse is never written: it could not be read back.
        guard data.count <= PropertyListLimits.maximumFileBytes else {
            throw DefaultsError(
                .tooLarge, "\(domain)'s file would be \(data.count) bytes, more than the \(PropertyListLimits.maximumFileBytes) a property-list file may be read at")
        }
        return try stage(data, at: path)
    }

    /// Whether a domain's staged change may replace the file at its path, decided right before
    /// the rename, so that an edit landing while the file was staged and fsynced is seen. A
    /// version on disk that `versions` does not know is an edit not read yet: the change waits
    /// for it (`.skip`), unless it is the version the daemon refused, or `keepingUnseenAside`; then
    /// it is first kept as `<file>.rejected-<time>`, and `keptAside` says which version.
    func admit(
        _ change: StagedChange, of domain: DomainName, knowing versions: KnownFileVersions, keepingUnseenAside: Bool,
        keptAside: inout FileVersion?, now: Date = Date()
    ) -> CommitGate {
        guard versions.isWatched, change.path != "", let current = FileVersion(atPath: change.path),
            !versions.isKnown(current, of: domain)
        else { return .proceed }
        guard versions.rejectedVersion(of: domain) == current || keepingUnseenAside else { return .skip }
        do throws(DefaultsError) {
            try keepRejected(change.path, now: now)
        } catch {
            return .fail(error)
        }
        keptAside = current
        return .proceed
    }

    /// What happens to one staged change at its commit.
    enum CommitGate {
        case proceed
        /// Not put in place now; its temporary file is removed.
        case skip
        case fail(DefaultsError)
    }

    /// Keeps a hand edit the daemon refused as `<state directory>/<file>.rejected-<time>` (beside
    /// the file when the state directory is on another file system), before the domain's write
    /// replaces it.
    private func keepRejected(_ path: String, now: Date) throws(DefaultsError) {
        _ = try keepCopy(of: path, suffix: ".rejected-", now: now, mayMove: true)
    }

    /// Keeps the file at `path` as `<state directory>/<file><suffix><time>`, or beside it when
    /// the state directory is on another file system; answers where. A hard link keeps it: the
    /// file stays at its path until a write's rename replaces it, so the path is never missing,
    /// and a watcher never reads the domain as emptied. What cannot be linked (a directory) is
    /// moved instead, when `mayMove`.
    func keepCopy(of path: String, suffix: String, now: Date, mayMove: Bool = false) throws(DefaultsError) -> String {
        let name = String(path.split(separator: "/").last ?? "") + suffix + DomainFiles.stamp(now)
        let beside = SystemText.parentDirectory(of: path) + "/" + name
        let places = (stateDirectory != directory ? [stateDirectory + "/" + name] : []) + [beside]
        for place in places where link(path, place) == 0 { return place }
        if mayMove {
            for place in places where rename(path, place) == 0 { return place }
        }
        throw ioError("cannot keep \(path) as \(beside)")
    }

    /// The file a symbolic link at `path` leads to, all links resolved; nil when `path` is not a
    /// link, or a link that leads nowhere (which is then replaced by the domain's own file).
    static func linkTarget(of path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(path, nil) else {
            return nil
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Puts staged changes in place: renames and removals, then one fsync of each folder they
    /// touched. Throws the first failure; use `commit(_:reportingAs:gate:)` to go on past one.
    func commit(_ changes: [StagedChange]) throws(DefaultsError) {
        if let failure = commit(changes, reportingAs: Array(changes.indices)).failures.first { throw failure.1 }
    }

    /// Puts staged changes in place, each reported under its label when it fails; `gate`, asked
    /// right before each rename, may hold one back. The folders of those that succeeded are
    /// fsynced once each.
    func commit<Label>(
        _ changes: [StagedChange], reportingAs labels: [Label], gate: (Label, StagedChange) -> CommitGate = { _, _ in .proceed }
    ) -> (failures: [(Label, DefaultsError)], skipped: [Label]) {
        var failures: [(Label, DefaultsError)] = []
        var skipped: [Label] = []
        var folders: [String: [Label]] = [:]
        for (change, label) in zip(changes, labels) {
            let folder = DomainFiles.folder(of: change.path)
            if case .none = change.action { continue }
            switch gate(label, change) {
            case .proceed: break
            case .skip:
                change.discard()
                skipped.append(label)
                continue
            case .fail(let error):
                change.discard()
                failures.append((label, error))
                continue
            }
            switch change.action {
            case .none:
                continue
            case .replace(let temporary):
                guard rename(temporary, change.path) == 0 else {
                    failures.append((label, ioError("cannot rename \(temporary) to \(change.path)")))
                    unlink(temporary)
                    continue
                }
            case .remove:
                if unlink(change.path) != 0 {
                    guard errno == ENOENT else {
                        failures.append((label, DefaultsError(.ioError, "cannot remove \(change.path): \(String(cString: strerror(errno)))")))
                        continue
                    }
                    // Its folder (ByHost) may be gone too: then there is nothing to make durable.
                    guard FileManager.default.fileExists(atPath: folder) else { continue }
                }
            }
            folders[folder, default: []].append(label)
        }
        for (folder, labels) in folders.sorted(by: { $0.key < $1.key }) {
            do throws(DefaultsError) {
                try syncDirectory(folder)
            } catch {
                failures += labels.map { ($0, error) }
            }
        }
        return (failures, skipped)
    }

    /// Writes `data` to `path` durably: a temporary file in the same folder, fsync, rename,
    /// fsync of the folder.
    func writeAtomically(_ data: Data, to path: String) throws(DefaultsError) {
        try commit([try stage(data, at: path)])
    }

    /// Writes `data` to a temporary file beside `path` and fsyncs it; the change carries the
    /// version written, which the loop records so that the daemon's own write is never news to it.
    func stage(_ data: Data, at path: String) throws(DefaultsError) -> StagedChange {
        // In the file's own folder: a rename within one folder is atomic, and one fsync of it
        // makes the rename durable.
        let folder = DomainFiles.folder(of: path)
        let temporary = folder + "/" + DomainFiles.temporaryPrefix + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        var fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if fd < 0, errno == ENOENT, folder == byHostDirectory {
            // The ByHost folder was removed while the daemon ran.
            try prepareByHostDirectory()
            fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        }
        guard fd >= 0 else { throw ioError("cannot create \(temporary)") }
        var failure: DefaultsError?
        if !FileDescriptorIO.write(data, to: fd) { failure = ioError("cannot write \(temporary)") }
        if failure == nil, fsync(fd) != 0 { failure = ioError("cannot fsync \(temporary)") }
        let version = failure == nil ? FileVersion(descriptor: fd) : nil
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        return StagedChange(path: path, action: .replace(temporary: temporary), version: version)
    }

    static func folder(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    }

    func syncDirectory(_ folder: String) throws(DefaultsError) {
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("cannot open \(folder)") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw ioError("cannot fsync \(folder)") }
    }

    func ioError(_ what: String) -> DefaultsError { DomainFiles.ioError(what) }

    static func ioError(_ what: String) -> DefaultsError {
        DefaultsError(.ioError, "\(what): \(String(cString: strerror(errno)))")
    }
}
