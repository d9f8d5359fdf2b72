/// Finds the known key an unknown key was probably meant to be (`DefaultVaule` → `DefaultValue`).
///
/// A match is: the same key in another case (`AutoCorrectionType`), or one edit away for keys of
/// five characters or more, or two edits for nine or more, where swapping two neighbours is one
/// edit (`Tilte`, `DefaultVaule`). Short keys need an exact case-insensitive match, so `Key` and
/// `Type` are not suggested for every three-letter word.
enum KeySpelling {
    static func suggestion(for key: String, among known: Set<String>) -> String? {
        guard !known.contains(key) else { return nil }
        let lowered = key.lowercased()
        var best: (key: String, distance: Int)?
        for candidate in known.sorted() {
            if candidate.lowercased() == lowered { return candidate }
            let allowed = key.count >= 9 ? 2 : key.count >= 5 ? 1 : 0
            guard allowed > 0, abs(candidate.count - key.count) <= allowed else { continue }
            let distance = editDistance(Array(key), Array(candidate))
            if distance <= allowed && distance < (best?.distance ?? .max) { best = (candidate, distance) }
        }
        return best?.key
    }

    /// Optimal-string-alignment distance: insertions, deletions, substitutions and swaps of
    /// adjacent characters each cost one.
    static func editDistance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
