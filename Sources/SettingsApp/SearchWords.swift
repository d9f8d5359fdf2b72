import DefaultsClient
import DefaultsCore
import Foundation
import Hummingbird
import SettingsBundles

/// The words a search compares: lowercased, without accents, split at every character that is
/// not a letter or a digit and between a lower-case letter and an upper-case one, so that the
/// key `favoriteTea` has the words "favorite" and "tea". A query matches when each of its words
/// begins a word of the row: "tea" finds "Favorite Tea" and never "Favorite Captain" or
/// "Steam"; "fav cap" finds "Favorite Captain".
///
/// ```swift
/// SearchWords("fav cap").matches(SearchWords("Favorite Captain"))   // true
/// ```
struct SearchWords {
    private(set) var words: [String]

    init(_ text: String) {
        var words: [String] = []
        var current = ""
        var previousWasLower = false
        for character in text.folding(options: [.diacriticInsensitive], locale: nil) {
            guard character.isLetter || character.isNumber else {
                if !current.isEmpty { words.append(current) }
                current = ""
                previousWasLower = false
                continue
            }
            if character.isUppercase, previousWasLower, !current.isEmpty {
                words.append(current)
                current = ""
            }
            current += character.lowercased()
            previousWasLower = character.isLowercase
        }
        if !current.isEmpty { words.append(current) }
        self.words = words
    }

    var isEmpty: Bool { words.isEmpty }

    func matches(_ row: SearchWords) -> Bool {
        words.allSatisfy { word in row.words.contains { $0.hasPrefix(word) } }
    }

    static func + (first: SearchWords, second: SearchWords) -> SearchWords {
        var joined = first
        joined.words += second.words
        return joined
    }
}
