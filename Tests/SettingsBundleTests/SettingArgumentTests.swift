import DefaultsCore
import Foundation
import SettingsBundles
import TestThreads
import Testing
import ValueSyntaxCases

/// A setting named by key or title, a bare word read as the row's control stores it, and the
/// pane's JSON read back as the pane that was written.
@Suite(.ownThreads) struct SettingArgumentTests {
    static func pane() throws -> (TemporaryBundle, PaneDescription) {
        let bundle = try TemporaryBundle()
        try bundle.writePage(
            "Root.plist",
            [
                Spec.group("Engine"),
                [
                    "Type": "PSToggleSwitchSpecifier", "Key": "engine", "Title": "Engine", "DefaultValue": "Disabled",
                    "TrueValue": "Engaged", "FalseValue": "Disabled",
                ],
                Spec.toggle("warp", "Warp Drive", default: true),
                ["Type": "PSSliderSpecifier", "Key": "speed", "DefaultValue": 5.0, "MinimumValue": 1, "MaximumValue": 10],
                ["Type": "PSSliderSpecifier", "Key": "crew", "DefaultValue": 40, "MinimumValue": 1, "MaximumValue": 400],
                [
                    "Type": "PSMultiValueSpecifier", "Key": "interval", "Title": "Interval", "DefaultValue": 30,
                    "Values": [10, 30], "Titles": ["Ten Seconds", "Thirty Seconds"], "ShortTitles": ["10s", "30s"],
                ],
                ["Type": "PSTextFieldSpecifier", "Key": "name", "Title": "Name"],
                ["Type": "PSTitleValueSpecifier", "Key": "version", "Title": "Version", "DefaultValue": "1.0"],
                ["Type": "PSTextFieldSpecifier", "Key": "callSign", "Title": "Name"],
                Spec.child("More", file: "More"),
            ])
        try bundle.writePage("More.plist", [Spec.toggle("deep", "Deep Space")])
        let loaded = try bundle.load()
        return (bundle, try #require(loaded.describe { _, _ in nil }))
    }

    @Test func aSettingIsNamedByItsKeyOrByATitleOnlyOneKeyHas() throws {
        let (_, pane) = try Self.pane()
        #expect(try pane.editableRow(named: "interval").key == "interval")
        #expect(try pane.editableRow(named: "warp drive").key == "warp")
        // Child panes' rows count too.
        #expect(try pane.editableRow(named: "Deep Space").key == "deep")
        #expect(throws: SettingArgumentError.self) { try pane.editableRow(named: "Name") }
        do {
            _ = try pane.editableRow(named: "Name")
            Issue.record("an ambiguous title was accepted")
        } catch {
            #expect(error.description == "\"Name\" is the title of several settings (callSign, name); name one by its key")
        }
        do {
            _ = try pane.editableRow(named: "Intervall")
            Issue.record("an unknown name was accepted")
        } catch {
            #expect(
                error.description == """
                    The bundle has no setting "Intervall"; its settings are: engine ("Engine"), warp ("Warp Drive"), speed, \
                    crew, interval ("Interval"), name ("Name"), callSign ("Name"), deep ("Deep Space")
                    """)
        }
        do {
            _ = try pane.editableRow(named: "version")
            Issue.record("a title value was accepted")
        } catch {
            #expect(error.description == "version is shown by Settings but cannot be changed there (PSTitleValueSpecifier)")
        }
    }

    @Test("a switch row takes ValueSyntax's boolean words, as every other user does")
    func aSwitchTakesTheSharedBooleanWords() throws {
        let (_, pane) = try Self.pane()
        for (word, typeFlag, setting) in ValueSyntaxCases.booleanWords {
            let meaning = setting
            _ = (typeFlag, setting)
            if let meaning {
                #expect(try pane.editableRow(named: "warp").value(fromWord: word) == .bool(meaning), "\(word.debugDescription)")
            } else {
                #expect(throws: SettingArgumentError.self, "\(word.debugDescription)") { try pane.editableRow(named: "warp").value(fromWord: word) }
            }
        }
    }

    @Test("a switch whose value is neither of its values shows as Foundation's boolValue says")
    func settingsBoolValueIsFoundations() {
        for text in ValueSyntaxCases.boolValueStrings {
            #expect(PlistValue.string(text).settingsBoolValue == NSString(string: text).boolValue, "\(text.debugDescription)")
        }
    }

