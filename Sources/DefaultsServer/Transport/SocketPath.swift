import DefaultsCore
import FoundationEssentials
import Glibc
import NIOCore
import NIOPosix

/// Prepares the path the daemon listens on.
///
/// The directory holding the socket is created mode 0700. The daemon listens only where its
/// clients would connect: a directory nobody but this user and root can change, all the way up
/// (``SocketTrust/directoryProblem(ofSocket:uid:)``, the clients' own rule), which matters most
/// for the shared-`/tmp` fallback, since anyone could have created it first. A socket file left
/// by a daemon that died is replaced; one that still accepts connections is never stolen.
enum SocketPath {
    struct StartError: Error, CustomStringConvertible {
        var description: String
    }

    static func prepare(_ path: String, uid: UInt32, group: EventLoopGroup) async throws {
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
        if let problem = SocketTrust.directoryProblem(ofSocket: path, uid: uid) {
            throw StartError(description:
                "socket directory \(parent) is not safe: \(problem), so another user could stand in for defaultsd; refusing to listen there")
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
