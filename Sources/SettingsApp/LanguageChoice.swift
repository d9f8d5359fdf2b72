import DefaultsClient
import DefaultsCore
import Foundation
import Hummingbird
import SettingsBundles

/// The browser's languages (`Accept-Language`) matched against a bundle's `.lproj` folders.
enum LanguageChoice {
    /// Language tags by preference (q-values honoured, order kept among equals).
    static func preferred(_ header: String) -> [String] {
        let entries = header.split(separator: ",").enumerated().compactMap { position, part -> (String, Double, Int)? in
            let pieces = part.split(separator: ";").map { SystemText.trimmingWhitespace(String($0)) }
            guard let tag = pieces.first, !tag.isEmpty, tag != "*" else { return nil }
            let quality = pieces.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            return (tag, quality, position)
        }
        return entries.filter { $0.1 > 0 }.sorted { ($0.1, -$0.2) > ($1.1, -$1.2) }.map(\.0)
    }

    /// The first wanted language a folder serves: exactly (`pt-BR` = `pt_BR`), else by its
    /// language alone (`fr-CA` → `fr`).
    static func best(of offered: [String], for wanted: [String]) -> String? {
        func normal(_ tag: String) -> String { tag.lowercased().replacingOccurrences(of: "_", with: "-") }
        for tag in wanted {
            if let exact = offered.first(where: { normal($0) == normal(tag) }) { return exact }
            let language = normal(tag).split(separator: "-").first.map(String.init) ?? ""
            if let close = offered.first(where: { normal($0).split(separator: "-").first.map(String.init) == language }) { return close }
        }
        return nil
    }
}
