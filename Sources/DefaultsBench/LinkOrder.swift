import Foundation

/// The functions a request runs through, read from callgrind's dumps, for the release link to
/// lay out next to each other (`bench/request-path.order`, which the Makefile hands to lld).
///
/// A request runs through more code than the 32 KiB level-1 instruction cache holds, so every
/// 64-byte line of it that the request touches is fetched again at every request. Laid out in
/// the order the compiler emits them, the functions a request calls sit among functions it never
/// calls, and each one's first and last lines are partly someone else's: the request touches
/// about half as many lines again as its code needs. Packed together they share lines.
///
/// ```sh
/// .build/release/defaultsd-bench --write-link-order bench/request-path.order
/// ```
enum LinkOrder {
    /// The mangled names of the Swift functions called at least once for every two requests in
    /// one of `dumps` (each counts `requests` requests of one kind), sorted. The Swift runtime's
    /// C++ and libc's functions are left out: listed too, they took 12 lines off a set's code
    /// and made the idle daemon 0.7 MiB larger (docs/PERFORMANCE.md).
    static func functions(inDumps dumps: [String], requests: Int) throws -> [String] {
        var hot = Set<String>()
        for dump in dumps {
            for (name, count) in try callCounts(of: String(contentsOfFile: dump, encoding: .utf8))
            where count >= requests / 2 && name.hasPrefix("$s") {
                hot.insert(name)
            }
        }
        return hot.sorted()
    }

    /// How often each function was called, by symbol: callgrind's `calls=` lines, each under the
    /// `cfn=` line that names the function called. Names are given once, with their number, and
    /// then by number alone (name compression); a recursive call's deeper levels carry a `'2`,
    /// `'3`… suffix, and count for the function itself.
    static func callCounts(of text: String) -> [String: Int] {
        var names: [Substring: Substring] = [:]
        var callee: Substring?
        var counts: [String: Int] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("fn=") || line.hasPrefix("cfn=") {
                let specification = line.drop { $0 != "=" }.dropFirst()
                var name: Substring? = specification
                if specification.hasPrefix("("), let close = specification.firstIndex(of: ")") {
                    let number = specification[...close]
                    let rest = specification[specification.index(after: close)...].drop { $0 == " " }
                    if !rest.isEmpty { names[number] = rest }
                    name = names[number]
                }
                if line.hasPrefix("cfn=") { callee = name.map { $0.prefix { $0 != "'" } } }
            } else if line.hasPrefix("calls="), let callee {
                let count = line.dropFirst("calls=".count).prefix { $0 != " " }
                counts[String(callee), default: 0] += Int(count) ?? 0
            }
        }
        return counts
    }

    /// Writes `functions` one per line, after a header saying where they come from.
    static func write(_ functions: [String], to path: String) throws {
        let header = """
            # The Swift functions a defaultsd request (ping, set, get) calls at least once for every
            # two requests, which the release link lays out next to each other (Makefile, lld's
            # --symbol-ordering-file). Written by `make link-order`; docs/PERFORMANCE.md says why.

            """
        try (header + functions.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }
}
