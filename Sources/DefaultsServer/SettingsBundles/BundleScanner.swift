import DefaultsCore
import FoundationEssentials
import Glibc
import SettingsBundles

/// Finds and reads the installed Settings bundles: `<dir>/<domain>/Settings.bundle` in every
/// configured directory (system first, so a later one wins), plus those registered over the
/// socket. Runs on the scanner thread; a plain value with no shared state.
///
/// A bundle is read again only when its signature — the paths, sizes and modification times of
/// its files — changed, so a scan costs a directory walk, not a parse.
struct BundleScanner: Sendable {
    var directories: [String]
    var registered: [DomainName: String]
    var options: LoadOptions

    struct Found: Sendable {
        var path: String
        var signature: String
    }

    /// Every installed bundle by domain, with its signature (registered ones override installed ones).
    func find() -> [DomainName: Found] {
        var result: [DomainName: Found] = [:]
        let manager = FileManager.default
        for directory in directories {
            for name in (try? manager.contentsOfDirectory(atPath: directory)) ?? [] {
                guard let domain = try? DomainName(name) else { continue }
                let path = directory + "/" + name + "/Settings.bundle"
                guard SystemText.isDirectory(path) else { continue }
                result[domain] = Found(path: path, signature: BundleScanner.signature(of: path))
            }
        }
        // A registered bundle whose directory is gone is not found, so it is removed; it comes
        // back if the directory does.
        for (domain, path) in registered where manager.fileExists(atPath: path) {
            result[domain] = Found(path: path, signature: BundleScanner.signature(of: path))
        }
        return result
    }

    /// The directories whose changes can change what `find` finds: each configured directory
    /// and every directory inside it, and each registered bundle with its directories (`false`);
    /// for a configured directory that does not exist, the nearest ancestor that does (`true`).
    /// Each directory is watched once however many links lead to it (a link to `.` adds nothing),
    /// at most ``maximumWatchedDirectories`` in all.
    func directoriesToWatch() -> [String: Bool] {
        var result: [String: Bool] = [:]
        var visited: Set<FileIdentity> = []
        func addTree(_ path: String, depth: Int) {
            guard result[path] != false, result.count < Self.maximumWatchedDirectories,
                let identity = FileIdentity(directoryAt: path), visited.insert(identity).inserted
            else { return }
            result[path] = false
            guard depth < 8 else { return }
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? [] {
                addTree(path + "/" + name, depth: depth + 1)
            }
        }
        for directory in directories + registered.values.sorted() {
            if SystemText.isDirectory(directory) {
                addTree(directory, depth: 0)
                continue
            }
            let ancestor = WatchedDirectories.nearestExisting(directory)
            if result[ancestor] == nil { result[ancestor] = true }
        }
        return result
    }

    /// Far more directories than the installed bundles of a machine have (a few each).
    static let maximumWatchedDirectories = 4096

    /// A directory's device and inode, through links: what tells one directory from another.
    struct FileIdentity: Hashable {
        let device: UInt64
        let inode: UInt64

        init?(directoryAt path: String) {
            var status = stat()
            guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFDIR else { return nil }
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    func load(_ found: Found) -> Result<SettingsBundle, SettingsBundleError> {
        Result { () throws(SettingsBundleError) in
            try SettingsBundle.load(at: URL(fileURLWithPath: found.path), options: options)
        }
    }

    /// The paths, sizes and modification times of a bundle's files, as a walk of real
    /// directories finds them (links to directories are not entered), to the depth and count a
    /// bundle is read to.
    static func signature(of path: String) -> String {
        guard SystemText.isDirectory(path) else { return "missing" }
        var parts: [String] = []
        var pending = [("", 0)]
        while case (let relative, let depth)? = pending.popLast(), parts.count < maximumSignatureEntries {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: path + "/" + relative)) ?? [] {
                let child = relative.isEmpty ? name : relative + "/" + name
                var status = stat()
                guard lstat(path + "/" + child, &status) == 0 else { continue }
                parts.append("\(child):\(status.st_size):\(status.st_mtim.tv_sec).\(status.st_mtim.tv_nsec)")
                if status.st_mode & S_IFMT == S_IFDIR, depth < 8 { pending.append((child, depth + 1)) }
            }
        }
        return parts.sorted().joined(separator: "|")
    }

    /// The most files a bundle is read for, and a few more: enough to see any change of one.
    static let maximumSignatureEntries = 10_100
}
