import FoundationEssentials
import Glibc

/// Text for the few things FoundationEssentials does not word for us. The daemon and `defaults` link
/// FoundationEssentials only (see ARCHITECTURE.md, "Footprint"), which has no
/// `localizedDescription`, no `String(format:)` and no `NSString` path methods.
package enum SystemText {
    /// The reason a file operation failed, as the C library words it ("No such file or
    /// directory"), else the error's own description.
    ///
    /// ```swift
    /// SystemText.reason(POSIXError(.ENOENT))
    /// // "No such file or directory"
    /// ```
    package static func reason(_ error: any Error) -> String {
        if let posix = error as? POSIXError { return String(cString: strerror(posix.code.rawValue)) }
        if let cocoa = error as? CocoaError {
            if let underlying = cocoa.userInfo["NSUnderlyingError"] as? any Error { return reason(underlying) }
            return "error \(cocoa.code.rawValue)"
        }
        if let described = error as? any CustomStringConvertible { return described.description }
        return String(describing: error)
    }

    /// At most `maximumCharacters` of `text` for a log line, and how much was left out: a peer's
    /// message is logged as evidence, never whole, so that one answer cannot fill a journal.
    ///
    /// ```swift
    /// SystemText.excerpt(String(repeating: "x", count: 10_000))
    /// // "xxx…xxx… (9800 more characters)"
    /// ```
    package static func excerpt(_ text: String, maximumCharacters: Int = 200) -> String {
        guard text.count > maximumCharacters else { return text }
        return text.prefix(maximumCharacters) + "… (\(text.count - maximumCharacters) more characters)"
    }

    /// The C library's words for an `errno` value ("Permission denied").
    package static func errorMessage(_ code: Int32) -> String { String(cString: strerror(code)) }

    /// C's `printf` formatting (`vsnprintf`), for the fixed formats macOS's output follows:
    /// `SystemText.format("%.16g", 0.1)` → `"0.1"`. Only C types (`Int32`, `Int64`, `Double`, ...)
    /// may be passed, as with `printf`.
    package static func format(_ format: String, _ arguments: any CVarArg...) -> String {
        withVaList(arguments) { list in
            var buffer = [CChar](repeating: 0, count: 128)
            let needed = Int(vsnprintf(&buffer, buffer.count, format, list))
            guard needed >= buffer.count else { return text(of: buffer) }
            return withVaList(arguments) { again in
                buffer = [CChar](repeating: 0, count: needed + 1)
                _ = vsnprintf(&buffer, buffer.count, format, again)
                return text(of: buffer)
            }
        }
    }

    /// The UTF-8 text of a C string held in an array, up to its terminating zero.
    private static func text(of buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Two lower-case hex digits per byte: `[0x0a, 0xff]` → `"0aff"`.
    package static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The directory part of a path, as `NSString.deletingLastPathComponent` gives it:
    /// `/a/b` → `/a`, `/a` → `/`, `a` → `""`; trailing slashes are ignored.
    package static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "" }
        var parent = trimmed[..<slash]
        while parent.count > 1, parent.hasSuffix("/") { parent = parent.dropLast() }
        return parent.isEmpty ? "/" : String(parent)
    }

    /// `text` without white space (and newlines) at either end.
    package static func trimmingWhitespace(_ text: String) -> String {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
            let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return "" }
        return String(text[first...last])
    }

    /// Whether `path` names a directory, following symbolic links.
    package static func isDirectory(_ path: String) -> Bool {
        var isDirectory = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory
    }
}
