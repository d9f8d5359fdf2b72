import Foundation

/// Where things live when nobody says otherwise (XDG Base Directory conventions).
public enum DefaultPaths {
    public static func storageDirectory(environment: [String: String]) -> String {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/defaultsd"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return home + "/.config/defaultsd"
    }

    public static func settingsBundleDirectories(environment: [String: String]) -> [String] {
        let data: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            data = xdg
        } else {
            data = (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.local/share"
        }
        return ["/usr/share/defaultsd/settings-bundles", data + "/defaultsd/settings-bundles"]
    }

    /// The configuration files looked for when `--config` is not given, in order.
    public static func configurationFiles(environment: [String: String]) -> [String] {
        let config: String
        if let xdg = environment["XDG_CONFIG_HOME"], xdg.hasPrefix("/") {
            config = xdg
        } else {
            config = (environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()) + "/.config"
        }
        return [config + "/defaultsd/defaultsd.json", "/etc/defaultsd/defaultsd.json"]
    }

    public static func socketPath(environment: [String: String], uid: UInt32) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return runtime + "/defaultsd/socket"
        }
        return "/tmp/defaultsd-\(uid)/socket"
    }
}
