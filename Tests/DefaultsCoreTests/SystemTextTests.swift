@testable import DefaultsCore
import Foundation
import TestThreads
import Testing

/// The few helpers that stand in for full Foundation in the daemon and `defaults`.
@Suite(.ownThreads) struct SystemTextTests {
    @Test func formatIsPrintf() {
        #expect(SystemText.format("%.16g", 0.1) == "0.1")
        #expect(SystemText.format("%.16g", 5.0) == "5")
        #expect(SystemText.format("%04d-%02d", Int32(7), Int32(3)) == "0007-03")
        #expect(SystemText.format("%lld", Int64.min) == "-9223372036854775808")
        let long = String(repeating: "x", count: 300)
        long.withCString { text in
            #expect(SystemText.format("%s!", text) == long + "!", "longer than the first buffer")
        }
    }

    @Test func hexAndTrimming() {
        #expect(SystemText.hex([0x00, 0x0a, 0xff]) == "000aff")
        #expect(SystemText.hex([]) == "")
        #expect(SystemText.trimmingWhitespace("  \t d5e1a7c0\n") == "d5e1a7c0")
        #expect(SystemText.trimmingWhitespace(" \n ") == "")
        #expect(SystemText.trimmingWhitespace("a b") == "a b")
    }

    @Test func parentDirectoryIsNSStringsDeletingLastPathComponent() {
        // What NSString answers for each (checked one by one: on Linux, Foundation's own
        // implementation trapped when called on several of these in a row).
        let expected = ["/a/b": "/a", "/a/b/": "/a", "/a": "/", "/": "/", "a": "", "a/b": "a", "": "", "/a//b": "/a"]
        for (path, parent) in expected {
            #expect(SystemText.parentDirectory(of: path) == parent, "\(path)")
        }
    }

    @Test func reasonsAreTheCLibrarysWords() {
        #expect(SystemText.reason(POSIXError(.ENOENT)) == "No such file or directory")
        do {
            _ = try FileManager.default.contentsOfDirectory(atPath: "/nonexistent-\(UUID())")
            Issue.record("listed a missing directory")
        } catch {
            #expect(SystemText.reason(error) == "No such file or directory")
        }
    }

    @Test func descriptorsAreReadAndWrittenWhole() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let text = String(repeating: "defaults ", count: 1000)
        #expect(FileDescriptorIO.write(text, to: fds[1]))
        close(fds[1])
        #expect(FileDescriptorIO.readToEnd(fds[0]) == Data(text.utf8))
        close(fds[0])
        #expect(!FileDescriptorIO.write("x", to: -1))
        #expect(FileDescriptorIO.readToEnd(-1) == nil)
    }

    /// What a peer sent is logged as an excerpt: a one-mebibyte answer costs a log line of about
    /// 230 characters, which says how much was left out.
    @Test func aPeersTextIsLoggedAsAnExcerpt() {
        #expect(SystemText.excerpt("short") == "short")
        let long = String(repeating: "x", count: 1 << 20)
        #expect(SystemText.excerpt(long) == String(repeating: "x", count: 200) + "… (1048376 more characters)")
        #expect(SystemText.excerpt("abcdef", maximumCharacters: 3) == "abc… (3 more characters)")
    }
}
