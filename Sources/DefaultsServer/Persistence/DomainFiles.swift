import DefaultsCore
import Foundation

/// The storage directory: one property-list file per domain.
///
/// A value type with no mutable state, so the writer thread and the event loop can each hold
/// a copy. Writes use POSIX calls directly because Foundation's atomic `Data.write` neither
/// fsyncs the file nor the directory, and a write must be durable when `synchronize` answers.
struct DomainFiles: Sendable {
    let directory: String
    let format: PropertyListFile.Format

    init(directory: String, format: PropertyListFile.Format) {
        self.directory = directory
        self.format = format
    }

    func path(of domain: DomainName) -> String { directory + "/" + domain.fileName }

    /// Creates the directory (mode 0700) if it is missing and checks that it is a usable directory.
    func prepare() throws(DefaultsError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw DefaultsError(.ioError, "storage path \(directory) exists and is not a directory")
            }
        } else {
            do {
                try FileManager.default.createDirectory(
                    atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw DefaultsError(.ioError, "cannot create storage directory \(directory): \(error.localizedDescription)")
            }
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            throw DefaultsError(.ioError, "storage directory \(directory) is not writable: \(String(cString: strerror(errno)))")
        }
    }

    enum LoadResult: Sendable {
        case missing
        case loaded([String: PlistValue])
        /// The file could not be parsed and was moved to `movedTo`; the domain starts empty.
        case corrupt(reason: String, movedTo: String)
    }

    /// Reads a domain's file. An unparseable file is moved aside, never overwritten.
    func load(_ domain: DomainName, now: Date = Date()) throws(DefaultsError) -> LoadResult {
        try DomainFiles.load(atPath: path(of: domain), now: now)
    }

    /// Reads a property-list file of the daemon's (a domain, or the bundle registry). An
    /// unparseable file is moved aside to `<path>.corrupt-<time>`, never overwritten; when it
    /// cannot be moved, the error says so and nothing is read.
    static func load(atPath path: String, now: Date = Date()) throws(DefaultsError) -> LoadResult {
        guard let data = FileManager.default.contents(atPath: path) else {
            if errno == ENOENT || !FileManager.default.fileExists(atPath: path) { return .missing }
            throw DefaultsError(.ioError, "cannot read \(path): \(String(cString: strerror(errno)))")
        }
        do {
            return .loaded(try PropertyListFile.decode(data))
        } catch {
            let stamp = RFC3339.format(now).replacingOccurrences(of: ":", with: "")
            let aside = path + ".corrupt-" + stamp
            guard rename(path, aside) == 0 else {
                throw DefaultsError(.ioError, "cannot move corrupt \(path) aside: \(String(cString: strerror(errno)))")
            }
            return .corrupt(reason: error.message, movedTo: aside)
        }
    }

    /// Writes a domain durably: a temporary file in the same directory, fsync, rename, fsync of the directory.
    /// An empty domain has its file removed instead.
    func write(_ domain: DomainName, values: [String: PlistValue]) throws(DefaultsError) {
        if values.isEmpty {
            try remove(domain)
            return
        }
        try writeAtomically(try PropertyListFile.encode(values, format: format), to: path(of: domain))
    }

    func remove(_ domain: DomainName) throws(DefaultsError) {
        let path = path(of: domain)
        if unlink(path) != 0 && errno != ENOENT {
            throw DefaultsError(.ioError, "cannot remove \(path): \(String(cString: strerror(errno)))")
        }
        try syncDirectory()
    }

    /// The domains that have a file.
    func storedDomains() -> [DomainName] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.compactMap(DomainName.fromFileName)
    }

    func writeAtomically(_ data: Data, to path: String) throws(DefaultsError) {
        let temporary = directory + "/.tmp-" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError("cannot create \(temporary)") }
        var failure: DefaultsError?
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = ioError("cannot write \(temporary)")
                    return
                }
                offset += written
            }
        }
        if failure == nil, fsync(fd) != 0 { failure = ioError("cannot fsync \(temporary)") }
        close(fd)
        if failure == nil, rename(temporary, path) != 0 { failure = ioError("cannot rename \(temporary) to \(path)") }
        if let failure {
            unlink(temporary)
            throw failure
        }
        try syncDirectory()
    }

    private func syncDirectory() throws(DefaultsError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ioError("cannot open \(directory)") }
        defer { close(fd) }
        if fsync(fd) != 0 { throw ioError("cannot fsync \(directory)") }
    }

    private func ioError(_ what: String) -> DefaultsError {
        DefaultsError(.ioError, "\(what): \(String(cString: strerror(errno)))")
    }
}
