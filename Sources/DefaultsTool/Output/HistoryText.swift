import DefaultsCore
import FoundationEssentials
import Glibc

/// The lines `history` and `blame` print for the change journal's entries: local time, writer,
/// the domain (when `history` names none), the key, and `old → new`, the values on one line in
/// `defaults` syntax (``OldStyleText/oneLine(_:)``). Columns are two spaces apart, each as wide as
/// its widest cell, the last one left as it is.
///
/// ```swift
/// HistoryText.lines(entries, showingDomain: false)
/// // 2026-11-27 10:00:00  defaults  volume  3 → 7
/// // 2026-11-27 10:02:41  file      mode    dark → "high contrast"
/// ```
enum HistoryText {
    /// One line per entry, in the order given. Everything but the arrow is written in
    /// non-lossy ASCII, as all of `defaults`' output is; the text is printed as it is.
    static func lines(_ entries: [JournalEntry], showingDomain: Bool) -> String {
        let rows = entries.map { entry in
            [LocalTime.format(entry.time), NonLossyASCII.encode(entry.origin.writerName)]
                + (showingDomain ? [NonLossyASCII.encode(entry.domain.description)] : [])
                + [NonLossyASCII.encode(OldStyleText.quoted(entry.key)), change(entry.change)]
        }
        guard let columns = rows.first?.count else { return "" }
        let widths = (0..<(columns - 1)).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            let padded = (0..<(columns - 1)).map { row[$0] + String(repeating: " ", count: widths[$0] - row[$0].count) }
            return (padded + [row[columns - 1]]).joined(separator: "  ") + "\n"
        }.joined()
    }

    /// `old → new`, `(absent)` standing for a missing value; a secure key's values are never recorded.
    static func change(_ change: JournalEntry.Change) -> String {
        switch change {
        case .secure: "(secure value, not recorded)"
        case .values(let old, let new): value(old) + " → " + value(new)
        }
    }

    private static func value(_ value: PlistValue?) -> String {
        value.map { NonLossyASCII.encode(OldStyleText.oneLine($0)) } ?? "(absent)"
    }

    /// The first line of `blame`: who made the change and when, then, in parentheses, what else
    /// the origin tells of a program (its process, user and executable) and whether the change was
    /// an undo. `defaults, 2026-11-27 10:00:00 (pid 4242, uid 1000, /usr/bin/defaults)`.
    static func author(of entry: JournalEntry) -> String {
        let origin = entry.origin
        var details: [String] = []
        if origin.source == .connection {
            details = ["pid \(origin.pid)", "uid \(origin.uid)"]
            if let program = origin.executable ?? origin.command { details.append(program) }
        } else if origin.source == .roaming {
            details.append("roaming")
        }
        if let undone = origin.revert { details.append("an undo back to before change \(undone)") }
        let said = details.isEmpty ? "" : " (" + details.joined(separator: ", ") + ")"
        return NonLossyASCII.encode(origin.writerName + ", " + LocalTime.format(entry.time) + said) + "\n"
    }
}

/// Times as `history` shows them and `--since` and `--to` take them: `YYYY-MM-DD HH:MM:SS` in the
/// machine's time zone (`TZ`, else /etc/localtime).
enum LocalTime {
    /// `2026-11-27 10:00:00`, the fraction of the second dropped.
    static func format(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        localtime_r(&seconds, &parts)
        return SystemText.format(
            "%04d-%02d-%02d %02d:%02d:%02d", parts.tm_year + 1900, parts.tm_mon + 1, parts.tm_mday,
            parts.tm_hour, parts.tm_min, parts.tm_sec)
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
