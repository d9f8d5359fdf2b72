import Glibc
import GlibcExtras

/// Linux's `renameat2` flags: swap two paths in one step, or rename only onto a free name. With
/// them a writer learns what its rename displaced, as one atomic act, instead of checking the
/// path first and renaming a moment later.
///
/// Swift's Glibc module does not import `renameat2` (glibc declares it only under
/// `_GNU_SOURCE`): `GlibcExtras` declares it, and it is linked from glibc (2.28 and later), in
/// a static executable too.
///
/// ```swift
/// switch AtomicRename.exchange(temporary, path) {
/// case .done: inspect(temporary)            // it now holds what was at `path`
/// case .missing: place(temporary, at: path) // nothing at `path` to swap with
/// case .unsupported: rename(temporary, path)
/// case .failed(let code): report(code)
/// }
/// ```
package enum AtomicRename {
    package enum Outcome: Equatable {
        case done
        /// One of the two paths does not exist (`ENOENT`).
        case missing
        /// For `placeIfFree`: the destination exists (`EEXIST`).
        case taken
        /// The file system (or the C library) cannot do it; a plain `rename` is the fallback.
        case unsupported
        case failed(errno: Int32)
    }

    /// Swaps the files at `first` and `second`: each path then names what the other did.
    package static func exchange(_ first: String, _ second: String) -> Outcome {
        call(first, second, flags: 2)  // RENAME_EXCHANGE
    }

    /// Renames `source` to `destination` only when nothing is at `destination`.
    package static func placeIfFree(_ source: String, at destination: String) -> Outcome {
        call(source, destination, flags: 1)  // RENAME_NOREPLACE
    }

    private static func call(_ source: String, _ destination: String, flags: UInt32) -> Outcome {
        while true {
            if GlibcExtras.renameat2(AT_FDCWD, source, AT_FDCWD, destination, flags) == 0 { return .done }
            switch errno {
            case EINTR: continue
            case ENOENT: return .missing
            case EEXIST: return .taken
            case EINVAL, ENOSYS, EOPNOTSUPP: return .unsupported
            case let code: return .failed(errno: code)
            }
        }
    }
}
