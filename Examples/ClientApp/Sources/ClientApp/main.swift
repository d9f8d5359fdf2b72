// The smallest app that keeps its preferences in defaultsd and hears when another process
// changes them: `ClientApp` prints its greeting, `ClientApp set <text>` changes it, and
// `ClientApp watch` prints it again at every change (from `defaults write com.example.ClientApp
// greeting "Hi"`, the Settings app, or another machine through roaming).
import DefaultsClient
import Foundation

/// Writes a line at once (`print` into a pipe would wait for more).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let defaults = SharedUserDefaults(suiteName: "com.example.ClientApp")!
defaults.register(defaults: ["greeting": "Hello"])

switch CommandLine.arguments.dropFirst().first {
case "set":
    defaults.set(CommandLine.arguments.dropFirst(2).joined(separator: " "), forKey: "greeting")
    say(defaults.synchronize() ? "saved" : "not saved: is defaultsd running?")
case "watch":
    say(defaults.string(forKey: "greeting") ?? "")
    // Delivered on the main queue, which is the main actor's: `defaults` is read there.
    let observer = NotificationCenter.default.addObserver(forName: UserDefaults.didChangeNotification, object: defaults, queue: .main) { _ in
        MainActor.assumeIsolated { say(defaults.string(forKey: "greeting") ?? "") }
    }
    withExtendedLifetime(observer) { RunLoop.main.run() }
default:
    say(defaults.string(forKey: "greeting") ?? "")
}
