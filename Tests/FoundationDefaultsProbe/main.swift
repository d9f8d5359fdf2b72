// A program that keeps its preferences with plain Foundation `UserDefaults` and nothing else, as
// most Swift programs on Linux do. The tests and the benchmark run it beside defaultsd to show
// that the two share one database without a change to the program.
//
//   FoundationDefaultsProbe set <suite|-> <key> <value>   set (an integer when it reads as one), synchronize
//   FoundationDefaultsProbe get <suite|-> <key>           print "<type> <value>", or "nil"
//   FoundationDefaultsProbe serve <suite|->               a line per command on standard input:
//       set <key> <value>  → set, synchronize, "ok"
//       sync               → synchronize, "ok"
//       get <key>          → "<type> <value>" or "nil", from what the program holds (no synchronize)
// `-` is `UserDefaults.standard`, whose domain Foundation names for the executable.
import Foundation

func defaults(_ name: String) -> UserDefaults {
    name == "-" ? .standard : UserDefaults(suiteName: name)!
}

func describe(_ value: Any?) -> String {
    switch value {
    case let number as Int: "Int \(number)"
    case let text as String: "String \(text)"
    case let flag as Bool: "Bool \(flag)"
    case nil: "nil"
    case let other?: "\(type(of: other)) \(other)"
    }
}

func typed(_ text: String) -> Any { Int(text) ?? text }

/// One line on standard output, written at once (a pipe would otherwise hold it).
func say(_ line: String) { FileHandle.standardOutput.write(Data((line + "\n").utf8)) }

let arguments = CommandLine.arguments
switch (arguments.count > 1 ? arguments[1] : "", arguments.count) {
case ("set", 5):
    let store = defaults(arguments[2])
    store.set(typed(arguments[4]), forKey: arguments[3])
    say(store.synchronize() ? "ok" : "not synchronized")
case ("get", 4):
    say(describe(defaults(arguments[2]).object(forKey: arguments[3])))
case ("serve", 3):
    let store = defaults(arguments[2])
    while let line = readLine() {
        let words = line.split(separator: " ", maxSplits: 2).map(String.init)
        switch (words.first ?? "", words.count) {
        case ("set", 3):
            store.set(typed(words[2]), forKey: words[1])
            say(store.synchronize() ? "ok" : "not synchronized")
        case ("sync", 1): say(store.synchronize() ? "ok" : "not synchronized")
        case ("get", 2): say(describe(store.object(forKey: words[1])))
        default: say("unknown command: \(line)")
        }
    }
default:
    FileHandle.standardError.write(Data("usage: FoundationDefaultsProbe set|get|serve <suite|-> [key [value]]\n".utf8))
    exit(64)
}
