import DaemonTestSupport
import DefaultsCore
import Foundation
import TestThreads
import Testing

/// Runs every `console` example of docs/PROTOCOL.md, in order, as written: after the page's
/// own setup block, from the project directory, against one fresh daemon started as `make run`
/// starts it (its default socket and storage, in a private home); and compares the output line by
/// line (`...` in the document matches any text).
@Suite(.ownThreads) struct ProtocolDocumentationTests {
    struct Example {
        var command: String
        var expected: [String]
        var line: Int
    }

    static let documentPath = SharedData.repository.appendingPathComponent("docs/PROTOCOL.md").path

    /// The page's first `sh` block: the variables every example uses.
    static func setup() throws -> String {
        let lines = try String(contentsOfFile: documentPath, encoding: .utf8).components(separatedBy: "\n")
        guard let start = lines.firstIndex(of: "```sh"), let end = lines[(start + 1)...].firstIndex(where: { $0.hasPrefix("```") }) else {
            return ""
        }
        return lines[(start + 1)..<end].joined(separator: "\n")
    }

    static func examples() throws -> [Example] {
        let lines = try String(contentsOfFile: documentPath, encoding: .utf8).components(separatedBy: "\n")
        var examples: [Example] = []
        var inConsole = false
        for (number, line) in lines.enumerated() {
            if line.hasPrefix("```") {
                inConsole = line == "```console"
                continue
            }
            guard inConsole else { continue }
            if line.hasPrefix("$ ") {
                examples.append(Example(command: String(line.dropFirst(2)), expected: [], line: number + 1))
            } else if !examples.isEmpty {
                examples[examples.count - 1].expected.append(line)
            }
        }
        return examples
    }

    /// `pattern` with `...` standing for any text.
    static func matches(_ text: String, _ pattern: String) -> Bool {
        let parts = pattern.components(separatedBy: "...")
        guard parts.count > 1 else { return text == pattern }
        guard text.count >= parts[0].count + parts.last!.count, text.hasPrefix(parts[0]), text.hasSuffix(parts.last!)
        else { return false }
        var rest = text.dropFirst(parts[0].count).dropLast(parts.last!.count)
        for part in parts.dropFirst().dropLast() {
            guard let range = rest.range(of: part) else { return false }
            rest = rest[range.upperBound...]
        }
        return true
    }

    @Test func everyExampleProducesTheDocumentedOutput() throws {
        let examples = try Self.examples()
        #expect(examples.count == 57)  // every example on the page; one that stops being found fails here
        // The managed preferences the page's "needs root" examples expect.
        let managed = FileManager.default.temporaryDirectory.appendingPathComponent("managed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: managed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: managed) }
        try PropertyListFile.encode(["warpFactor": .integer(9)], format: .xml)
            .write(to: URL(fileURLWithPath: managed + "/com.example.locked.plist"))
        let daemon = try DaemonProcess(
            arguments: ["--managed-dir", managed], environment: ["LANG": "en_US.UTF-8", "LANGUAGE": ""], defaultPaths: true)
        let setup = try Self.setup()
        #expect(setup.contains("export SOCK=") && setup.contains("export STORE=") && setup.contains("export BUNDLE="))
        let asRoot = getuid() == 0
        if asRoot {
            // Lets the not_permitted example reach the socket as another user.
            for folder in [daemon.directory, daemon.home, daemon.home + "/run", daemon.home + "/run/defaultsd"] { chmod(folder, 0o755) }
            chmod(daemon.socketPath, 0o666)
        }
        for example in examples {
            if example.command.hasSuffix("# needs root") && !asRoot { continue }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", setup + "\n" + example.command]
            process.currentDirectoryURL = SharedData.repository
            var environment = daemon.clientEnvironment
            environment["DEFAULTSD_SOCKET"] = nil  // the page finds the socket as a reader's shell does
            process.environment = environment
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            var lines = text.components(separatedBy: "\n")
            if lines.last == "" { lines.removeLast() }
            #expect(lines.count == example.expected.count, "PROTOCOL.md:\(example.line): \(example.command)\n\(text)")
            for (actual, expected) in zip(lines, example.expected) {
                #expect(Self.matches(actual, expected), "PROTOCOL.md:\(example.line)\nexpected: \(expected)\nactual:   \(actual)")
            }
        }
    }

    @Test func theWildcardMatcherIsStrictOutsideItsGaps() {
        #expect(Self.matches(#"{"pid":42,"ok":true}"#, #"{"pid":...,"ok":true}"#))
        #expect(!Self.matches(#"{"pid":42,"ok":false}"#, #"{"pid":...,"ok":true}"#))
        #expect(!Self.matches("abc", "abd"))
        #expect(Self.matches("a1b2c", "a...b...c"))
        #expect(!Self.matches("a1c2b", "a...b...c"))
    }
}
