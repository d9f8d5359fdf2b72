import DefaultsCore
import FoundationEssentials
import Glibc

/// A property-list file that `defaults` reads and writes itself, without the daemon, as macOS's
/// `defaults` does with a path: read whole (XML, binary or old-style text, told apart by their
/// content, within ``PropertyListLimits`` as every reader here), and written back whole and
/// atomically in the format it had. A file that is not a property list holding a dictionary is
/// refused and never written.
///
/// ```swift
/// let file = try PlistFile.read(try PlistPath("/tmp/settings", home: home))
/// var values = file.values
/// values["volume"] = 7
/// _ = try file.write(values)   // /tmp/settings.plist, in its own format
/// ```
struct PlistFile {
    let location: PlistPath
    /// The file's values; empty for a file that does not exist (or holds no bytes).
    let values: [String: PlistValue]
    /// Whether a file is there.
    let exists: Bool
    /// The format a write keeps: the file's own when it is XML or binary. Old-style text is
    /// written back as XML: it has no integers, reals, booleans or dates, which a write may
    /// bring, and no writer here produces it. A new or empty file is binary, as macOS writes.
    let format: PropertyListFile.Format
    /// The version read, by which a write finds out that another writer came in between.
    let version: FileIdentity?

    /// Reads the file; a missing one reads as empty. Throws, naming the file, when it cannot be
    /// read or is not a property list holding a dictionary.
    static func read(_ location: PlistPath) throws(ToolError) -> PlistFile {
        let contents: RegularFile.Contents
        switch RegularFile.read(atPath: location.path, maximumBytes: PropertyListLimits.maximumFileBytes) {
        case .success(let read): contents = read
        case .failure(.missing):
            return PlistFile(location: location, values: [:], exists: false, format: .binary, version: nil)
        case .failure(let failure): throw ToolError.failure("Could not read data from \(location.path): it \(failure)")
        }
        let version = FileIdentity(contents.status)
        // `touch x.plist` makes a file for a domain to be written to, as on macOS.
        guard !contents.data.isEmpty else {
            return PlistFile(location: location, values: [:], exists: true, format: .binary, version: version)
        }
        let root: PlistValue
        do {
            root = try PropertyListFile.decodeValue(contents.data)
        } catch {
            throw ToolError.failure("\(location.path) is not a property list (\(error.message)); it is left as it is")
        }
        guard case .dictionary(let values) = root else {
            throw ToolError.failure("\(location.path) holds \(root.plistType.nameWithArticle), not a dictionary; it is left as it is")
        }
        let format: PropertyListFile.Format = BinaryPropertyList.isBinary(contents.data) ? .binary : .xml
        return PlistFile(location: location, values: values, exists: true, format: format, version: version)
    }

