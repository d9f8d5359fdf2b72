import DefaultsCore
import FoundationEssentials

/// The files of a bundle directory: every regular file by path relative to the bundle, and its
/// `.lproj` folders. Files that a symbolic link leads to outside the bundle are left out, so a
/// bundle can never make the daemon read elsewhere.
struct BundleFiles {
    let root: URL
    /// Relative paths, sorted.
    let paths: [String]
    /// `.lproj` folder names without the extension, sorted.
    let languages: [String]
    private(set) var diagnostics: [Diagnostic] = []

    /// Bounds on what a bundle may hold; real ones have a few hundred files, three levels deep.
    static let maximumFileCount = 10_000
    static let maximumDepth = 8
    /// The most bytes a bundle's files are read for in all, each read counted (a file that many
    /// links lead to, each time): real bundles hold well under a megabyte, and this is room for
    /// one file of the largest size a property list may be, twice.
    static let maximumTotalBytes = 2 * PropertyListLimits.maximumFileBytes
    private(set) var bytesRead = 0

    init(directory: URL) throws(SettingsBundleError) {
        let root = directory.standardizedFileURL.resolvingSymlinksInPath()
        guard SystemText.isDirectory(root.path) else {
            throw SettingsBundleError(path: directory.path, reason: "not a directory")
        }
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: root.path) else {
            throw SettingsBundleError(path: directory.path, reason: "cannot list it")
        }
        self.root = root
        var paths: [String] = []
        var diagnostics: [Diagnostic] = []
        let prefix = root.path.hasSuffix("/") ? root.path : root.path + "/"
        // A walk of real directories only: a symbolic link to a directory is not entered (no
        // loops, no escape), and a symbolic link to a file is kept only when it stays inside.
        var pending = entries.map { ($0, 1) }
        while case (let relative, let depth)? = pending.popLast(), paths.count < Self.maximumFileCount {
            let url = root.appendingPathComponent(relative)
            let type = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.type] as? FileAttributeType
            switch type {
            case .typeDirectory?:
                guard depth < Self.maximumDepth else { continue }
                let children = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
                pending += children.map { (relative + "/" + $0, depth + 1) }
            case .typeRegular?:
                paths.append(relative)
            case .typeSymbolicLink?:
                guard FileManager.default.fileExists(atPath: url.path), !SystemText.isDirectory(url.path) else { continue }
                if url.resolvingSymlinksInPath().path.hasPrefix(prefix) {
                    paths.append(relative)
                } else {
                    diagnostics.append(
                        Diagnostic(
                            .warning, .fileOutsideBundle, file: relative, "a symbolic link out of the bundle; not read")
                    )
                }
            default:
                continue
            }
        }
        self.paths = paths.sorted()
        self.languages = entries.filter { name in
            name.hasSuffix(".lproj") && SystemText.isDirectory(root.appendingPathComponent(name).path)
        }.map { String($0.dropLast(".lproj".count)) }.sorted()
        self.diagnostics = diagnostics
    }

    /// The bytes of a file, or nil (with a diagnostic) when it is too large, cannot be read, or
    /// would take the bundle past ``maximumTotalBytes``. Every file of a bundle is a property list
    /// (pages, `.strings` tables), so the limit is the one every property-list reader holds files
    /// to; no settings page or table comes close.
    mutating func contents(of path: String, diagnostics: inout [Diagnostic]) -> Data? {
        let url = root.appendingPathComponent(path)
        let left = Self.maximumTotalBytes - bytesRead
        switch RegularFile.read(atPath: url.path, maximumBytes: min(PropertyListLimits.maximumFileBytes, left)) {
        case .success(let file):
            bytesRead += file.data.count
            return file.data
        case .failure(.tooLarge(let size, _)) where size <= PropertyListLimits.maximumFileBytes:
            diagnostics.append(
                Diagnostic(
                    .error, .fileTooLarge, file: path,
                    "not read: the bundle's files add up to more than \(Self.maximumTotalBytes) bytes"))
            return nil
        case .failure(.tooLarge(let size, _)):
            diagnostics.append(
                Diagnostic(
                    .error, .fileTooLarge, file: path,
                    "\(size) bytes; files above \(PropertyListLimits.maximumFileBytes) are not read"))
            return nil
        case .failure(let failure):
            let code: DiagnosticCode = path.hasSuffix(".strings") ? .stringsUnparseable : .plistUnparseable
            diagnostics.append(Diagnostic(.error, code, file: path, failure == .missing ? "cannot be read" : "\(failure)"))
            return nil
        }
    }

    /// False for a `File` that is absolute or climbs out with `..`: it is not followed.
    static func staysInside(_ name: String) -> Bool {
        !name.hasPrefix("/") && !name.split(separator: "/", omittingEmptySubsequences: false).contains("..")
            && !name.contains("\u{0}")
    }
}
