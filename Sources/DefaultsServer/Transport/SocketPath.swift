import DefaultsCore
import FoundationEssentials
import Glibc
import NIOCore
import NIOPosix

/// Prepares the path the daemon listens on.
///
/// The directory holding the socket is created mode 0700. When it is the shared-`/tmp`
/// fallback it must also be a real directory owned by this user with no access for others,
/// since anyone could have created it first. A socket file left by a daemon that died is
/// replaced; one that still accepts connections is never stolen.
enum SocketPath {
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    static func prepare(_ path: String, requirePrivateParent: Bool, uid: UInt32, group: EventLoopGroup) async throws {
        guard path.utf8.count < 108 else { throw StartError(description: "socket path \(path) is longer than 107 bytes") }
        let parent = SystemText.parentDirectory(of: path)
        if !FileManager.default.fileExists(atPath: parent) {
            do {
                try FileManager.default.createDirectory(
                    atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            } catch {
                throw StartError(description: "cannot create socket directory \(parent): \(SystemText.reason(error))")
            }
        }
        if requirePrivateParent {
            var info = stat()
            guard lstat(parent, &info) == 0 else {
                throw StartError(description: "cannot inspect socket directory \(parent): \(String(cString: strerror(errno)))")
            }
            guard info.st_mode & S_IFMT == S_IFDIR, info.st_uid == uid, info.st_mode & 0o077 == 0 else {
                throw StartError(description:
                    "socket directory \(parent) must be a directory owned by uid \(uid) with mode 0700; refusing to use it")
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw StartError(description: "\(path) exists and is not a socket; refusing to replace it")
        }
        let live: Bool
        do {
            let channel = try await ClientBootstrap(group: group).connect(unixDomainSocketPath: path).get()
            try? await channel.close()
            live = true
        } catch {
            live = false
        }
        if live {
            throw StartError(description: "another defaultsd is already listening on \(path)")
        }
        unlink(path)
    }
}
