import DefaultsCore
import Foundation

/// A state a file the daemon or the Settings app reads can be in, made at the file's `path`
/// with `scratch` for what a link leads to: absent, empty, torn, hostile, too large, a link to
/// what never ends or never answers, not a file at all, unreadable, or replaced again and again.
/// The one table every file-state matrix crosses with its operations (domain files in
/// `FileStateMatrixTests`, bundle files and the configuration in `BundleAndConfigFileStateTests`,
/// the Settings app's files in `SettingsAppFileStateTests`): a new state is one line here, and
/// every matrix gets it.
///
/// `make` expects nothing at `path` (every matrix removes the valid file first), and makes
/// things only at `path`, beside it under names that begin with it, and in `scratch`; it never
/// writes through a link, so that a link to `/dev/zero` is only ever read. It answers what
/// undoes it after the cell (a writer's descriptor held open, a thread stopped).
///
/// ```swift
/// let undo = FileState.all[0].make(path, scratch, contents)
/// defer { undo() }
/// ```
public struct FileState: Sendable {
    public let name: String
    /// Whether what is at the path keeps changing by itself until the state is undone (it is
    /// replaced again and again): a snapshot taken while it runs says nothing, so a matrix
    /// compares what is there only once it is undone, when it is the valid file. It is also the
    /// one state in which a reader without root's rights may find bytes it can take in; in every
    /// other one it finds nothing, nothing whole, or nothing it may read.
    public let changesUntilUndone: Bool
    public let make: @Sendable (_ path: String, _ scratch: String, _ contents: Contents) -> (@Sendable () -> Void)

    public init(
        name: String, changesUntilUndone: Bool = false,
        make: @escaping @Sendable (_ path: String, _ scratch: String, _ contents: Contents) -> (@Sendable () -> Void)
    ) {
        self.name = name
        self.changesUntilUndone = changesUntilUndone
        self.make = make
    }

    /// What the states of one kind of file are made of: a domain file, a bundle's page, a
    /// configuration file, an image each have their own valid bytes and their own cap.
    public struct Contents: Sendable {
        /// Bytes the file's reader takes in whole.
        public var valid: Data
        /// The same cut short mid-element, as a writer leaves them halfway.
        public var truncated: Data
        /// The most bytes the file's reader reads: one more is over its cap.
        public var maximumBytes: Int

        /// `truncated` defaults to the first half of `valid`.
        public init(valid: Data, truncated: Data? = nil, maximumBytes: Int) {
            self.valid = valid
            self.truncated = truncated ?? Data(valid.prefix(valid.count / 2))
            self.maximumBytes = maximumBytes
        }
    }

    public static let all: [FileState] = [
        FileState(name: "absent") { _, _, _ in {} },
        FileState(name: "0 bytes") { path, _, _ in
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            return {}
        },
        FileState(name: "half-written, its writer still holding it open") { path, _, contents in
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
            contents.truncated.withUnsafeBytes { _ = write(fd, $0.baseAddress, $0.count) }
            return { close(fd) }
        },
        FileState(name: "truncated mid-element") { path, _, contents in
            _ = FileManager.default.createFile(atPath: path, contents: contents.truncated)
            return {}
        },
        FileState(name: "binary with shared references past the expansion cap") { path, _, _ in
            _ = FileManager.default.createFile(atPath: path, contents: Data(HostilePropertyLists.sharedData(references: 1 << 12, bytes: 1 << 14)))
            return {}
        },
        FileState(name: "over the size cap") { path, _, contents in
            _ = FileManager.default.createFile(atPath: path, contents: Data())
            _ = truncate(path, off_t(contents.maximumBytes + 1))
            return {}
        },
        FileState(name: "a dangling symlink") { path, scratch, _ in
            _ = symlink(scratch + "/nowhere.plist", path)
            return {}
        },
        FileState(name: "a symlink loop") { path, _, _ in
            _ = symlink(path + ".other", path)
            _ = symlink(path, path + ".other")
            return {}
        },
        FileState(name: "a symlink to a FIFO") { path, scratch, _ in
            _ = mkfifo(scratch + "/fifo", 0o600)
            _ = symlink(scratch + "/fifo", path)
            return {}
        },
        FileState(name: "a symlink to /dev/zero") { path, _, _ in
            _ = symlink("/dev/zero", path)
            return {}
        },
        FileState(name: "a symlink to a directory") { path, scratch, _ in
            _ = mkdir(scratch + "/folder", 0o700)
            _ = symlink(scratch + "/folder", path)
            return {}
        },
        FileState(name: "a FIFO") { path, _, _ in
            _ = mkfifo(path, 0o600)
            return {}
        },
        FileState(name: "a directory") { path, _, _ in
            _ = mkdir(path, 0o700)
            return {}
        },
        // Created with mode 000, so there is no moment at which it could be read. Only a reader
        // without root's rights is refused it: see ``unprivilegedCommandPrefix``.
        FileState(name: "unreadable (mode 000)") { path, _, contents in
            _ = FileState.writeNewFile(contents.valid, at: path, mode: 0)
            return {}
        },
        FileState(name: "replaced between stat and open, again and again", changesUntilUndone: true) { path, _, contents in
            let replacer = AlternatingReplacer(path: path, valid: contents.valid)
            replacer.start()
            return { replacer.stop() }
        },
    ]

