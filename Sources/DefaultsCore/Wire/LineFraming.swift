#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The protocol's framing, one rule for the daemon's framer and the blocking `LineSocket`: a line
/// ends at `\n`, and a `\r` just before it is not part of the line. (The client library's
/// connection and the etcd watch use NIOExtras' `LineBasedFrameDecoder`, which cuts by the same
/// rule.)
///
/// ```swift
/// bytes.withUnsafeBytes { raw in LineFraming.newline(in: raw, from: 0) }   // index of the first "\n"
/// LineFraming.contentLength(of: raw, upTo: 14)                             // 13 when raw[13] is "\r"
/// ```
public enum LineFraming {
    public static let newline = UInt8(ascii: "\n")
    public static let carriageReturn = UInt8(ascii: "\r")

    /// The index of the first newline at or after `offset`, or nil. Found with `memchr`, which
    /// reads many bytes at a time.
    @inlinable
    public static func newline(in bytes: UnsafeRawBufferPointer, from offset: Int) -> Int? {
        guard bytes.count > offset, let base = bytes.baseAddress,
            let found = memchr(base + offset, Int32(newline), bytes.count - offset)
        else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// The length of the line that ends (without its newline) at `end`: `end - start`, less a
    /// final `\r`.
    @inlinable
    public static func contentLength(of bytes: UnsafeRawBufferPointer, from start: Int = 0, upTo end: Int) -> Int {
        end > start && bytes[end - 1] == carriageReturn ? end - start - 1 : end - start
    }
}