    @Test func aBareWordIsWhatTheRowsControlStores() throws {
        let (_, pane) = try Self.pane()
        func value(_ name: String, _ word: String) throws -> PlistValue { try pane.editableRow(named: name).value(fromWord: word) }
        #expect(try value("engine", "on") == "Engaged")
        #expect(try value("engine", "NO") == "Disabled")
        #expect(try value("engine", "Engaged") == "Engaged")
        #expect(try value("warp", "off") == .bool(false))
        #expect(try value("warp", "true") == .bool(true))
        #expect(try value("speed", "7") == .real(7))
        #expect(try value("crew", "120") == .integer(120))
        #expect(try value("crew", "2.5") == .real(2.5))
        #expect(try value("interval", "10") == .integer(10))
        #expect(try value("interval", "thirty seconds") == .integer(30))
        #expect(try value("interval", "10s") == .integer(10))
        #expect(try value("name", "42") == "42")
        #expect(throws: SettingArgumentError.self) { try value("warp", "maybe") }
        #expect(throws: SettingArgumentError.self) { try value("speed", "fast") }
        do {
            _ = try pane.editableRow(named: "interval").value(fromWord: "15")
            Issue.record("15 was accepted")
        } catch {
            #expect(error.description == "interval must be one of: Ten Seconds (10), Thirty Seconds (30)")
        }
    }

    @Test func theJSONOfAPaneReadsBackAsThePane() throws {
        let (_, pane) = try Self.pane()
        var writer = JSONWriter()
        pane.writeJSON(into: &writer)
        let read = try PaneDescription(json: JSONParser.parse(String(decoding: writer.bytes, as: UTF8.self)))
        #expect(read.renderedText() == pane.renderedText())
        #expect(read.allRows.map(\.key) == pane.allRows.map(\.key))
        #expect(read.allRows.map(\.control) == pane.allRows.map(\.control))
        #expect(read.allRows.map(\.value) == pane.allRows.map(\.value))
        #expect(read.allRows.map(\.defaultValue) == pane.allRows.map(\.defaultValue))
        #expect(read.allRows.map(\.location) == pane.allRows.map(\.location))
        #expect(read.allRows.first { $0.key == "crew" }?.defaultValue == .integer(40))
        #expect(throws: DefaultsError.self) { try PaneDescription(json: .object(["sections": .string("none")])) }
    }

    @Test func aForcedRowIsLockedInItsJSONAndRefusedByName() throws {
        let (bundle, _) = try Self.pane()
        let pane = try #require(try bundle.load().describe { key, _ in
            key == "speed" ? StoredValue(.real(9), origin: "com.example.bridge", isForced: true) : nil
        })
        var writer = JSONWriter()
        pane.writeJSON(into: &writer)
        let json = String(decoding: writer.bytes, as: UTF8.self)
        #expect(json.contains(#""value":9.0,"masked":false,"source":"managed","origin":"com.example.bridge","locked":true"#))
        let read = try PaneDescription(json: JSONParser.parse(json))
        #expect(read.allRows.first { $0.key == "speed" }?.value == CurrentValue(value: .real(9), source: .managed(origin: "com.example.bridge")))
        #expect(read.allRows.first { $0.key == "warp" }?.value?.isLocked == false)
        do {
            _ = try read.editableRow(named: "speed")
            Issue.record("a forced row was editable")
        } catch {
            #expect(error.description == "speed of com.example.bridge is set by your administrator and cannot be changed")
        }
        #expect(read.renderedText().contains("9 (1–10) (set by your administrator)"))
    }

    @Test func keysAndChoicesAreShownOnRequest() throws {
        let (_, pane) = try Self.pane()
        // The style is applied to each key, not to padding (a terminal's escapes take no columns,
        // these brackets do, so the child pane's row without a key sits two columns left).
        let text = pane.renderedText(TextRenderingOptions(showsKeys: true, showsChoices: true, keyStyle: { "<\($0)>" }))
        #expect(
            text == """
                ENGINE
                  Engine      <engine>    OFF
                  Warp Drive  <warp>      ON
                              <speed>     5 (1–10)
                              <crew>      40 (1–400)
                  Interval    <interval>  30s
                        Ten Seconds = 10
                      ✓ Thirty Seconds = 30
                  Name        <name>
                  Version     <version>   1.0
                  Name        <callSign>
                  More                  >

                """)
        // Without the options, the layout is the Settings app's alone.
        #expect(pane.renderedText().contains("  Interval    30s\n  Name\n"))
    }
}
