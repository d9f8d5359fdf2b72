import DefaultsClient
import Foundation
import Observation

/// The app's defaults: `com.example.BridgeControl` on the daemon's default socket
/// (`$DEFAULTSD_SOCKET` and `$DEFAULTSD_APP_DOMAIN` override them).
let bridgeDefaults = SharedDefaults(
    configuration: DefaultsConfiguration(
        appDomain: ProcessInfo.processInfo.environment["DEFAULTSD_APP_DOMAIN"] ?? "com.example.BridgeControl",
        clientName: "BridgeControl"))

/// An officer of the away team: a Codable value, stored as a dictionary of its fields, so
/// `defaults read com.example.BridgeControl awayTeam` shows them and a hand edit can change them.
struct Officer: Codable, Sendable, Equatable {
    var name: String
    var rank: String
}

/// The app's typed keys: each declared once, with its type and default (registered, so
/// `defaults read-effective` shows it).
extension Keys {
    static let warpFactor = Key<Double>("warpFactor", default: 5)
    static let launches = Key<Int>("launches", default: 0)
    static let awayTeam = Key<[Officer]>("awayTeam", default: [])
}

/// The settings of the tutorial's Settings bundle, one typed default each.
struct BridgeSettings {
    @Default("officer", defaults: bridgeDefaults) var officer = ""
    @Default("authorizationCode", defaults: bridgeDefaults) var authorizationCode = ""
    @Default("rank", defaults: bridgeDefaults) var rank = ""
    @Default("warp", defaults: bridgeDefaults) var warp = false
    @Default(.warpFactor, defaults: bridgeDefaults) var warpFactor
    @Default("favoriteTea", defaults: bridgeDefaults) var favoriteTea = ""
    @Default("favoriteCaptain", defaults: bridgeDefaults) var favoriteCaptain = ""
    @Default("favoriteGadget", defaults: bridgeDefaults) var favoriteGadget = ""
    @Default("favoriteAlien", defaults: bridgeDefaults) var favoriteAlien = ""
    @Default(.awayTeam, defaults: bridgeDefaults) var awayTeam

    /// The keys the screen shows.
    static let keys: Set<String> = [
        "officer", "authorizationCode", "rank", "warp", "warpFactor",
        "favoriteTea", "favoriteCaptain", "favoriteGadget", "favoriteAlien", "awayTeam",
    ]

    /// The screen, as lines.
    var screen: [String] {
        func shown(_ text: String) -> String { text.isEmpty ? "(not set)" : text }
        return [
            "Officer:            \(shown(officer))",
            "Authorization code: \(authorizationCode.isEmpty ? "(not set)" : String(repeating: "•", count: authorizationCode.count))",
            "Rank:               \(shown(rank))",
            "Warp drive:         \(warp ? "engaged" : "disengaged")",
            "Warp factor:        \(warpFactor)",
            "Favorite tea:       \(shown(favoriteTea))",
            "Favorite captain:   \(shown(favoriteCaptain))",
            "Favorite gadget:    \(shown(favoriteGadget))",
            "Favorite alien:     \(shown(favoriteAlien))",
            "Away team:          \(awayTeam.isEmpty ? "(none)" : awayTeam.map { "\($0.rank) \($0.name)" }.joined(separator: ", "))",
        ]
    }
}

/// The bridge as an `@Observable` model: its properties are defaults, so code that reads them
/// inside `withObservationTracking` (a SwiftUI view, on platforms that have one) is told when any
/// process changes them.
@Observable final class BridgeModel {
    var warpFactor: Double {
        get { bridgeDefaults[.warpFactor] }
        set { bridgeDefaults[.warpFactor] = newValue }
    }

    var awayTeam: [Officer] {
        get { bridgeDefaults[.awayTeam] }
        set { bridgeDefaults[.awayTeam] = newValue }
    }
}
