import DefaultsClient
import Foundation

/// The app's defaults: `com.example.BridgeControl` on the daemon's default socket
/// (`$DEFAULTSD_SOCKET` and `$DEFAULTSD_APP_DOMAIN` override them).
let bridgeDefaults = SharedDefaults(
    configuration: DefaultsConfiguration(
        appDomain: ProcessInfo.processInfo.environment["DEFAULTSD_APP_DOMAIN"] ?? "com.example.BridgeControl",
        clientName: "BridgeControl"))

/// The settings of the tutorial's Settings bundle, one typed default each.
struct BridgeSettings {
    @Default("officer", defaults: bridgeDefaults) var officer = ""
    @Default("authorizationCode", defaults: bridgeDefaults) var authorizationCode = ""
    @Default("rank", defaults: bridgeDefaults) var rank = ""
    @Default("warp", defaults: bridgeDefaults) var warp = false
    @Default("warpFactor", defaults: bridgeDefaults) var warpFactor = 1.0
    @Default("favoriteTea", defaults: bridgeDefaults) var favoriteTea = ""
    @Default("favoriteCaptain", defaults: bridgeDefaults) var favoriteCaptain = ""
    @Default("favoriteGadget", defaults: bridgeDefaults) var favoriteGadget = ""
    @Default("favoriteAlien", defaults: bridgeDefaults) var favoriteAlien = ""

    /// The keys the screen shows.
    static let keys: Set<String> = [
        "officer", "authorizationCode", "rank", "warp", "warpFactor",
        "favoriteTea", "favoriteCaptain", "favoriteGadget", "favoriteAlien",
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
        ]
    }
}
