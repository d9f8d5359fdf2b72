import FoundationEssentials
import Glibc

/// Reads a whole file that a person, another program or an attacker may have put anywhere:
/// opened without blocking (`O_NONBLOCK`: a FIFO or a device never holds the caller), checked
/// with `fstat` on the descriptor read from to be a regular file of at most `maximumBytes`, then
/// read up to one byte past that (a file that grows while it is read is refused too). Symbolic
/// links are followed: dotfile managers lay preference files out as links.
///
/// ```swift
/// switch RegularFile.read(atPath: path, maximumBytes: PropertyListLimits.maximumFileBytes) {
/// case .success(let file): use(file.data)
/// case .failure(.missing): startEmpty()
/// case .failure(let failure): log(failure)   // "is a FIFO, not a regular file"
/// }
/// ```
package enum RegularFile {
    package struct Contents {
        package var data: Data
        /// The status of the descriptor read from: the version of the file these bytes are.
        package var status: stat
    }

    package enum Failure: Error, Equatable, CustomStringConvertible {
        case missing
        /// A FIFO, a device, a socket or a directory, named as `kind`.
        case notARegularFile(kind: String)
        case tooLarge(bytes: Int, maximum: Int)
        case unreadable(errno: Int32)

        package var description: String {
            switch self {
            case .missing: "does not exist"
            case .notARegularFile(let kind): "is \(kind), not a regular file"
            case .tooLarge(let bytes, let maximum): "is \(bytes) bytes; the most read is \(maximum)"
            case .unreadable(let code): "cannot be read: \(SystemText.errorMessage(code))"
            }
        }
    }

    package static func read(atPath path: String, maximumBytes: Int) -> Result<Contents, Failure> {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)
        guard fd >= 0 else {
            // ENXIO: a socket, or a FIFO's writing end, which O_NONBLOCK refuses to wait for.
            switch errno {
            case ENOENT, ENOTDIR: return .failure(.missing)
            case ENXIO: return .failure(.notARegularFile(kind: "a socket or device"))
            case let code: return .failure(.unreadable(errno: code))
            }
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { return .failure(.unreadable(errno: errno)) }
        guard status.st_mode & S_IFMT == S_IFREG else { return .failure(.notARegularFile(kind: kind(of: status.st_mode))) }
        guard Int(status.st_size) <= maximumBytes else {
            return .failure(.tooLarge(bytes: Int(status.st_size), maximum: maximumBytes))
        }
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while data.count <= maximumBytes {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, min($0.count, maximumBytes + 1 - data.count)) }
            if count > 0 {
                data.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                return .success(Contents(data: data, status: status))
            } else if errno != EINTR {
                return .failure(.unreadable(errno: errno))
            }
        }
        return .failure(.tooLarge(bytes: data.count, maximum: maximumBytes))
    }

    /// How a file that is not a regular file is named in messages: "a FIFO", "a directory"…
    package static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        default: "not a regular file"
        }
    }
}
