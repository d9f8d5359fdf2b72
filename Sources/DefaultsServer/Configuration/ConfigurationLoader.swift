import DefaultsCore
import FoundationEssentials
import Glibc

/// A configuration that cannot be used, with the file, the key and what was expected.
/// The daemon exits with 78 (EX_CONFIG) on it at start, and keeps its old configuration on reload.
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var file: String?
    public var key: String?
    public var message: String

    public var description: String {
        var text = ""
        if let file { text += file + ": " }
        if let key { text += "key \"\(key)\": " }
        return text + message
    }
}

/// The effective configuration and where each value came from.
public struct ResolvedConfiguration: Sendable {
    public var configuration: DaemonConfiguration
    /// The file that was read, if any.
    public var file: String?
    /// Key → "default", "default ($XDG_...)", the file's path, or the command-line flag.
    public var sources: [String: String]

    /// One line per key: `key = value  # source`.
    public var printed: String {
        let width = ConfigurationOption.all.map(\.key.count).max() ?? 0
        var lines = ["# effective configuration of defaultsd; configuration file: \(file ?? "none")"]
        for option in ConfigurationOption.all {
            let key = option.key + String(repeating: " ", count: width - option.key.count)
            lines.append("\(key) = \(option.current(configuration))  # \(sources[option.key] ?? "default")")
        }
        return lines.joined(separator: "\n") + "\n"
    }
}

/// Builds the configuration: built-in defaults, then one configuration file, then command-line flags.
///
/// The file is the first that exists of `--config PATH`, `$XDG_CONFIG_HOME/defaultsd/defaultsd.json`
/// and `/etc/defaultsd/defaultsd.json`; a `--config` file that does not exist is an error.
public struct ConfigurationLoader: Sendable {
    public var environment: [String: String]
    public var explicitFile: String?
    /// Command-line values by configuration key; each is reported under its option's flag.
    public var overrides: [(option: ConfigurationOption, value: ConfigurationValue)]

    public init(environment: [String: String], explicitFile: String?, overrides: [(option: ConfigurationOption, value: ConfigurationValue)]) {
        self.environment = environment
        self.explicitFile = explicitFile
        self.overrides = overrides
    }

    public func load() throws(ConfigurationError) -> ResolvedConfiguration {
        var configuration = DaemonConfiguration.standard(environment: environment)
        var sources: [String: String] = [:]
        sources["socket"] = environment["XDG_RUNTIME_DIR"] != nil ? "default ($XDG_RUNTIME_DIR)" : "default (no $XDG_RUNTIME_DIR)"
        sources["storageDirectory"] = environment["XDG_CONFIG_HOME"] != nil ? "default ($XDG_CONFIG_HOME)" : "default ($HOME)"
        sources["stateDirectory"] = environment["XDG_STATE_HOME"] != nil ? "default ($XDG_STATE_HOME)" : "default ($HOME)"

        let file = try chooseFile()
        if let file {
            for (key, value) in ConfigurationLoader.flattened(try ConfigurationLoader.read(file)) {
                guard let option = ConfigurationOption.named(key) else {
                    let known = ConfigurationOption.all.map(\.key).joined(separator: ", ")
                    throw ConfigurationError(file: file, key: key, message: "unknown key (known keys: \(known))")
                }
                guard option.apply(value, &configuration) else {
                    throw ConfigurationError(file: file, key: key, message: "expected \(option.expected), found \(value)")
                }
                if value != .null { sources[key] = file }
            }
        }
        if let problem = configuration.roaming.problems(file: file) { throw problem }
        for (option, value) in overrides {
            let flag = option.flag ?? option.key
            guard option.apply(value, &configuration) else {
                throw ConfigurationError(file: nil, key: nil, message: "\(flag) expects \(option.expected), not \(value)")
            }
            sources[option.key] = flag
        }
        return ResolvedConfiguration(configuration: configuration, file: file, sources: sources)
    }

    /// The file named by `--config`, else the first of the default places where something is:
    /// a link that leads nowhere is chosen too, so that reading it says what is wrong, rather
    /// than the daemon passing over the file its user meant.
    private func chooseFile() throws(ConfigurationError) -> String? {
        if let explicitFile {
            guard Self.somethingIsAt(explicitFile) else {
                throw ConfigurationError(file: explicitFile, key: nil, message: "no such file")
            }
            return explicitFile
        }
        return DefaultPaths.configurationFiles(environment: environment).first(where: Self.somethingIsAt)
    }

    private static func somethingIsAt(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    /// A section (`"roaming": {"domains": [...]}`) as dotted keys (`roaming.domains`), each an
    /// option of its own; any other object is left for its option to refuse.
    static func flattened(_ members: [String: ConfigurationValue]) -> [(String, ConfigurationValue)] {
        var result: [(String, ConfigurationValue)] = []
        for (key, value) in members.sorted(by: { $0.key < $1.key }) {
            if case .object(let section) = value, ConfigurationOption.isSection(key) {
                result += section.sorted(by: { $0.key < $1.key }).map { (key + "." + $0.key, $0.value) }
            } else {
                result.append((key, value))
            }
        }
        return result
    }

    /// The largest configuration file read; the reference file is a few kilobytes.
    static let maximumFileBytes = 1 << 20

    /// Reads a configuration file: a JSON object, comments and trailing commas allowed (JSON5).
    public static func read(_ path: String) throws(ConfigurationError) -> [String: ConfigurationValue] {
        let data: Data
        switch RegularFile.read(atPath: path, maximumBytes: ConfigurationLoader.maximumFileBytes) {
        case .success(let file): data = file.data
        case .failure(.missing): throw ConfigurationError(file: path, key: nil, message: "a symbolic link that leads to no file")
        case .failure(let failure): throw ConfigurationError(file: path, key: nil, message: "\(failure)")
        }
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let value: ConfigurationValue
        do {
            value = try decoder.decode(ConfigurationValue.self, from: data)
        } catch {
            throw ConfigurationError(file: path, key: nil, message: "not valid JSON: \(describe(error))")
        }
        guard case .object(let members) = value else {
            throw ConfigurationError(file: path, key: nil, message: "expected a JSON object at the top level")
        }
        return members
    }

    private static func describe(_ error: Error) -> String {
        if case DecodingError.dataCorrupted(let context) = error { return context.debugDescription }
        return "\(error)"
    }
}
