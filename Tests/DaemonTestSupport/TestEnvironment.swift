import Foundation

/// The environment of every process a test starts: the test runner's own, with a private `HOME`
/// and private XDG directories, and none of the variables through which the invoking user's
/// setup would reach the process.
///
/// Without it a test daemon would read the user's configuration file and Settings bundles
/// (`$XDG_CONFIG_HOME/defaultsd/defaultsd.json`, `$XDG_DATA_HOME/defaultsd/settings-bundles`),
/// and a `defaults` run would talk to the user's own daemon.
///
/// ```swift
/// let environment = TestEnvironment.isolated(home: directory + "/home")
/// process.environment = environment.merging(["DEFAULTSD_SOCKET": socket]) { $1 }
/// ```
public enum TestEnvironment {
    /// Variables that carry the invoking user's setup or a service manager's hand-over.
    public static let removed: Set<String> = [
        "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR",
        "XDG_CONFIG_DIRS", "XDG_DATA_DIRS", "DEFAULTSD_SOCKET", "DEFAULTSD_APP_DOMAIN",
        "NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM",
        "LANGUAGE", "LC_ALL", "LC_MESSAGES",
    ]

    /// `base` without ``removed``, with `HOME` at `home` and every XDG base directory below it
    /// (created, the runtime directory with mode 0700 as the specification asks), and `LANG` set
    /// to `en_US.UTF-8` so that localised output does not follow the user's language.
    public static func isolated(
        home: String, inheriting base: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String: String] {
        var environment = base.filter { !removed.contains($0.key) }
        let directories = [
            "XDG_CONFIG_HOME": home + "/.config", "XDG_DATA_HOME": home + "/.local/share",
            "XDG_CACHE_HOME": home + "/.cache", "XDG_STATE_HOME": home + "/.local/state", "XDG_RUNTIME_DIR": home + "/run",
        ]
        for (variable, path) in directories {
            try? FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            environment[variable] = path
        }
        environment["HOME"] = home
        environment["LANG"] = "en_US.UTF-8"
        return environment
    }

    /// Runs `body` with an isolated environment whose home is a new temporary directory, removed afterwards.
    public static func withTemporaryHome<T>(_ body: ([String: String]) throws -> T) rethrows -> T {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("defaultsd-home-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: home) }
        return try body(isolated(home: home))
    }
}
