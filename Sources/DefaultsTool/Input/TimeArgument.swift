import DefaultsCore
import FoundationEssentials

/// A time as `history --since` and `undo --to` take it: a duration back from now (`30s`, `15m`,
/// `1h`, `2d`), an RFC 3339 time (`2026-11-27T09:00:00Z`, `2026-11-27T10:00:00+01:00`), or a
/// local time (`2026-11-27`, `2026-11-27 09:00`, `2026-11-27 09:00:30`).
///
/// ```swift
/// TimeArgument.parse("1h", now: now)                        // now, less an hour
/// TimeArgument.parse("2026-11-27T09:00:00Z", now: now)      // that moment
/// ```
enum TimeArgument {
    /// What the flags take, as a message names it.
    static let accepted = "a duration (30s, 15m, 1h, 2d) or a time (2026-11-27 09:00, 2026-11-27T09:00:00Z)"

    /// Seconds per unit of a duration.
    private static let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86_400]

    /// The time `text` names; nil when it names none.
    static func parse(_ text: String, now: Date) -> Date? {
        if let unit = text.last, let seconds = units[unit] {
            let count = text.dropLast()
            guard !count.isEmpty, count.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Double(count) else { return nil }
            return now.addingTimeInterval(-number * seconds)
        }
        return RFC3339.parse(text) ?? LocalTime.parse(text)
    }
}
