import DefaultsCore
import FoundationEssentials
import Glibc

/// The old-style (OpenStep) text that macOS `defaults read` prints.
///
/// Foundation on Linux crashes when asked to write the OpenStep format, and its `description`
/// differs from Apple's, so the layout is reproduced here from macOS's output:
/// containers indent four spaces per level and a nested container keeps its own indent after
/// `key = ` (the wide gap of `"persistent-apps" =     (`); dictionary keys are sorted; a string
/// is bare only when it is non-empty ASCII letters and digits; reals print with `%.16g`, bools
/// as `1`/`0`, dates as `2026-11-21 10:00:00 +0000`, data as `{length = 4, bytes = 0x01020304}`.
/// The whole text then goes through `NonLossyASCII`, as Apple's printer does.
///
/// ```swift
/// OldStyleText.describe(["warpFactor": 5.5, "rank": "Ensign"])
/// // {\n    rank = Ensign;\n    warpFactor = "5.5";\n}
/// ```
public enum OldStyleText {
    /// A value as `defaults read` prints it inside or as a container (before `NonLossyASCII`).
    /// `annotations` adds a `// comment` after a top-level dictionary member (`read-effective`
    /// names each key's layer so); the text stays an old-style property list.
    public static func describe(_ value: PlistValue, level: Int = 0, annotations: [String: String] = [:]) -> String {
        let indent = String(repeating: " ", count: 4 * level)
        let inner = String(repeating: " ", count: 4 * (level + 1))
        switch value {
        case .dictionary(let members):
            var text = indent + "{\n"
            for (key, member) in members.sorted(by: { codeUnitOrder($0.key, $1.key) }) {
                text += inner + quoted(key) + " = " + element(member, level: level + 1) + ";"
                    + (annotations[key].map { "  // " + $0 } ?? "") + "\n"
            }
            return text + indent + "}"
        case .array(let elements):
            var text = indent + "(\n"
            text += elements.map { inner + element($0, level: level + 1) }.joined(separator: ",\n")
            if !elements.isEmpty { text += "\n" }
            return text + indent + ")"
        case .data(let d):
            return data(d)  // never quoted, as `read` prints it
        default:
            return quoted(plain(value))
        }
    }

    /// A value on one line, in the syntax of ``describe(_:level:annotations:)``, as `history` and
    /// `undo` print values: `(a, "b c", 3)`, `{k = v; n = 1;}`; a string bare only when it is
    /// letters and digits, data as `read` prints it.
    public static func oneLine(_ value: PlistValue) -> String {
        switch value {
        case .dictionary(let members):
            let entries = members.sorted(by: { codeUnitOrder($0.key, $1.key) }).map { quoted($0.key) + " = " + oneLine($0.value) + ";" }
            return "{" + entries.joined(separator: " ") + "}"
        case .array(let elements):
            return "(" + elements.map(oneLine).joined(separator: ", ") + ")"
        case .data(let d):
            return data(d)
        default:
            return quoted(plain(value))
        }
    }

    /// A scalar without quotes, as `defaults read <domain> <key>` prints it.
    public static func plain(_ value: PlistValue) -> String {
        switch value {
        case .string(let s): return s
        case .integer(let i): return String(i)
        case .real(let d): return real(d)
        case .bool(let b): return b ? "1" : "0"
        case .date(let d): return date(d)
        case .data(let d): return data(d)
        case .array, .dictionary: return describe(value)
        }
    }

    /// Data was never quoted; everything else goes through the quoting rule.
    private static func element(_ value: PlistValue, level: Int) -> String {
        switch value {
        case .dictionary, .array: return describe(value, level: level)
        case .data(let d): return data(d)
        default: return quoted(plain(value))
        }
    }

    /// Bare when non-empty and only ASCII letters and digits; otherwise quoted with escapes.
    public static func quoted(_ string: String) -> String {
        if !string.isEmpty && string.utf8.allSatisfy({ isASCIIAlphanumeric($0) }) { return string }
        var text = "\""
        for unit in string.utf16 {
            switch unit {
            case 0x22: text += "\\\""
            case 0x5C: text += "\\\\"
            case 0x0A: text += "\\n"
            case 0x09: text += "\\t"
            case 0x0D: text += "\\r"
            case 0x20...0x7E: text.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            default: text += "\\U" + hex4(unit)
            }
        }
        return text + "\""
    }

    /// `%.16g`, as NSNumber describes a double: `5.0` → `5`, `0.1` → `0.1`.
    public static func real(_ value: Double) -> String { SystemText.format("%.16g", value) }

    /// `YYYY-MM-DD HH:MM:SS +0000`, in UTC, the fraction dropped.
    public static func date(_ value: Date) -> String {
        let seconds = Int64(value.timeIntervalSince1970.rounded(.down))
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (y, m, d) = RFC3339.civil(fromDays: days)
        return SystemText.format("%04lld-%02lld-%02lld %02lld:%02lld:%02lld +0000", y, m, d,
                      secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60)
    }

    /// `{length = 4, bytes = 0x01020304}`; beyond 24 bytes the first 16 and the last 8, in groups of 4.
    public static func data(_ value: Data) -> String {
        let bytes = [UInt8](value)
        func hex(_ slice: ArraySlice<UInt8>) -> String { SystemText.hex(slice) }
        guard bytes.count > 24 else { return "{length = \(bytes.count), bytes = 0x\(hex(bytes[...]))}" }
        let head = stride(from: 0, to: 16, by: 4).map { hex(bytes[$0..<($0 + 4)]) }.joined(separator: " ")
        let tail = stride(from: bytes.count - 8, to: bytes.count, by: 4).map { hex(bytes[$0..<($0 + 4)]) }.joined(separator: " ")
        return "{length = \(bytes.count), bytes = 0x\(head) ... \(tail) }"
    }

    /// Keys sorted as NSString `compare:` does with no options: by UTF-16 code unit.
    static func codeUnitOrder(_ a: String, _ b: String) -> Bool { a.utf16.lexicographicallyPrecedes(b.utf16) }

    private static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
    }

    private static func hex4(_ unit: UInt16) -> String {
        let digits = String(unit, radix: 16)
        return String(repeating: "0", count: 4 - digits.count) + digits
    }
}

/// The encoding macOS `defaults` applies to everything it prints on standard output
/// (`NSNonLossyASCIIStringEncoding`): printable ASCII and `\n` `\r` `\t` pass, a backslash
/// doubles, other characters below U+0100 become `\` and three octal digits, the rest `\u`
/// and four hex digits per UTF-16 unit.
public enum NonLossyASCII {
    public static func encode(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for unit in text.utf16 {
            switch unit {
            case 0x5C: result += "\\\\"
            case 0x20...0x7E, 0x0A, 0x0D, 0x09: result.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
            case 0..<0x100:
                let octal = String(unit, radix: 8)
                result += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            default:
                let hex = String(unit, radix: 16)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            }
        }
        return result
    }
}
