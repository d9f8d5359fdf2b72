import DefaultsCore
import SettingsBundles
import TestThreads
import Testing
import ValueSyntaxCases
import Foundation

@testable import SettingsApp

/// The rules the page depends on, one by one: how an input becomes a typed value, how the plain
/// editor shows and reads values, which language is chosen, how the token leaves the address.
@Suite(.ownThreads) struct SettingsAppUnitTests {
    /// One row in the form `describeBundle` answers it, read back as the app reads it.
    private func row(control: String, defaultValue: String? = nil) throws -> PaneDescription.Row {
        let defaultMember = defaultValue.map { #""defaultValue":\#($0),"# } ?? ""
        let pane = #"{"file":"Root.plist","title":null,"sections":[{"title":null,"footer":null,"rows":[{"index":1,"type":"T","key":"k","suite":null,"title":null,"display":"",\#(defaultMember)"control":\#(control)}]}]}"#
        return try #require(PaneDescription(json: JSONParser.parse(pane)).allRows.first)
    }

    @Test func aSwitchStoresItsOwnTrueAndFalseValuesWithTheirTypes() throws {
        let toggle = try row(control: #"{"kind":"toggleSwitch","on":false,"trueValue":1,"falseValue":0.0}"#)
        #expect(try RowInput.switchOn(true).value(for: toggle) == .integer(1))
        #expect(try RowInput.switchOn(false).value(for: toggle) == .real(0))
    }

    @Test func anOptionIsChosenByItsPosition() throws {
        let list = try row(control: #"{"kind":"multiValue","options":[{"title":"A","value":"a"},{"title":"Two","value":2}]}"#)
        #expect(try RowInput.option(1).value(for: list) == .integer(2))
        #expect(throws: RowInput.Refused.self) { try RowInput.option(2).value(for: list) }
    }

    @Test func aSliderStoresAnIntegerOnlyWhenItsDefaultIsOne() throws {
        let whole = try row(control: #"{"kind":"slider"}"#, defaultValue: "5")
        let real = try row(control: #"{"kind":"slider"}"#, defaultValue: "5.0")
        let none = try row(control: #"{"kind":"slider"}"#)
        #expect(try RowInput.number("7").value(for: whole) == .integer(7))
        #expect(try RowInput.number("7.5").value(for: whole) == .real(7.5), "not a whole number: kept as given")
        #expect(try RowInput.number("7").value(for: real) == .real(7))
        #expect(try RowInput.number(" 3 ").value(for: none) == .real(3))
        #expect(throws: RowInput.Refused.self) { try RowInput.number("fast").value(for: real) }
    }

    @Test func aTextFieldStoresText() throws {
        let field = try row(control: #"{"kind":"textField","secure":false,"keyboard":"numberPad"}"#, defaultValue: "5")
        #expect(try RowInput.text(" 42 ").value(for: field) == .string(" 42 "))
        #expect(throws: RowInput.Refused.self) { try RowInput.switchOn(true).value(for: field) }
        #expect(throws: RowInput.Refused.self) { try RowInput.number("4").value(for: field) }
    }

    @Test func inputIsReadStrictly() throws {
        #expect(try RowInput(json: JSONParser.parse(#"{"on":true}"#)) == .switchOn(true))
        #expect(try RowInput(json: JSONParser.parse(#"{"option":3}"#)) == .option(3))
        for bad in [#"{"on":1}"#, #"{"option":"3"}"#, #"{"text":"a","on":true}"#, #"[]"#] {
            #expect(throws: RowInput.Refused.self, "\(bad)") { try RowInput(json: JSONParser.parse(bad)) }
        }
    }

    @Test func plainValuesShowTheirTypeAndText() throws {
        #expect(PlainValue(wire: .integer(42)) == PlainValue(type: "integer", text: "42"))
        #expect(PlainValue(wire: .real(1)) == PlainValue(type: "real", text: "1.0"))
        #expect(PlainValue(wire: .bool(false)) == PlainValue(type: "boolean", text: "false"))
        #expect(PlainValue(wire: ["$date": "2026-11-21T10:00:00Z"]) == PlainValue(type: "date", text: "2026-11-21T10:00:00Z"))
        #expect(PlainValue(wire: ["$data": "AAE="]) == PlainValue(type: "data", text: "0001"), "data in hex, as defaults writes it")
        #expect(PlainValue(wire: [1, 2]) == PlainValue(type: "array", text: "[1,2]"))
        #expect(!PlainValue(wire: ["a": 1]).isScalar)
    }

    @Test("the plain editor reads ValueSyntax's boolean words and hex data, as every other user does")
    func thePlainEditorTakesTheSharedValueSyntax() throws {
        for (word, typeFlag, setting) in ValueSyntaxCases.booleanWords {
            let meaning = setting
            _ = (typeFlag, setting)
            if let meaning {
                #expect(try PlainValue.wire(type: "boolean", text: word) == .bool(meaning), "\(word.debugDescription)")
            } else {
                #expect(throws: RowInput.Refused.self, "\(word.debugDescription)") { try PlainValue.wire(type: "boolean", text: word) }
            }
        }
        for (text, bytes) in ValueSyntaxCases.hexData {
            if let bytes {
                #expect(try PlainValue.wire(type: "data", text: text) == ["$data": .string(Data(bytes).base64EncodedString())], "\(text.debugDescription)")
                #expect(PlainValue(wire: ["$data": .string(Data(bytes).base64EncodedString())]).text == ValueSyntax.hex(bytes))
            } else {
                #expect(throws: RowInput.Refused.self, "\(text.debugDescription)") { try PlainValue.wire(type: "data", text: text) }
            }
        }
    }

    @Test func plainTextBecomesAValueOfTheGivenType() throws {
        #expect(try PlainValue.wire(type: "integer", text: " 6 ") == .integer(6))
        #expect(try PlainValue.wire(type: "real", text: "2") == .real(2))
        #expect(try PlainValue.wire(type: "boolean", text: "yes") == .bool(true))
        #expect(try PlainValue.wire(type: "string", text: " 6 ") == .string(" 6 "))
        #expect(throws: RowInput.Refused.self) { try PlainValue.wire(type: "integer", text: "6.5") }
        #expect(throws: RowInput.Refused.self) { try PlainValue.wire(type: "array", text: "[]") }
    }

    @Test("a value's tree and back keeps every element's type; a bad tree is refused with the element named, never trapped")
    func treesRoundTripAndRefuseByElement() throws {
        let value: PlistValue = .dictionary([
            "list": .array([.integer(1), .real(1), .string("1"), .bool(true), .data(Data([1, 255])), .array([])]),
            "when": .date(Date(timeIntervalSince1970: 1_800_000_000)), "empty": .dictionary([:]),
        ])
        #expect(try PlainValue.value(tree: PlainValue.tree(value)) == value)
        #expect(try PlainValue.value(tree: ["type": "integer", "text": " 7 "]) == .integer(7), "a scalar is a tree of one element")

        func refusal(_ tree: JSON) -> String? {
            do { _ = try PlainValue.value(tree: tree); return nil } catch { return (error as? RowInput.Refused)?.description ?? "\(error)" }
        }
        let entry = { (key: String, value: JSON) -> JSON in ["key": .string(key), "value": value] }
        #expect(refusal(["type": "dictionary", "entries": [entry("warp", ["type": "real", "text": "fast"])]]) == #"warp: "fast" is not a number"#)
        #expect(refusal(["type": "array", "items": [["type": "string", "text": "a"], ["type": "integer", "text": "b"]]])
            == #"[1]: "b" is not a whole number"#)
        #expect(refusal(["type": "dictionary", "entries": [entry("a", ["type": "string", "text": ""]), entry("a", ["type": "string", "text": ""])]])
            == #"the dictionary has the key "a" twice"#)
        #expect(refusal(["type": "dictionary", "entries": [entry("", ["type": "string", "text": ""])]]) == "an entry of the dictionary has an empty key")
        #expect(refusal(["type": "array"]) != nil)
        #expect(refusal(["items": []]) == "the value has no type")
        // Deeper than the daemon's own limit for files: refused, not recursed into without end.
        var deep: JSON = ["type": "array", "items": []]
        for _ in 0...PlainValue.maximumTreeDepth { deep = ["type": "array", "items": [deep]] }
        #expect(refusal(deep) == "nested deeper than \(PlainValue.maximumTreeDepth) levels")
    }

    @Test("search matches each typed word at the start of a word of the title or of the key split at capitals, accents aside")
    func searchMatchesByWords() {
        func matches(_ query: String, _ title: String, key: String = "") -> Bool {
            SearchWords(query).matches(SearchWords(title) + SearchWords(key))
        }
        #expect(matches("tea", "Favorite Tea"))
        #expect(!matches("tea", "Favorite Alien", key: "favoriteAlien"))
        #expect(!matches("rite", "Favorite Tea"))
        #expect(matches("fav cap", "Favorite Captain"))
        #expect(matches("alien", "", key: "favoriteAlien"))
        #expect(matches("the", "Thé préféré") && matches("pref", "Thé préféré"))
        #expect(matches("warp 2", "Warp Factor 2"))
        #expect(SearchWords(" ,. ").isEmpty)
    }

    @Test func theBrowsersLanguagesPickABundleFolder() {
        #expect(LanguageChoice.preferred("fr-CA,fr;q=0.9,en;q=0.8,*;q=0.1") == ["fr-CA", "fr", "en"])
        #expect(LanguageChoice.preferred("en;q=0.5, de") == ["de", "en"])
        #expect(LanguageChoice.best(of: ["en", "fr"], for: ["fr-CA", "en"]) == "fr")
        #expect(LanguageChoice.best(of: ["en", "pt_BR", "pt"], for: ["pt-BR"]) == "pt_BR")
        #expect(LanguageChoice.best(of: ["en", "fr"], for: ["ja"]) == nil)
    }

    @Test func theTokenLeavesTheAddressAndNothingElseDoes() {
        #expect(TokenRules.withoutToken(path: "/", query: "token=abc") == "/")
        #expect(TokenRules.withoutToken(path: "/apps/d", query: "language=fr&token=abc&pane=More.plist") == "/apps/d?language=fr&pane=More.plist")
        #expect(TokenRules.same("abc", "abc"))
        #expect(!TokenRules.same("abd", "abc"))
        #expect(!TokenRules.same("ab", "abc"))
        // The launch form, and the page it may move to: only a path of this app, safe in an attribute.
        #expect(TokenRules.form("token=abc&next=%2Fapps%2Fcom.example.a%3Flanguage%3Dfr") == ["token": "abc", "next": "/apps/com.example.a?language=fr"])
        #expect(TokenRules.form("a+b=c+d&broken=%zz") == ["a b": "c d"])
        #expect(TokenRules.safePath("/apps/com.example.a") == "/apps/com.example.a")
        for unsafe in ["//evil.example/x", "https://evil.example", "apps", "/a\"onload=\"x", "/<script>", "/a b", "/a\\b", "/a`b", ""] {
            #expect(TokenRules.safePath(unsafe) == "/", "\(unsafe)")
        }
    }

    @Test("the line printed at start: the address with its token only to a terminal; elsewhere the address alone and the launch page to open")
    func theTokenIsPrintedOnlyToATerminal() {
        let opening = SettingsServer.Opening(
            address: "http://127.0.0.1:7641/", token: "0123abcd", launchFile: "/run/user/1000/defaultsd/settings.html")
        #expect(opening.line(toTerminal: true) == "http://127.0.0.1:7641/?token=0123abcd")
        #expect(opening.line(toTerminal: false) == "http://127.0.0.1:7641/ (open it with: xdg-open /run/user/1000/defaultsd/settings.html)")
        // A path a shell would split is printed as one word, ready to paste.
        let spaced = SettingsServer.Opening(address: "http://127.0.0.1:7641/", token: "0123abcd", launchFile: "/run/Jo's files/settings.html")
        #expect(spaced.line(toTerminal: false) == #"http://127.0.0.1:7641/ (open it with: xdg-open '/run/Jo'\''s files/settings.html')"#)
        let without = SettingsServer.Opening(address: "http://127.0.0.1:7641/", token: "0123abcd", launchFile: nil)
        #expect(!without.line(toTerminal: false).contains("0123abcd"))
        #expect(!"\(opening)".contains("0123abcd"), "interpolated, as a log line would, it has no token")
    }

    @Test("a launch token is traded once: the trade hands over the next token, and the same token again is refused")
    func aLaunchTokenIsTradedOnce() {
        let launch = LaunchToken()
        let first = launch.value
        #expect(first.count == 32)
        var handed: [String] = []
        let accepted = launch.trade(first) { handed.append($0) }
        #expect(accepted)
        #expect(handed == [launch.value])
        #expect(launch.value != first)
        let again = launch.trade(first) { handed.append($0) }
        let wrong = launch.trade(String(launch.value.reversed())) { handed.append($0) }
        #expect(!again && !wrong)
        #expect(handed.count == 1, "a refused trade writes nothing")
    }

    @Test func aPageHearsWhetherTheDaemonIsReachableThenEachChangeByDomainOnly() async {
        #expect(LiveHub.Notice.changed(domain: "com.example.app").text == #"{"domain":"com.example.app","type":"changed"}"#)
        let hub = LiveHub()
        let (notices, leave) = hub.join()
        hub.send(.daemon(reachable: false))  // the state it started with: not repeated
        hub.send(.daemon(reachable: true))
        hub.send(.changed(domain: "a"))
        hub.send(.bundlesChanged)
        #expect(hub.pageCount == 1)
        leave()
        var seen: [LiveHub.Notice] = []
        for await notice in notices { seen.append(notice) }
        #expect(seen == [.daemon(reachable: false), .daemon(reachable: true), .changed(domain: "a"), .bundlesChanged])
        #expect(hub.pageCount == 0)
    }
}

/// The GSettings schema check fails closed: a value is written unchecked only where there is no
/// schema (status 3) or no tool; a tool that is killed, stopped or answers an unknown status
/// refuses the value.
@Suite(.ownThreads) struct GSettingsSchemaCheckTests {
    func tool(_ script: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("schema-tool-\(UUID().uuidString)").path
        try ("#!/bin/sh\n" + script + "\n").write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    func refusal(_ script: String) async throws -> String? {
        let path = try tool(script)
        defer { unlink(path) }
        return await GSettingsSchemas(tool: path).refusal(of: .integer(7), for: "volume", in: "org.example.app")
    }

    @Test func theToolsVerdictIsTaken() async throws {
        #expect(try await refusal("exit 0") == nil)
        #expect(try await refusal("exit 3") == nil, "no schema: any value is written")
        #expect(try await refusal("echo '7 is out of the range of volume: 0 to 5' >&2; exit 1") == "7 is out of the range of volume: 0 to 5")
        #expect(await GSettingsSchemas(tool: nil).refusal(of: .integer(7), for: "volume", in: "org.example.app") == nil)
    }

    @Test func aCheckThatCouldNotBeMadeRefusesTheValue() async throws {
        let killed = try await refusal("kill -9 $$")
        #expect(killed?.hasPrefix("volume could not be checked against its GSettings schema") == true, "\(killed ?? "nil")")
        let odd = try await refusal("exit 64")
        #expect(odd?.contains("status 64") == true, "\(odd ?? "nil")")
    }
}