    /// Replaces the file with `values`: written to a new file in the same folder (`O_EXCL`, so
    /// nothing else's file is ever written into), fsynced, and renamed over the file, so a reader
    /// sees the old file or the new one, never part of either; an existing file's mode (and,
    /// for root, its owner) is kept. Returns false, changing nothing, when the file is no
    /// longer the version read: the caller reads it again and builds on what the other writer left.
    func write(_ values: [String: PlistValue]) throws(ToolError) -> Bool {
        let destination = try writableTarget()
        let data: Data
        do {
            data = try PropertyListFile.encode(values, format: format)
        } catch {
            throw failure("\(error.code.rawValue): \(error.message)")
        }
        // A file that every reader here would refuse is never written: it could not be read back.
        guard data.count <= PropertyListLimits.maximumFileBytes else {
            throw failure("the file would be \(data.count) bytes, more than the \(PropertyListLimits.maximumFileBytes) a property list is read at")
        }
        let temporary = SystemText.parentDirectory(of: destination) + "/" + PlistFile.temporaryPrefix
            + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary): \(SystemText.errorMessage(errno))") }
        var problem: String?
        func note(_ what: String) { problem = "\(what): \(SystemText.errorMessage(errno))" }
        if let version {
            if fchmod(fd, version.mode & 0o7777) != 0 { note("cannot set the mode of \(temporary)") }
            // Only root can give a file away. Anyone else whom the folder lets replace the file
            // owns the new one, as with any editor that saves by renaming.
            if problem == nil, version.owner != geteuid() || version.group != getegid() {
                _ = fchown(fd, version.owner, version.group)
            }
        }
        if problem == nil, !FileDescriptorIO.write(data, to: fd) { note("cannot write \(temporary)") }
        if problem == nil, fsync(fd) != 0 { note("cannot fsync \(temporary)") }
        close(fd)
        if let problem {
            unlink(temporary)
            throw failure(problem)
        }
        // The check and the rename are two steps: a writer that lands between them is lost, as on
        // macOS; one that wrote while this edit was built is not.
        guard FileIdentity(atPath: destination) == version else {
            unlink(temporary)
            return false
        }
        guard rename(temporary, destination) == 0 else {
            let reason = SystemText.errorMessage(errno)
            unlink(temporary)
            throw failure("cannot rename \(temporary) to \(destination): \(reason)")
        }
        PlistFile.syncFolder(of: destination)
        return true
    }

    /// Removes the file, as macOS's `defaults delete <path>` does. A link's target is emptied
    /// instead (an empty dictionary, in its format), so the link stays whole, as the daemon
    /// treats a linked domain file. Returns false, changing nothing, when the file is no longer
    /// the version read.
    func remove() throws(ToolError) -> Bool {
        guard PlistFile.linkTarget(of: location.path) == nil else { return try write([:]) }
        guard FileIdentity(atPath: location.path) == version else { return false }
        guard unlink(location.path) == 0 else {
            throw ToolError.failure("Could not delete domain \(location.argument): \(SystemText.errorMessage(errno))")
        }
        PlistFile.syncFolder(of: location.path)
        return true
    }

    /// Where a write lands. A file that is a symbolic link is written through: its target is
    /// replaced in the target's own folder and the link stays a link, as the daemon writes a
    /// domain's file. Dotfile managers (stow, home-manager) lay preference files out as links,
    /// and replacing the link with a file would quietly take the file out of the repository it is
    /// kept in. A link that leads nowhere, or to anything but a regular file, is refused: what it
    /// names is someone's on purpose, or a mistake that a new file in its place would hide.
    private func writableTarget() throws(ToolError) -> String {
        var status = stat()
        guard lstat(location.path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return location.path }
        guard let target = PlistFile.linkTarget(of: location.path) else {
            throw failure("\(location.path) is a symbolic link to nothing; it is left as it is")
        }
        guard stat(target, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            throw failure("\(location.path) leads to \(RegularFile.kind(of: status.st_mode)), \(target); it is left as it is")
        }
        return target
    }

    private func failure(_ reason: String) -> ToolError {
        ToolError.failure("Could not write domain \(location.argument); exiting (\(reason))")
    }

    /// Begins the name of a write's new file until it is renamed into place; the name never ends
    /// in `.plist`, so no reader of a folder of preferences takes it for a domain.
    static let temporaryPrefix = ".defaults-tmp-"

    /// What the link at `path` leads to, resolved to the end; nil when `path` is not a link or
    /// leads nowhere.
    static func linkTarget(of path: String) -> String? {
        var status = stat()
        guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK else { return nil }
        return PlistPath.realPath(path)
    }

    /// Makes a rename or removal in the folder durable. The change is made by then; a folder that
    /// cannot be synced leaves it as durable as its file system makes it, which is no reason to
    /// report a change that happened as failed.
    private static func syncFolder(of path: String) {
        let fd = open(SystemText.parentDirectory(of: path), O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = fsync(fd)
        close(fd)
    }
}

/// One version of a file, as `stat` tells it: which file (device and inode), its size, and when
/// its contents and its status last changed. A write in between changes at least one of them.
struct FileIdentity: Equatable {
    let device: UInt64
    let inode: UInt64
    let size: Int64
    let modifiedSeconds: Int
    let modifiedNanoseconds: Int
    let changedSeconds: Int
    let changedNanoseconds: Int
    /// The mode and owner a write gives the file that replaces this one.
    let mode: mode_t
    let owner: uid_t
    let group: gid_t

    init(_ status: stat) {
        device = UInt64(status.st_dev)
        inode = UInt64(status.st_ino)
        size = Int64(status.st_size)
        modifiedSeconds = Int(status.st_mtim.tv_sec)
        modifiedNanoseconds = Int(status.st_mtim.tv_nsec)
        changedSeconds = Int(status.st_ctim.tv_sec)
        changedNanoseconds = Int(status.st_ctim.tv_nsec)
        mode = status.st_mode
        owner = status.st_uid
        group = status.st_gid
    }

    /// The version at `path` now, a link followed; nil when nothing is there.
    init?(atPath path: String) {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        self.init(status)
    }
}