    /// Put before a program's command line so that, run by root as the tests are, it has
    /// neither CAP_DAC_OVERRIDE nor CAP_DAC_READ_SEARCH: file permissions then hold for it as
    /// for any user, and a file of mode 000 is refused to it. This is how the matrices test what
    /// a user who is not root meets. Empty when the tests do not run as root.
    public static var unprivilegedCommandPrefix: [String] {
        getuid() == 0 ? ["/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"] : []
    }

    /// Writes `data` to a new file at `path` with `mode`; false when something is already there
    /// (`O_EXCL`: a link is never written through) or the write fails.
    static func writeNewFile(_ data: Data, at path: String, mode: mode_t) -> Bool {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return data.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) } == data.count
    }
}

/// Renames a FIFO and a regular file of valid bytes over a path in turn, on a thread of its
/// own, so that a reader that looks at the path and then opens it finds the other one there
/// at times: the race a check of the path (`stat`, then `open`) loses and a check of the open
/// descriptor (`RegularFile`) does not. Each is prepared under a scratch name in the path's own
/// folder and renamed over the path, so the path never goes missing; the one consumed is made
/// again. It stops when told to, or by itself after ``longest`` seconds, so that a test that
/// never stops it does not leave it running.
final class AlternatingReplacer: @unchecked Sendable {
    /// The longest it runs: far longer than any cell.
    static let longest: TimeInterval = 30
    /// A pause between renames, for pacing only (nothing waits on it): at full speed the thread
    /// would take a whole core of the two the tests run on from the programs under test.
    static let pauseMicroseconds: UInt32 = 200

    let path: String
    let valid: Data
    private var fifoName: String { path + ".replacing-fifo" }
    private var fileName: String { path + ".replacing-file" }
    private let lock = NSLock()
    private var stopAsked = false
    private let ended = DispatchSemaphore(value: 0)

    init(path: String, valid: Data) {
        self.path = path
        self.valid = valid
    }

    func start() {
        Thread { [self] in
            defer { ended.signal() }
            let deadline = Date(timeIntervalSinceNow: Self.longest)
            var fifoNext = true
            while !lock.withLock({ stopAsked }), Date() < deadline {
                if fifoNext {
                    _ = mkfifo(fifoName, 0o600)
                    _ = rename(fifoName, path)
                } else {
                    unlink(fileName)
                    _ = FileState.writeNewFile(valid, at: fileName, mode: 0o600)
                    _ = rename(fileName, path)
                }
                fifoNext.toggle()
                usleep(Self.pauseMicroseconds)
            }
        }.start()
    }

    /// Stops the renames, waits for the thread to end, and leaves the regular file of valid
    /// bytes at the path, with no scratch name left behind. Called again, it does nothing.
    func stop() {
        let first: Bool = lock.withLock {
            defer { stopAsked = true }
            return !stopAsked
        }
        guard first else { return }
        ended.wait()
        unlink(fileName)
        _ = FileState.writeNewFile(valid, at: fileName, mode: 0o600)
        _ = rename(fileName, path)
        unlink(fifoName)
    }
}

/// What is at a path, as `lstat` names it and as a reader that follows links reads it: how a
/// test tells that a program only read a file, and replaced nothing.
public struct FileSnapshot: Equatable, Sendable, CustomStringConvertible {
    /// `lstat`'s file type (`S_IFREG`, `S_IFLNK`…); nil when nothing is there.
    public var type: mode_t?
    /// The bytes of the regular file at the path, or that a link there leads to (through
    /// ``RegularFile``: a FIFO or a device is never waited on); nil for anything else.
    public var bytes: Data?

    /// More than any state's file holds (a domain file one byte over its 16 MiB cap).
    static let maximumBytes = 32 << 20

    public init(at path: String) {
        var status = stat()
        type = lstat(path, &status) == 0 ? status.st_mode & S_IFMT : nil
        if case .success(let file) = RegularFile.read(atPath: path, maximumBytes: Self.maximumBytes) {
            bytes = file.data
        } else {
            bytes = nil
        }
    }

    /// A regular file holding `bytes`.
    public init(regularFileHolding bytes: Data) {
        type = S_IFREG
        self.bytes = bytes
    }

    public var description: String {
        let kind = type.map { $0 == S_IFLNK ? "a symbolic link" : $0 == S_IFREG ? "a regular file" : RegularFile.kind(of: $0) } ?? "nothing"
        return kind + (bytes.map { " whose bytes read are \($0.count)" } ?? " with no bytes to read")
    }
}
