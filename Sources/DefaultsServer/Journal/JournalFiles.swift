import DefaultsCore
import FoundationEssentials
import Glibc

/// The change journal's files: one per domain, `<state>/.defaultsd-journal/<domain>.journal` (by-host
/// domains in its `ByHost/` folder), each a line of JSON per entry (``JournalEntry``), oldest first.
///
/// Append-only between compactions, so a crash can only cut the last line short: reading skips
/// any line that is not a whole entry, and the next append starts on a line of its own. A
/// compaction writes the entries it keeps to a new file and renames it over the old one.
///
/// A value with no state: every method runs on the journal thread, one task at a time.
struct JournalFiles: Sendable {
    let directory: String
    static let folderName = ".defaultsd-journal"
    static let fileSuffix = ".journal"
    static let compactingPrefix = ".compacting-"

    init(stateDirectory: String) {
        self.directory = stateDirectory + "/" + JournalFiles.folderName
    }

    func path(of domain: DomainName) -> String {
        let folder = domain.isCurrentHost ? directory + "/" + DomainName.byHostFolder : directory
        return folder + "/" + domain.rawValue + JournalFiles.fileSuffix
    }

    /// Whether the domain has a journal file (or anything else at its path).
    func exists(_ domain: DomainName) -> Bool {
        var status = stat()
        return lstat(path(of: domain), &status) == 0
    }

    /// Every domain that has a journal file.
    func journaledDomains() -> [DomainName] {
        func domains(in folder: String, host: DomainName.Host) -> [DomainName] {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return names.compactMap { name in
                guard name.hasSuffix(JournalFiles.fileSuffix), !name.hasPrefix(".") else { return nil }
                return try? DomainName(String(name.dropLast(JournalFiles.fileSuffix.utf8.count)), host: host)
            }
        }
        return (domains(in: directory, host: .any) + domains(in: directory + "/" + DomainName.byHostFolder, host: .current)).sorted()
    }

