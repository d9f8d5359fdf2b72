/// The text encodings Apple's property-list and `.strings` readers recognise (old-style text for
/// ``PropertyListFile``, `.strings` files for the Settings bundles), detected the way CoreFoundation does: a byte-order mark, else a zero in the first two bytes means UTF-16
/// without a mark, else UTF-8.
///
/// ```swift
/// StringsFile.read(bytes, path: "en.lproj/Root.strings").file.format // .text(.utf16LEWithBOM)
/// ```
public enum TextEncoding: String, Sendable, Hashable, CaseIterable {
    case utf8 = "UTF-8"
    case utf8WithBOM = "UTF-8+BOM"
    case utf16LEWithBOM = "UTF-16LE+BOM"
    case utf16BEWithBOM = "UTF-16BE+BOM"
    case utf16LE = "UTF-16LE"
    case utf16BE = "UTF-16BE"
    case utf32LEWithBOM = "UTF-32LE+BOM"
    case utf32BEWithBOM = "UTF-32BE+BOM"

    /// The encoding of `bytes` and the length of its byte-order mark.
    public static func detect(_ bytes: [UInt8]) -> (encoding: TextEncoding, markLength: Int) {
        func starts(_ prefix: [UInt8]) -> Bool {
            bytes.count >= prefix.count && Array(bytes.prefix(prefix.count)) == prefix
        }
        if starts([0x00, 0x00, 0xFE, 0xFF]) { return (.utf32BEWithBOM, 4) }
        if starts([0xFF, 0xFE, 0x00, 0x00]) { return (.utf32LEWithBOM, 4) }
        if starts([0xEF, 0xBB, 0xBF]) { return (.utf8WithBOM, 3) }
        if starts([0xFF, 0xFE]) { return (.utf16LEWithBOM, 2) }
        if starts([0xFE, 0xFF]) { return (.utf16BEWithBOM, 2) }
        if bytes.count >= 2 && bytes[0] == 0 { return (.utf16BE, 0) }
        if bytes.count >= 2 && bytes[1] == 0 { return (.utf16LE, 0) }
        return (.utf8, 0)
    }

    /// Decodes `bytes`, or nil when they are not valid text in the detected encoding (a lone
    /// surrogate, a truncated UTF-8 sequence): Apple's readers refuse such a file rather than guess.
    public static func decode(_ bytes: [UInt8]) -> (text: String, encoding: TextEncoding)? {
        let (encoding, markLength) = detect(bytes)
        let body = bytes.dropFirst(markLength)
        switch encoding {
        case .utf8, .utf8WithBOM:
            return String(validating: body, as: UTF8.self).map { ($0, encoding) }
        case .utf16LEWithBOM, .utf16LE, .utf16BEWithBOM, .utf16BE:
            guard body.count % 2 == 0 else { return nil }
            let bigEndian = encoding == .utf16BE || encoding == .utf16BEWithBOM
            var units: [UInt16] = []
            units.reserveCapacity(body.count / 2)
            var index = body.startIndex
            while index < body.endIndex {
                let first = UInt16(body[index])
                let second = UInt16(body[index + 1])
                units.append(bigEndian ? first << 8 | second : second << 8 | first)
                index += 2
            }
            return String(validating: units, as: UTF16.self).map { ($0, encoding) }
        case .utf32LEWithBOM, .utf32BEWithBOM:
            guard body.count % 4 == 0 else { return nil }
            var units: [UInt32] = []
            units.reserveCapacity(body.count / 4)
            var index = body.startIndex
            while index < body.endIndex {
                let b = (0..<4).map { UInt32(body[index + $0]) }
                units.append(
                    encoding == .utf32BEWithBOM
                        ? b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3] : b[3] << 24 | b[2] << 16 | b[1] << 8 | b[0])
                index += 4
            }
            return String(validating: units, as: UTF32.self).map { ($0, encoding) }
        }
    }
}
