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

    /// What may happen to the version of a domain's file that a staged change would replace. A
    /// version `versions` does not know is an edit not read yet: the change waits for it
    /// (`.skip`), unless it is the version the daemon refused, or `keepingUnseenAside`; then it is
    /// kept as `<file>.rejected-<time>` first. Asked right before the rename, and again of what the
    /// rename displaced when that was not the version first judged.
    func admit(
        _ current: FileVersion?, of domain: DomainName, knowing versions: KnownFileVersions, keepingUnseenAside: Bool
    ) -> CommitGate {
        guard versions.isWatched(domain), let current, !versions.isKnown(current, of: domain) else { return .proceed }
        return versions.rejectedVersion(of: domain) == current || keepingUnseenAside ? .keepAside : .skip
    }

    /// What happens to the file a staged change would replace.
    enum CommitGate {
        case proceed
        /// Kept as `<file>.rejected-<time>`, then replaced.
        case keepAside
        /// Not replaced now; the change's temporary file is removed.
        case skip
    }

    /// Keeps the file at `path` as `<state directory>/<file><suffix><time>`, or beside it when
    /// the state directory is on another file system; answers where. A hard link keeps it: the
    /// file stays at its path until a write's rename replaces it, so the path is never missing,
    /// and a watcher never reads the domain as emptied. What cannot be linked (a directory) is
    /// moved instead, when `mayMove`.
    /// `namedFor` names it after another path of the same folder: a displaced file held under a
    /// temporary name is kept under its domain file's name.
    func keepCopy(of path: String, namedFor namePath: String? = nil, suffix: String, now: Date, mayMove: Bool = false)
        throws(DefaultsError) -> String
    {
        let name = String((namePath ?? path).split(separator: "/").last ?? "") + suffix + DomainFiles.stamp(now)
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

    /// What a commit did, per label.
    struct CommitReport<Label> {
        var failures: [(Label, DefaultsError)] = []
        /// Held back by the gate: their temporary files are removed, the files left as they are.
        var skipped: [Label] = []
        /// The versions kept as `<file>.rejected-<time>` before being replaced.
        var keptAside: [(Label, FileVersion)] = []
    }

    /// Puts staged changes in place, each reported under its label when it fails. `gate` judges
    /// the version each would replace: the file at its path right before the rename, and what the
    /// rename displaced, if an edit landed in between. The folders of those that succeeded are
    /// fsynced once each.
    func commit<Label>(
        _ changes: [StagedChange], reportingAs labels: [Label], gate: (Label, FileVersion?) -> CommitGate = { _, _ in .proceed }
    ) -> CommitReport<Label> {
        var report = CommitReport<Label>()
        var folders: [String: [Label]] = [:]
        for (change, label) in zip(changes, labels) {
            let placement: Placement
            switch change.action {
            case .none: continue
            case .replace(let temporary): placement = replace(change.path, with: temporary, writing: change.version) { gate(label, $0) }
            case .remove: placement = remove(change.path) { gate(label, $0) }
            }
            switch placement {
            case .placed(let keptAside):
                if let keptAside { report.keptAside.append((label, keptAside)) }
                folders[DomainFiles.folder(of: change.path), default: []].append(label)
            case .unchanged:
                continue
            case .skipped:
                report.skipped.append(label)
            case .failed(let error):
                report.failures.append((label, error))
            }
        }
        for (folder, labels) in folders.sorted(by: { $0.key < $1.key }) {
            do throws(DefaultsError) {
                try syncDirectory(folder)
            } catch {
                report.failures += labels.map { ($0, error) }
            }
        }
        return report
    }

    private enum Placement {
        case placed(keptAside: FileVersion?)
        /// Nothing to do: a file to remove that was already gone with its folder.
        case unchanged
        case skipped
        case failed(DefaultsError)
    }

    /// Renames `temporary` over `path`. The rename is an exchange, so the version it displaced is
    /// known for certain, not checked a moment before: an edit that landed after the check is
    /// put back (the change skipped) or kept aside, as `gate` says. Where the file system cannot
    /// exchange, a plain rename follows the check.
    private func replace(_ path: String, with temporary: String, writing written: FileVersion?, gate: (FileVersion?) -> CommitGate)
        -> Placement
    {
        // A file created at a free path in between is judged again; a path that keeps changing fails.
        for _ in 0..<3 {
            let expected = FileVersion(atPath: path)
            var keepingAside = false
            switch gate(expected) {
            case .proceed: break
            case .keepAside: keepingAside = true
            case .skip:
                unlink(temporary)
                return .skipped
            }
            switch AtomicRename.exchange(temporary, path) {
            case .done:
                return settle(displacedAt: temporary, of: path, expected: expected, keepingAside: keepingAside, writing: written, gate: gate)
            case .missing:
                switch AtomicRename.placeIfFree(temporary, at: path) {
                case .done: return .placed(keptAside: nil)
                case .taken: continue
                case .unsupported: break
                case .missing, .failed: return failedRename(temporary, path)
                }
            case .unsupported: break
            case .taken, .failed: return failedRename(temporary, path)
            }
            var keptAside: FileVersion?
            if keepingAside, let expected {
                do throws(DefaultsError) {
                    _ = try keepCopy(of: path, suffix: ".rejected-", now: Date(), mayMove: true)
                    keptAside = expected
                } catch {
                    unlink(temporary)
                    return .failed(error)
                }
            }
            guard rename(temporary, path) == 0 else { return failedRename(temporary, path) }
            return .placed(keptAside: keptAside)
        }
        unlink(temporary)
        return .failed(DefaultsError(.ioError, "\(path) kept changing while the daemon wrote it; the write is tried again at the next flush"))
    }

    private func failedRename(_ temporary: String, _ path: String) -> Placement {
        let error = ioError("cannot rename \(temporary) to \(path)")
        unlink(temporary)
        return .failed(error)
    }

    /// After a rename that displaced a file to `held`: removes it when it is the version judged,
    /// and otherwise asks `gate` about the edit that landed in between. An edit to wait for is put
    /// back by a second exchange; if yet another write landed in that instant, that one is kept
    /// aside, so that no edit is lost.
    private func settle(
        displacedAt held: String, of path: String, expected: FileVersion?, keepingAside: Bool, writing written: FileVersion?,
        gate: (FileVersion?) -> CommitGate
    ) -> Placement {
        let displaced = FileVersion(atPath: held)
        var keep = keepingAside
        if displaced != expected {
            switch gate(displaced) {
            case .proceed: keep = false
            case .keepAside: keep = true
            case .skip:
                guard AtomicRename.exchange(held, path) == .done else { return keepDisplaced(held, of: path, displaced) }
                if FileVersion(atPath: held) != written { _ = keepDisplaced(held, of: path, nil) }
                unlink(held)
                return .skipped
            }
        }
        return keep ? keepDisplaced(held, of: path, displaced) : { unlink(held); return .placed(keptAside: nil) }()
    }

    /// Keeps the displaced file held under a temporary name as `<file>.rejected-<time>`; the new
    /// file stays in place either way.
    private func keepDisplaced(_ held: String, of path: String, _ version: FileVersion?) -> Placement {
        do throws(DefaultsError) {
            _ = try keepCopy(of: held, namedFor: path, suffix: ".rejected-", now: Date(), mayMove: true)
            unlink(held)
            return .placed(keptAside: version)
        } catch {
            // Not kept elsewhere: the bytes stay under their temporary name, and the log says where.
            return .failed(DefaultsError(.ioError, "\(error.message); the file it replaced is still at \(held)"))
        }
    }

    /// Removes the file at `path`, first moved to a temporary name so that what is removed is
    /// known to be the version `gate` judged; an edit that landed in between is put back.
    private func remove(_ path: String, gate: (FileVersion?) -> CommitGate) -> Placement {
        let expected = FileVersion(atPath: path)
        var keep = false
        switch gate(expected) {
        case .proceed: break
        case .keepAside: keep = true
        case .skip: return .skipped
        }
        let held = temporaryPath(beside: path)
        guard rename(path, held) == 0 else {
            guard errno == ENOENT else {
                return .failed(DefaultsError(.ioError, "cannot remove \(path): \(String(cString: strerror(errno)))"))
            }
            // Its folder (ByHost) may be gone too: then there is nothing to make durable.
            return FileManager.default.fileExists(atPath: DomainFiles.folder(of: path)) ? .placed(keptAside: nil) : .unchanged
        }
        let displaced = FileVersion(atPath: held)
        if displaced != expected {
            switch gate(displaced) {
            case .proceed: keep = false
            case .keepAside: keep = true
            case .skip:
                // Put back with `link`, which never replaces a file someone created meanwhile.
                if link(held, path) != 0 { _ = keepDisplaced(held, of: path, nil) }
                unlink(held)
                return .skipped
            }
        }
        if keep { return keepDisplaced(held, of: path, displaced) }
        unlink(held)
        return .placed(keptAside: nil)
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
        let temporary = temporaryPath(beside: path)
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
        let version = failure == nil ? FileVersion(descriptor: fd, contents: data) : nil
        close(fd)
        if let failure {
            unlink(temporary)
            throw failure
        }
        return StagedChange(path: path, action: .replace(temporary: temporary), version: version)
    }

    /// A free name for a temporary file in `path`'s folder; the watcher and start-up's clean-up know its prefix.
    func temporaryPath(beside path: String) -> String {
        DomainFiles.folder(of: path) + "/" + DomainFiles.temporaryPrefix + String(UInt64.random(in: 0...UInt64.max), radix: 36)
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
