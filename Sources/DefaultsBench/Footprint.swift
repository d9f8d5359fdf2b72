import Foundation

/// Resident memory of a process: `VmRSS`, and its proportional share `Pss` (shared pages divided
/// among the processes that map them), both in KiB.
struct Footprint {
    var rss = 0
    var pss = 0

    init(pid: pid_t) {
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        let rollup = (try? String(contentsOfFile: "/proc/\(pid)/smaps_rollup", encoding: .utf8)) ?? ""
        func field(_ name: String, in text: String) -> Int {
            let line = text.split(separator: "\n").first { $0.hasPrefix(name) } ?? ""
            return Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0
        }
        rss = field("VmRSS:", in: status)
        pss = field("Pss:", in: rollup)
    }

    static func mebi(_ kib: Int) -> String { String(format: "%.1f MiB", Double(kib) / 1024) }
}
