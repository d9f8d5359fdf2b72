import DefaultsCore
import Foundation
import Logging

/// How the Settings app reads a file it serves or reads from disk: a bundle's image, a desktop
/// entry, an icon. Any of them can be anything the person, an app's installer or another program
/// put there, so each goes through ``RegularFile``: opened without blocking and read only when
/// it is a regular file within its cap. A FIFO, a link to `/dev/zero`, a folder or a huge file
/// then never holds a handler or fills memory. A file refused is answered as missing (`404` for
/// an image), and logged by name, so the person can find why the page does not show it.
///
/// ```swift
/// DiskFile.read(folder + "/turtle.png", maximumBytes: SettingsAPI.maximumImageBytes, logger: logger)
/// // nil, logged: "/…/turtle.png is a FIFO, not a regular file; answered as missing"
/// ```
enum DiskFile {
    /// The bytes of `path`; nil when it is missing, or refused (logged).
    static func read(_ path: String, maximumBytes: Int, logger: Logger) -> Data? {
        switch RegularFile.read(atPath: path, maximumBytes: maximumBytes) {
        case .success(let file):
            return file.data
        case .failure(.missing):
            return nil
        case .failure(let failure):
            refused(path, "\(failure)", logger: logger)
            return nil
        }
    }

    /// Whether `path` is there as a regular file of at most `maximumBytes`, by its status alone,
    /// which never blocks or opens it: a lookup among candidates. The read checks again.
    static func isServable(_ path: String, maximumBytes: Int, logger: Logger) -> Bool {
        var status = stat()
        guard stat(path, &status) == 0 else { return false }
        guard status.st_mode & S_IFMT == S_IFREG else {
            refused(path, "is not a regular file", logger: logger)
            return false
        }
        guard Int(status.st_size) <= maximumBytes else {
            refused(path, "\(RegularFile.Failure.tooLarge(bytes: Int(status.st_size), maximum: maximumBytes))", logger: logger)
            return false
        }
        return true
    }

    private static func refused(_ path: String, _ reason: String, logger: Logger) {
        logger.notice("\(path) \(reason); answered as missing")
    }
}
