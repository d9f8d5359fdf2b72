import DefaultsCore
import DaemonTestSupport
import Foundation
import LineSocket
import TestThreads
import Testing

/// Every error code, each answered on a connection that keeps working afterwards.
@Suite(.ownThreads) struct ErrorTests {
    static let cases: [(String, String)] = [
        ("this is not json", "bad_json"),
        (#"{"op":"set","domain":"com.x""#, "bad_json"),
        ("[1,2,3]", "bad_json"),
        (#"{"op":"fly"}"#, "unknown_op"),
        (#"{"domain":"com.x"}"#, "missing_parameter"),
        (#"{"op":"get"}"#, "missing_parameter"),
        (#"{"op":"set","domain":"com.x","key":"k"}"#, "missing_parameter"),
        (#"{"op":"apply","domain":"com.x"}"#, "missing_parameter"),
        (#"{"op":42}"#, "invalid_parameter"),
        (#"{"op":"get","domain":7}"#, "invalid_parameter"),
        (#"{"op":"apply","domain":"com.x","set":[1]}"#, "invalid_parameter"),
        (#"{"op":"apply","domain":"com.x","set":{"k":1},"remove":["k"]}"#, "invalid_parameter"),
        (#"{"op":"subscribe","all":"yes"}"#, "invalid_parameter"),
        (#"{"op":"get","domain":"../etc"}"#, "invalid_domain"),
        (#"{"op":"get","domain":""}"#, "invalid_domain"),
        (#"{"op":"set","domain":"com.x","key":"","value":1}"#, "invalid_key"),
        (#"{"op":"set","domain":"com.x","key":"k","value":null}"#, "invalid_value"),
        (#"{"op":"set","domain":"com.x","key":"k","value":18446744073709551616}"#, "invalid_value"),
        (#"{"op":"set","domain":"com.x","key":"k","value":1e999}"#, "invalid_value"),
        (#"{"op":"set","domain":"com.x","key":"k","value":{"$date":"tuesday"}}"#, "invalid_value"),
        (#"{"op":"set","domain":"com.x","key":"k","value":{"$data":"!!"}}"#, "invalid_value"),
        (#"{"op":"import","domain":"com.x","plist":"<plist><dict><key>"}"#, "invalid_plist"),
        (#"{"op":"import","domain":"com.x","plist":"(1, 2)"}"#, "invalid_plist"),
        (#"{"op":"set","domain":"com.x","key":"big","value":"\#(String(repeating: "x", count: 3000))"}"#, "too_large"),
    ]

    @Test func eachBadRequestGetsItsCodeAndTheConnectionStaysUsable() throws {
        let daemon = try DaemonProcess(arguments: ["--max-domain-bytes", "2048", "--max-line-bytes", "4096"])
        let client = try daemon.connect()
        for (index, (line, code)) in Self.cases.enumerated() {
            let answer = try JSONParser.parse(try client.request(line))
            #expect(answer["ok"] == .bool(false), "\(line)")
            #expect(answer["error"]?["code"] == .string(code), "\(line) → \(answer)")
            guard case .string(let message)? = answer["error"]?["message"] else {
                Issue.record("no message for \(line)")
                continue
            }
            #expect(!message.isEmpty)
            #expect(try client.request(#"{"id":\#(index),"op":"ping"}"#) == #"{"id":\#(index),"ok":true}"#)
        }
        #expect(try client.request(#"{"op":"get","domain":"com.x"}"#) == #"{"ok":true,"value":{},"generation":0}"#)
    }

    @Test func theIDIsEchoedOnErrorsWhenItCanBeRead() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        #expect(try client.request(#"{"id":"a","op":"get","domain":"a/b"}"#)
            == #"{"id":"a","ok":false,"error":{"code":"invalid_domain","message":"invalid domain name \"a/b\": only letters, digits, spaces, '.', '_' and '-' are allowed"}}"#)
        #expect(try client.request(#"{"id":9}"#) == #"{"id":9,"ok":false,"error":{"code":"missing_parameter","message":"missing \"op\""}}"#)
    }

    @Test func invalidUTF8IsAnsweredAndTheConnectionStaysUsable() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        try client.send(bytes: Array(#"{"op":"set","domain":"com.x","key":""#.utf8) + [0xC3, 0x28] + Array(#"","value":1}"#.utf8) + [0x0A])
        let answer = try JSONParser.parse(try client.readResponse())
        #expect(answer["error"]?["code"] == .string("invalid_utf8"))
        try client.send(bytes: [0xFF, 0xFE, 0x0A])
        #expect(try JSONParser.parse(try client.readResponse())["error"]?["code"] == .string("invalid_utf8"))
        #expect(try client.request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
    }

    @Test func anOverlongLineIsAnsweredAndItsRestDiscarded() throws {
        let daemon = try DaemonProcess(arguments: ["--max-line-bytes", "1024"])
        let client = try daemon.connect()
        let huge = #"{"op":"set","domain":"com.x","key":"k","value":""# + String(repeating: "y", count: 200_000) + #""}"#
        try client.send(huge)
        #expect(try client.readResponse()
            == #"{"ok":false,"error":{"code":"line_too_long","message":"line longer than 1024 bytes; it was discarded"}}"#)
        #expect(try client.request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
        #expect(try client.request(#"{"op":"get","domain":"com.x"}"#) == #"{"ok":true,"value":{},"generation":0}"#)
    }

    @Test func traversalDomainNamesTouchNothing() throws {
        let daemon = try DaemonProcess()
        let client = try daemon.connect()
        let before = try FileManager.default.subpathsOfDirectory(atPath: daemon.directory).sorted()
        for name in ["../escape", "..", ".", "a/b", "/tmp/evil", "storage/../x", "x\\u0000y", ".GlobalPreferences", "..hidden", "%2e%2e"] {
            for op in [#""op":"set","key":"k","value":1"#, #""op":"get""#, #""op":"deleteDomain""#, #""op":"import","plist":"{a=1;}""#] {
                let answer = try JSONParser.parse(try client.request(#"{\#(op),"domain":"\#(name)"}"#))
                #expect(answer["error"]?["code"] == .string("invalid_domain"), "\(name) \(op)")
            }
        }
        try client.request(#"{"op":"synchronize"}"#)
        #expect(try FileManager.default.subpathsOfDirectory(atPath: daemon.directory).sorted() == before)
        #expect(!FileManager.default.fileExists(atPath: daemon.directory + "/escape.plist"))
        #expect(!FileManager.default.fileExists(atPath: "/tmp/evil.plist"))
    }

    @Test(.enabled(if: getuid() == 0, "switching to another uid needs root"))
    func anotherUserIsRefusedWithOneErrorLine() throws {
        let daemon = try DaemonProcess()
        chmod(daemon.directory, 0o755)
        chmod(daemon.socketPath, 0o666)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", "socat", "-t", "5", "-", "UNIX-CONNECT:" + daemon.socketPath]
        process.environment = daemon.clientEnvironment
        let input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        input.fileHandleForWriting.write(Data(#"{"op":"get","domain":"com.x"}"#.utf8 + [0x0A]))
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(text == #"{"ok":false,"error":{"code":"not_permitted","message":"this defaultsd serves uid 0 only"}}"# + "\n")
    }

    @Test func aSecondDaemonDoesNotStealALiveSocket() throws {
        let first = try DaemonProcess()
        let second = try DaemonProcess.runToCompletion(
            ["--socket", first.socketPath, "--storage-dir", first.storagePath + "-2"])
        #expect(second.status == 1)
        #expect(second.errors.contains("defaultsd: another defaultsd is already listening on \(first.socketPath)"))
        #expect(try first.connect().request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
    }

    @Test func aStaleSocketFileIsReplaced() throws {
        let daemon = try DaemonProcess()
        daemon.kill()
        #expect(FileManager.default.fileExists(atPath: daemon.socketPath))
        try daemon.restart()
        #expect(try daemon.connect().request(#"{"op":"ping"}"#) == #"{"ok":true}"#)
    }
}
