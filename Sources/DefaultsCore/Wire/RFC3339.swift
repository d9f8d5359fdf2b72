import FoundationEssentials

/// RFC 3339 timestamps for `$date`, in UTC with the fraction kept.
///
/// Written by hand because `ISO8601DateFormatter` keeps at most milliseconds, and
/// the civil-calendar arithmetic below is exact and allocation-free.
///
/// ```swift
/// RFC3339.format(RFC3339.parse("2026-11-21T10:00:00.250Z")!) // "2026-11-21T10:00:00.250Z"
/// ```
public enum RFC3339 {
    /// Formats with no fraction for whole seconds, milliseconds when exact, else microseconds.
    public static func format(_ date: Date) -> String {
        let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
        let total = Int64(max(min(micros, 253_402_300_799_999_000.0), -62_135_596_800_000_000.0))
        var seconds = total / 1_000_000
        var fraction = total % 1_000_000
        if fraction < 0 { fraction += 1_000_000; seconds -= 1 }
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 { secondOfDay += 86_400; days -= 1 }
        let (year, month, day) = civil(fromDays: days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T"
        text += pad(secondOfDay / 3600, 2) + ":" + pad(secondOfDay / 60 % 60, 2) + ":" + pad(secondOfDay % 60, 2)
        if fraction != 0 {
            text += fraction % 1000 == 0 ? "." + pad(fraction / 1000, 3) : "." + pad(fraction, 6)
        }
        return text + "Z"
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `t`, `z` and a space separator are accepted too.
    public static func parse(_ text: String) -> Date? {
        let b = Array(text.utf8)
        var i = 0
        func number(_ count: Int) -> Int64? {
            guard i + count <= b.count else { return nil }
            var value: Int64 = 0
            for k in i..<(i + count) {
                guard b[k] >= 48, b[k] <= 57 else { return nil }
                value = value * 10 + Int64(b[k] - 48)
            }
            i += count
            return value
        }
        func expect(_ c: UInt8) -> Bool {
            guard i < b.count, b[i] == c else { return false }
            i += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2) else { return nil }
        guard i < b.count, [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")].contains(b[i]) else { return nil }
        i += 1
        guard let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2) else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 61, year >= 1
        else { return nil }
        var fraction = 0.0
        if i < b.count, b[i] == UInt8(ascii: ".") {
            i += 1
            var scale = 0.1
            let start = i
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                fraction += Double(b[i] - 48) * scale
                scale /= 10
                i += 1
            }
            if i == start { return nil }
        }
        var offset: Int64 = 0
        guard i < b.count else { return nil }
        switch b[i] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"): i += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign: Int64 = b[i] == UInt8(ascii: "+") ? 1 : -1
            i += 1
            guard let oh = number(2), expect(58), let om = number(2), oh < 24, om < 60 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        default: return nil
        }
        guard i == b.count else { return nil }
        let seconds = days(fromCivil: year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    // Howard Hinnant's days_from_civil / civil_from_days.
    public static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    public static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
