import FoundationEssentials
import Glibc

/// Who can change what a path leads to: the one rule behind the socket directory a client
/// checks, the storage directory the daemon writes through, and the managed preferences it
/// obeys. Each use says only whose components it accepts.
///
/// A path is safe when nobody outside those owners can replace any part of it. So every
/// component of the path as given, and of the path its links lead to, up to `/`:
/// - belongs to an accepted owner (a link on the way, too: its owner can swap it);
/// - cannot be written by its group or by others. A directory with the sticky bit (`/tmp`) is
///   the exception, since there nobody can replace an entry they do not own. Where the use
///   allows it, so is a group that is only its owner's own private group (Debian's and Fedora's
///   user private groups, where `umask 002` makes every folder group-writable), the exception
///   OpenSSH's `StrictModes` makes on those systems.
///
/// ```swift
/// if let problem = PathTrust.yoursOrRoot().problem(with: "/home/ada/.config") {
///     print(problem)  // "/home/ada can be written by its group or others (mode 777)"
/// }
/// ```
public struct PathTrust: Sendable {
    /// Whether a component owned by this uid may stay as it is.
    public var acceptsOwner: @Sendable (UInt32) -> Bool
    /// Whether a group-writable component is accepted when its group is its owner's private group.
    public var acceptsPrivateGroup: Bool
    /// A further rule for each component that is not a sticky directory; nil when it holds.
    public var furtherProblem: @Sendable (_ component: String) -> String?

    public init(
        acceptsOwner: @escaping @Sendable (UInt32) -> Bool, acceptsPrivateGroup: Bool,
        furtherProblem: @escaping @Sendable (String) -> String? = { _ in nil }
    ) {
        self.acceptsOwner = acceptsOwner
        self.acceptsPrivateGroup = acceptsPrivateGroup
        self.furtherProblem = furtherProblem
    }

    /// Components owned by `uid` or by root, as a user's own files and the system's folders are.
    public static func yoursOrRoot(uid: UInt32 = getuid()) -> PathTrust {
        PathTrust(acceptsOwner: { $0 == uid || $0 == 0 }, acceptsPrivateGroup: true)
    }

    /// What makes one component of a path unsafe.
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public let component: String
        public let reason: String
        /// Whether `chmod go-w` on the component would mend it.
        public var isWritableByOthers = false
        public var description: String { "\(component) \(reason)" }
    }

    /// The first component of `path`, or of where its links lead, that someone else could
    /// change; nil when there is none. A path that does not exist is a problem too.
    public func problem(with path: String) -> Problem? {
        guard let resolved = realpath(path, nil) else {
            return Problem(component: path, reason: "cannot be inspected: \(SystemText.errorMessage(errno))")
        }
        let target = String(cString: resolved)
        free(resolved)
        var seen: Set<String> = []
        for (component, isLeaf) in PathTrust.chain(of: path) + PathTrust.chain(of: target) where seen.insert(component).inserted {
            if let problem = problem(withComponent: component, isLeaf: isLeaf) { return problem }
        }
        return nil
    }

    /// `path` and each directory above it as written (up to `/`, or to its first component when
    /// it is relative: the resolved chain covers the rest); only the first is the leaf.
    private static func chain(of path: String) -> [(String, Bool)] {
        var result = [(path, true)]
        var component = SystemText.parentDirectory(of: path)
        while !component.isEmpty {
            result.append((component, false))
            if component == "/" { break }
            component = SystemText.parentDirectory(of: component)
        }
        return result
    }

    private func problem(withComponent component: String, isLeaf: Bool) -> Problem? {
        func problem(_ reason: String) -> Problem { Problem(component: component, reason: reason) }
        var status = stat()
        guard lstat(component, &status) == 0 else { return problem("cannot be inspected: \(SystemText.errorMessage(errno))") }
        if status.st_mode & S_IFMT == S_IFLNK {
            guard acceptsOwner(status.st_uid) else { return problem("is a link owned by uid \(status.st_uid)") }
            // What it leads to is checked as part of the resolved path.
            return nil
        }
        guard acceptsOwner(status.st_uid) else { return problem("is owned by uid \(status.st_uid)") }
        let sticky = !isLeaf && status.st_mode & S_IFMT == S_IFDIR && status.st_mode & S_ISVTX != 0
        if sticky { return nil }
        let othersWrite = status.st_mode & 0o002 != 0
        let groupWrite = status.st_mode & 0o020 != 0
        if othersWrite || (groupWrite && !(acceptsPrivateGroup && PathTrust.isPrivateGroup(status.st_gid, of: status.st_uid))) {
            return Problem(
                component: component, reason: "can be written by its group or others (mode \(String(status.st_mode & 0o7777, radix: 8)))",
                isWritableByOthers: true)
        }
        return furtherProblem(component).map(problem)
    }

    /// Whether `gid` is `uid`'s private group: its primary group, named as the user, with no
    /// member but the user.
    static func isPrivateGroup(_ gid: UInt32, of uid: UInt32) -> Bool {
        guard let name = userName(of: uid, primaryGroup: gid) else { return false }
        // The reentrant call, into a buffer that outlives every pointer read from it: clients
        // check from any thread.
        return withUnsafeTemporaryAllocation(of: CChar.self, capacity: 65_536) { buffer in
            var group = Glibc.group()
            var found: UnsafeMutablePointer<Glibc.group>?
            guard let storage = buffer.baseAddress, getgrgid_r(gid, &group, storage, buffer.count, &found) == 0, found != nil,
                let groupName = group.gr_name, String(cString: groupName) == name
            else { return false }
            var member = group.gr_mem
            while let entry = member?.pointee {
                guard String(cString: entry) == name else { return false }
                member = member?.advanced(by: 1)
            }
            return true
        }
    }

    /// The name of `uid` when its primary group is `gid`.
    private static func userName(of uid: UInt32, primaryGroup gid: UInt32) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: 16_384) { buffer in
            var user = passwd()
            var found: UnsafeMutablePointer<passwd>?
            guard let storage = buffer.baseAddress, getpwuid_r(uid, &user, storage, buffer.count, &found) == 0, found != nil,
                user.pw_gid == gid,
                let name = user.pw_name
            else { return nil }
            return String(cString: name)
        }
    }
}
