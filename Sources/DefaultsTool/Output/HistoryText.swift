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
