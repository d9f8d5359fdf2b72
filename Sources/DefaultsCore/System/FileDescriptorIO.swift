import FoundationEssentials
import Glibc

/// Whole reads and writes on an open file descriptor, retried on `EINTR` and short counts.
/// By hand because FoundationEssentials, which the daemon and `defaults` link instead of full
/// Foundation (ARCHITECTURE.md, "Footprint"), has no `FileHandle`.
///
/// ```swift
/// FileDescriptorIO.write("done\n", to: STDOUT_FILENO)
/// let input = FileDescriptorIO.readToEnd(STDIN_FILENO) ?? Data()
/// ```
package enum FileDescriptorIO {
    /// Everything left to read, or nil with `errno` set.
    package static func readToEnd(_ fd: Int32) -> Data? {
        var data = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                data.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                return data
            } else if errno != EINTR {
                return nil
            }
        }
    }

    /// Writes all of `text`; false (with `errno` set) if the descriptor refuses it.
    @discardableResult
    package static func write(_ text: String, to fd: Int32) -> Bool {
        var text = text
        return text.withUTF8 { write($0, to: fd) }
    }

    /// Writes all of `data`; false (with `errno` set) if the descriptor refuses it.
    @discardableResult
    package static func write(_ data: Data, to fd: Int32) -> Bool {
        data.withUnsafeBytes { write($0.bindMemory(to: UInt8.self), to: fd) }
    }

    /// Writes all of `bytes`; false (with `errno` set) if the descriptor refuses them.
    @discardableResult
    package static func write(_ bytes: UnsafeBufferPointer<UInt8>, to fd: Int32) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
            if count >= 0 {
                offset += count
            } else if errno != EINTR {
                return false
            }
        }
        return true
    }
}