    /// Appends entries to the domain's file, creating it (mode 0600) and its folders, and
    /// answers the file's size afterwards. A file cut short by a crash gets a newline first, so
    /// the torn line stays one line that reading skips. Anything at the path that is not a
    /// regular file (a link, a FIFO) holds no entries of ours: it is removed and a new file made.
    func append(_ entries: [JournalEntry], to domain: DomainName) throws(DefaultsError) -> Int {
        let path = path(of: domain)
        try makeFolders(for: domain)
        var fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0o600)
        if fd < 0, errno == ELOOP || errno == ENXIO || errno == EISDIR {
            try removeStranger(at: path)
            fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0o600)
        }
        guard fd >= 0 else { throw Self.failure("open", path, errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw Self.failure("stat", path, errno) }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw DefaultsError(.ioError, "the change journal \(path) is \(RegularFile.kind(of: status.st_mode)), not a regular file")
        }
        var written = 0
        if status.st_size > 0 {
            var last: UInt8 = 0
            if pread(fd, &last, 1, off_t(status.st_size - 1)) == 1, last != UInt8(ascii: "\n") {
                guard FileDescriptorIO.write("\n", to: fd) else { throw Self.failure("append to", path, errno) }
                written += 1
            }
        }
        written += try Self.write(entries, to: fd, path: path)
        return Int(status.st_size) + written
    }

    /// Writes entries as lines, a chunk at a time: a batch of large values is never encoded
    /// whole in memory. Answers the bytes written.
    private static func write(_ entries: [JournalEntry], to fd: Int32, path: String) throws(DefaultsError) -> Int {
        var writer = JSONWriter(capacity: chunkBytes + 4096)
        var written = 0
        var start = entries.startIndex
        while start < entries.endIndex {
            writer.removeAll()
            let end = start + JournalEntry.encodeLines(entries[start...], into: &writer, upTo: chunkBytes)
            guard writer.withBytes({ FileDescriptorIO.write($0.bindMemory(to: UInt8.self), to: fd) }) else {
                throw failure("write", path, errno)
            }
            written += writer.count
            start = end
        }
        return written
    }

    /// How much is encoded before it is written.
    static let chunkBytes = 256 << 10

    /// The domain's entries, oldest first, of at most the last `maximumBytes` of its file (a
    /// file grown past what compaction leaves is read from its end). Lines that are not whole
    /// entries (a tail cut short by a crash, anything else) are skipped.
    func entries(of domain: DomainName, maximumBytes: Int) -> [JournalEntry] {
        guard let bytes = tail(of: path(of: domain), maximumBytes: maximumBytes) else { return [] }
        var entries: [JournalEntry] = []
        var lineStart = bytes.startIndex
        bytes.withUnsafeBytes { raw in
            for index in raw.indices where raw[index] == UInt8(ascii: "\n") {
                defer { lineStart = index + 1 }
                guard index > lineStart else { continue }
                let line = UnsafeRawBufferPointer(rebasing: raw[lineStart..<index])
                guard let json = try? JSONParser.parse(line), let entry = JournalEntry(json: json, domain: domain),
                    entry.domain == domain
                else { continue }
                entries.append(entry)
            }
        }
        return entries
    }

    /// Rewrites the domain's file with the newest of its lines and `adding` (newer than all of
    /// them) within the bounds, and answers what it kept. The lines kept are copied as they are,
    /// each checked to be a whole entry recent enough, and only the file's last
    /// ``JournalBounds/maximumBytes`` are read: a compaction holds no more than that in memory.
    /// The new file is complete on disk before it replaces the old one.
    func compact(_ domain: DomainName, adding: [JournalEntry], bounds: JournalBounds, now: Date) throws(DefaultsError) -> JournalFileSize {
        // Newest first: the added entries (each measured as its line, one at a time, so that a
        // batch of large values is never encoded whole), then the file's lines, until a bound.
        var keptAdded = 0
        var bytes = 0
        var full = false
        var line = JSONWriter(capacity: 4096)
        for entry in adding.reversed() {
            line.removeAll()
            JournalEntry.encodeLines(CollectionOfOne(entry), into: &line)
            guard keptAdded < bounds.maximumEntries, bytes + line.count <= bounds.maximumBytes else { full = true; break }
            bytes += line.count
            keptAdded += 1
        }
        let old = full ? [] : tail(of: path(of: domain), maximumBytes: bounds.maximumBytes - bytes) ?? []
        let oldest = now.addingTimeInterval(-bounds.maximumAge)
        var keptOld: [Range<Int>] = []
        if !full {
            old.withUnsafeBytes { raw in
                for line in Self.lines(in: old).reversed() {
                    guard keptAdded + keptOld.count < bounds.maximumEntries, bytes + line.count <= bounds.maximumBytes else { break }
                    let text = UnsafeRawBufferPointer(rebasing: raw[line.lowerBound..<(line.upperBound - 1)])
                    guard let json = try? JSONParser.parse(text), let entry = JournalEntry(json: json, domain: domain), entry.domain == domain
                    else { continue }  // not a whole entry: dropped
                    guard entry.time >= oldest else { break }
                    bytes += line.count
                    keptOld.append(line)
                }
            }
        }
        try makeFolders(for: domain)
        let path = path(of: domain)
        let slash = path.lastIndex(of: "/")!  // every path here is in `directory`
        let temporary = path[..<slash] + "/" + JournalFiles.compactingPrefix + path[path.index(after: slash)...]
        unlink(temporary)
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.failure("create", temporary, errno) }
        var written = Self.write(keptOld.reversed(), of: old, to: fd)
        if written {
            do throws(DefaultsError) {
                _ = try Self.write(Array(adding.suffix(keptAdded)), to: fd, path: temporary)
            } catch {
                written = false
            }
        }
        written = written && fsync(fd) == 0
        let code = errno
        close(fd)
        guard written, rename(temporary, path) == 0 else {
            let failure = Self.failure(written ? "rename over" : "write", written ? path : temporary, written ? errno : code)
            unlink(temporary)
            throw failure
        }
        return JournalFileSize(entries: keptOld.count + keptAdded, bytes: bytes)
    }

    /// Each line of `bytes`, its newline included; a last line without one is left out (torn).
    private static func lines(in bytes: [UInt8]) -> [Range<Int>] {
        var lines: [Range<Int>] = []
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            if index > start { lines.append(start..<(index + 1)) }
            start = index + 1
        }
        return lines
    }

    /// Writes the given lines of `bytes` in order, those next to each other in one call.
    private static func write(_ lines: some Sequence<Range<Int>>, of bytes: [UInt8], to fd: Int32) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var run: Range<Int>?
            for line in lines {
                if let current = run, current.upperBound == line.lowerBound {
                    run = current.lowerBound..<line.upperBound
                    continue
                }
                if let current = run, !FileDescriptorIO.write(UnsafeBufferPointer(rebasing: buffer[current]), to: fd) { return false }
                run = line
            }
            guard let run else { return true }
            return FileDescriptorIO.write(UnsafeBufferPointer(rebasing: buffer[run]), to: fd)
        }
    }

    /// The last `maximumBytes` of a regular file, from the start of a line; nil when there is none.
    private func tail(of path: String, maximumBytes: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let size = Int(status.st_size)
        let start = max(0, size - maximumBytes)
        var bytes = [UInt8](repeating: 0, count: size - start)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + filled, $0.count - filled, off_t(start + filled)) }
            if count > 0 {
                filled += count
            } else if count == 0 || errno != EINTR {
                break
            }
        }
        bytes.removeLast(bytes.count - filled)
        // Read from the middle of a line: that line is not whole.
        if start > 0, let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) { bytes.removeFirst(newline + 1) }
        return bytes
    }

    private func makeFolders(for domain: DomainName) throws(DefaultsError) {
        for folder in [directory] + (domain.isCurrentHost ? [directory + "/" + DomainName.byHostFolder] : []) {
            guard mkdir(folder, 0o700) == 0 || errno == EEXIST else { throw Self.failure("create", folder, errno) }
        }
    }

    private func removeStranger(at path: String) throws(DefaultsError) {
        var status = stat()
        guard lstat(path, &status) == 0 else { return }
        if status.st_mode & S_IFMT == S_IFDIR {
            throw DefaultsError(.ioError, "the change journal \(path) is a directory")
        }
        guard unlink(path) == 0 else { throw Self.failure("remove", path, errno) }
    }

    private static func failure(_ action: String, _ path: String, _ code: Int32) -> DefaultsError {
        DefaultsError(.ioError, "could not \(action) the change journal \(path): \(SystemText.errorMessage(code))")
    }
}

/// How much of a domain's history the journal keeps: the newest entries within all three bounds.
struct JournalBounds: Sendable, Hashable {
    var maximumEntries: Int
    var maximumAge: TimeInterval
    var maximumBytes: Int

    /// When a file is compacted: half as many entries again as it keeps, so that a compaction,
    /// which rewrites the file, comes once per that many changes; or once it holds more bytes
    /// than it keeps, when the next batch (at most ``maximumBytes`` itself) may double it.
    var compactionEntries: Int { maximumEntries + maximumEntries / 2 }
}
