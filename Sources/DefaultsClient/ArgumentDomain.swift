import DefaultsCore
import Foundation

/// The argument domain: `-key value` pairs from the command line, searched before everything else.
///
/// The same rules as Foundation's (`UserDefaults._parseArguments`): an argument that starts with
/// `-` followed by one that does not makes a pair; the value is trimmed and parsed as a property
/// list when it starts with `{`, `[`, `(`, `<` or `"` (`-Fleet '(Enterprise, Voyager)'` is an
/// array), and stays a string otherwise (`-warpFactor 9` is the string `"9"`, which
/// `integer(forKey:)` reads as 9). A negative number cannot be a value (`-offset -5` is no pair).
public enum ArgumentDomain {
    public static let name = "NSArgumentDomain"

    /// This process's argument domain, parsed once.
    public static let current: [String: PlistValue] = parse(CommandLine.arguments.dropFirst())

    public static func parse<Arguments: Collection>(_ arguments: Arguments) -> [String: PlistValue]
    where Arguments.Element == String {
        var result: [String: PlistValue] = [:]
        let list = Array(arguments)
        var index = 0
        while index < list.count {
            let current = list[index]
            guard index + 1 < list.count, current.hasPrefix("-"), current.count > 1 else {
                index += 1
                continue
            }
            let next = list[index + 1]
            guard !next.hasPrefix("-") else {
                index += 1
                continue
            }
            let key = String(current.dropFirst())
            let text = next.trimmingCharacters(in: .whitespacesAndNewlines)
            result[key] = value(of: text)
            index += 2
        }
        return result
    }

    private static func value(of text: String) -> PlistValue {
        guard let first = text.first, "{[(<\"".contains(first) else { return .string(text) }
        return (try? PropertyListFile.decodeValue(Data(text.utf8))) ?? .string(text)
    }
}
