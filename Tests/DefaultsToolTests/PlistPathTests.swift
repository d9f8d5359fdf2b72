import DefaultsCore
@testable import DefaultsTool
import Foundation
import TestThreads
import Testing

/// A file's path in a domain's place: which words are paths, where they lead, and which of them
/// name a domain of the storage folder, on real folders and links.
@Suite(.ownThreads) struct PlistPathTests {
    @Test func aWordWithASlashOrATildeIsAPath() {
        for word in ["/tmp/x", "~", "~/prefs/com.example.app", "prefs/com.example.app", "./com.example.app"] {
            #expect(PlistPath.isPath(word), "\(word)")
        }
        for word in ["com.example.app", "-g", "NSGlobalDomain", "Apple Global Domain", "My Tool"] {
            #expect(!PlistPath.isPath(word), "\(word)")
        }
    }

    @Test func pathsEndInPlistAndStartAtHomeOrTheWorkingDirectory() throws {
        let home = "/home/picard"
        #expect(try PlistPath("/tmp/settings", home: home).path == "/tmp/settings.plist")
        #expect(try PlistPath("/tmp/settings.plist", home: home).path == "/tmp/settings.plist")
        #expect(try PlistPath("/tmp/settings.xml", home: home).path == "/tmp/settings.xml.plist")
        #expect(try PlistPath("~/prefs/com.example.app", home: home).path == "/home/picard/prefs/com.example.app.plist")
        #expect(try PlistPath("~", home: home).path == "/home/picard.plist")
        let relative = try PlistPath("prefs/com.example.app", home: home)
        #expect(relative.path == FileManager.default.currentDirectoryPath + "/prefs/com.example.app.plist")
        #expect(relative.argument == "prefs/com.example.app")
        #expect(relative.fileName == "com.example.app.plist")
        #expect(throws: ToolError.failure("~worf/prefs: only ~ and ~/ are expanded; write another user's home in full")) {
            try PlistPath("~worf/prefs", home: home)
        }
        #expect(throws: ToolError.failure("/tmp/prefs/ names a folder; a domain's path names a file")) {
            try PlistPath("/tmp/prefs/", home: home)
        }
    }

    /// The storage folder and its `ByHost` folder, reached directly, through a link or through
    /// `..`: a file there is its domain; a file elsewhere, or one whose name is no domain's, is not.
    @Test func aFileInTheStorageFolderIsItsDomain() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("plist-path-\(UUID().uuidString.prefix(8))").path
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let storage = folder + "/config"
        try FileManager.default.createDirectory(atPath: storage + "/ByHost", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: folder + "/elsewhere", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: folder + "/config-link", withDestinationPath: storage)
        func domain(_ word: String) throws -> DomainName? {
            try PlistPath(word, home: folder).domain(storageDirectory: storage)
        }
        let app = try DomainName("com.example.app")
        #expect(try domain(storage + "/com.example.app") == app)
        #expect(try domain(storage + "/com.example.app.plist") == app)
        #expect(try domain("~/config/com.example.app") == app)
        #expect(try domain("~/config-link/com.example.app") == app)
        #expect(try domain("~/elsewhere/../config/com.example.app") == app)
        #expect(try domain("~/config/.GlobalPreferences") == DomainName.global)
        #expect(try domain("~/config/ByHost/com.example.app.") == app.currentHost)
        #expect(try domain("~/config-link/ByHost/.GlobalPreferences.") == DomainName.global.currentHost)
        #expect(try domain("~/elsewhere/com.example.app") == nil)
        #expect(try domain("~/config/ByHost/com.example.app") == nil, "a by-host file's name ends in ..plist")
        #expect(try domain("~/config/not..a.domain") == nil)
        #expect(try domain("~/missing/com.example.app") == nil)
        // The storage folder named through a link finds the files reached directly.
        #expect(try PlistPath(storage + "/com.example.app", home: folder).domain(storageDirectory: folder + "/config-link") == app)
    }
}
