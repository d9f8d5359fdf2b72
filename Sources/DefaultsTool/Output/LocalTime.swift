import DefaultsCore
import FoundationEssentials
import Glibc

/// Times as `history` shows them, `--since` and `--to` take them, and the log stamps them: `YYYY-MM-DD HH:MM:SS` in the
/// machine's time zone (`TZ`, else /etc/localtime).
enum LocalTime {
    /// `2026-11-27 10:00:00`, the fraction of the second dropped; with `milliseconds`,
    /// `2026-11-27 10:00:00.250`, as macOS's `NSLog` stamps a line.
    static func format(_ date: Date, milliseconds: Bool = false) -> String {
        let since1970 = date.timeIntervalSince1970
        var seconds = time_t(since1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        let text = SystemText.format(
            "%04d-%02d-%02d %02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec)
        guard milliseconds else { return text }
        return text + SystemText.format(".%03d", Int32(min((since1970 - Double(seconds)) * 1000, 999)))
    }

    /// `YYYY-MM-DD`, `YYYY-MM-DD HH:MM` or `YYYY-MM-DD HH:MM:SS` (a `T` may stand for the space),
    /// in local time; nil for anything else, or a day the calendar does not have.
    static func parse(_ text: String) -> Date? {
        let halves = text.split(omittingEmptySubsequences: false) { $0 == " " || $0 == "T" }
        guard halves.count == 1 || halves.count == 2,
            let day = numbers(halves[0], separator: "-", widths: [4, 2, 2])
        else { return nil }
        var clock: [Int32] = [0, 0, 0]
        if halves.count == 2 {
            guard let read = numbers(halves[1], separator: ":", widths: [2, 2]) ?? numbers(halves[1], separator: ":", widths: [2, 2, 2])
            else { return nil }
            clock = read + (read.count == 2 ? [0] : [])
        }
        guard (1...12).contains(day[1]), (1...31).contains(day[2]), clock[0] < 24, clock[1] < 60, clock[2] < 61 else { return nil }
        var parts = tm()
        parts.tm_year = day[0] - 1900
        parts.tm_mon = day[1] - 1
        parts.tm_mday = day[2]
        parts.tm_hour = clock[0]
        parts.tm_min = clock[1]
        parts.tm_sec = clock[2]
        parts.tm_isdst = -1  // whether summer time is in force then is for the time zone to say
        let seconds = mktime(&parts)
        // mktime carries a day past the month's end into the next month; that day does not exist.
        guard parts.tm_mday == day[2] else { return nil }
        return Date(timeIntervalSince1970: Double(seconds))
    }

    /// The decimal fields of `text` between `separator`s, each exactly as wide as `widths` says.
    private static func numbers(_ text: Substring, separator: Character, widths: [Int]) -> [Int32]? {
        let fields = text.split(separator: separator, omittingEmptySubsequences: false)
        guard fields.count == widths.count else { return nil }
        var values: [Int32] = []
        for (field, width) in zip(fields, widths) {
            guard field.count == width, field.allSatisfy({ $0.isASCII && $0.isNumber }), let value = Int32(field) else { return nil }
            values.append(value)
        }
        return values
    }
}
