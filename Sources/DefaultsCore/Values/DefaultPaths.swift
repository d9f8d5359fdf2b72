import FoundationEssentials

/// Where things live when nobody says otherwise (XDG Base Directory conventions).
public enum DefaultPaths {
    /// Where domain files live: the folder where Foundation on Linux keeps `UserDefaults`
    /// (`$XDG_CONFIG_HOME`, else `~/.config`), so that an unmodified program's preferences and
    /// the daemon's are one database.
    public static func storageDirectory(environment: [String: String]) -> String {
        xdg("XDG_CONFIG_HOME", else: ".config", environment)
    }

    /// The folder the daemon kept its domains in before it shared Foundation's; what is there is
    /// moved once, at start.
    public static func formerStorageDirectory(environment: [String: String]) -> String {
        xdg("XDG_CONFIG_HOME", else: ".config", environment) + "/defaultsd"
    }

    /// The daemon's own files (generation ledger, roaming journal, rejected hand edits), kept
    /// out of the shared folder: `$XDG_STATE_HOME/defaultsd`, else `~/.local/state/defaultsd`.
    public static func stateDirectory(environment: [String: String]) -> String {
        xdg("XDG_STATE_HOME", else: ".local/state", environment) + "/defaultsd"
    }

    public static func settingsBundleDirectories(environment: [String: String]) -> [String] {
        ["/usr/share/defaultsd/settings-bundles", xdg("XDG_DATA_HOME", else: ".local/share", environment) + "/defaultsd/settings-bundles"]
    }

    /// The configuration files looked for when `--config` is not given, in order.
    public static func configurationFiles(environment: [String: String]) -> [String] {
        [xdg("XDG_CONFIG_HOME", else: ".config", environment) + "/defaultsd/defaultsd.json", "/etc/defaultsd/defaultsd.json"]
    }

    /// An XDG base directory: the variable when it holds an absolute path longer than `/` (the
    /// rule Foundation's CoreFoundation applies), else `$HOME/<fallback>`.
    static func xdg(_ variable: String, else fallback: String, _ environment: [String: String]) -> String {
        if let value = environment[variable], value.hasPrefix("/"), value.utf8.count > 1 { return value }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
        return home + "/" + fallback
    }

    /// The socket a client connects to: `$DEFAULTSD_SOCKET` when set and not empty, else the
    /// daemon's default (``socketPath(environment:uid:)``).
    public static func clientSocketPath(environment: [String: String], uid: UInt32) -> String {
        if let path = environment["DEFAULTSD_SOCKET"], !path.isEmpty { return path }
        return socketPath(environment: environment, uid: uid)
    }

    /// The daemon's own socket: `$XDG_RUNTIME_DIR/defaultsd/socket`, else `/tmp/defaultsd-<uid>/socket`.
    public static func socketPath(environment: [String: String], uid: UInt32) -> String {
        runtimeDirectory(environment: environment, uid: uid) + "/socket"
    }

    /// Where the Settings app (`defaultsd-settings`) leaves its address with its token, mode 0600,
    /// beside the daemon's socket: `$XDG_RUNTIME_DIR/defaultsd/settings-url`.
    public static func settingsAddressFile(environment: [String: String], uid: UInt32) -> String {
        runtimeDirectory(environment: environment, uid: uid) + "/settings-url"
    }

    /// The Settings app's launch page, mode 0600, beside its address file: a browser that opens
    /// it (`xdg-open` on its path) is let in without the token ever being on a command line.
    public static func settingsLaunchFile(environment: [String: String], uid: UInt32) -> String {
        runtimeDirectory(environment: environment, uid: uid) + "/settings.html"
    }

    /// The per-user folder of run-time files: `$XDG_RUNTIME_DIR/defaultsd`, else `/tmp/defaultsd-<uid>`.
    public static func runtimeDirectory(environment: [String: String], uid: UInt32) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/defaultsd"
        }
        return "/tmp/defaultsd-\(uid)"
    }
}
