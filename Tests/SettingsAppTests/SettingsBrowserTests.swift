import DaemonTestSupport
import DefaultsCore
import Foundation
import LineSocket
import LocalServices
import TestThreads
import Testing
import WebDriver

/// The Settings app in a real headless Chromium (Debian's `chromium` and `chromium-driver`, driven
/// over W3C WebDriver from Swift), over the real `defaultsd-settings` and the real daemon. Every
/// change is checked where it lands: in the daemon, with its type.
@Suite(.serialized, .enabled(if: Chromium.isInstalled, "needs chromium and chromium-driver (make test installs them)"), .ownThreads)
struct SettingsBrowserTests {
    static let bridge = "com.example.BridgeControl"

    /// A daemon with Bridge Control installed, the app, and a browser on the app.
    final class Stage {
        let daemon: DaemonProcess
        let app: SettingsAppProcess
        let browser: Chromium

        init(
            arguments: [String] = [], languages: String = "en-US,en", defaultPaths: Bool = false, appEnvironment: [String: String] = [:]
        ) async throws {
            daemon = try DaemonProcess(arguments: arguments, defaultPaths: defaultPaths)
            try Self.register(SettingsBrowserTests.bridge, path: SharedData.bridgeControlBundle, on: daemon)
            app = try SettingsAppProcess(daemon: daemon, environment: appEnvironment)
            browser = try await Chromium.start(languages: languages)
        }

        static func register(_ domain: String, path: String, on daemon: DaemonProcess) throws {
            let socket = try daemon.connect()
            try socket.send(#"{"op":"registerBundle","domain":"\#(domain)","path":"\#(path)"}"#)
            let answer = try socket.readResponse()
            guard answer.contains(#""ok":true"#) else { throw LineSocket.Failure(description: answer) }
        }

        /// Opens `path` as an app or a person would: with the token, which the app trades for its cookie.
        func open(_ path: String) async throws {
            try await browser.navigate(to: app.address(path))
            try await browser.wait(until: "return document.body.dataset.rendered !== undefined", timeout: 10, "the first render")
        }

        func request(_ line: String) throws -> String {
            let socket = try daemon.connect()
            try socket.send(line)
            return try socket.readResponse()
        }

        func value(_ key: String, in domain: String = SettingsBrowserTests.bridge) throws -> PlistValue? {
            try daemon.storedValues(domain)?[key]
        }

        /// Waits until the daemon holds `expected` for `key` (the page's write is asynchronous),
        /// for as long as the browser's own waits.
        func waitForValue(_ key: String, _ expected: PlistValue?, in domain: String = SettingsBrowserTests.bridge) async throws {
            let deadline = Date(timeIntervalSinceNow: Chromium.defaultWait)
            while try value(key, in: domain) != expected {
                guard Date() < deadline else { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let held = try value(key, in: domain)
            #expect(held == expected, "\(key): the daemon holds \(held.map { "\($0)" } ?? "nothing")")
        }

        func finish() {
            browser.quit()
            app.stop()
        }
    }

    @Test func theRootListsTheAppsOfInstalledBundlesAndTheOtherDomains() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        for domain in ["com.example.AppPrefs", "com.example.InAppSettingsKit"] {
            try Stage.register(domain, path: SharedData.bridgeControlBundle, on: stage.daemon)
        }
        _ = try stage.request(#"{"op":"set","domain":"com.example.plain","key":"count","value":5}"#)
        try await stage.open("/")
        let address = try await stage.browser.currentAddress
        #expect(address == stage.app.origin + stage.app.prefix + "/", "the token left the address")
        let apps = try await stage.browser.run("return [...document.querySelectorAll('#apps .app')].map(e => e.dataset.domain)") as? [String]
        #expect(apps?.sorted() == ["com.example.AppPrefs", "com.example.BridgeControl", "com.example.InAppSettingsKit"])
        let others = try await stage.browser.run("return [...document.querySelectorAll('#other-domains .domain')].map(e => e.dataset.domain)") as? [String]
        #expect(others == ["com.example.plain"])
    }

    @Test("the launch page an app hands to xdg-open opens its pane, and the token is in no address; opened again, it opens again, and a reload keeps the page")
    func theLaunchPageOpensThePane() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        let launch = stage.app.launchFile
        let used = stage.app.token
        try await stage.browser.navigate(to: "file://\(launch)#/apps/\(Self.bridge)")
        try await stage.browser.wait(until: "return document.body?.dataset.rendered !== undefined", timeout: 10, "the pane")
        #expect(try await stage.browser.text("h1") == Self.bridge, "the app's pane")
        let address = try await stage.browser.currentAddress
        #expect(address == stage.app.origin + stage.app.prefix + "/apps/" + Self.bridge)
        #expect(!address.contains(used))
        #expect(try String(contentsOfFile: launch, encoding: .utf8).contains(used) == false, "the page that held the used token is gone")
        // Loading the page again is the cookie's business: no token is needed, and none is spent.
        let next = stage.app.token
        try await stage.browser.navigate(to: address)
        try await stage.browser.wait(until: "return document.body?.dataset.rendered !== undefined", timeout: 10, "the pane again")
        #expect(try await stage.browser.text("h1") == Self.bridge)
        #expect(stage.app.token == next)
        // The next app to open the Settings app gets the new launch page, which opens it again.
        try await stage.browser.navigate(to: "file://\(launch)")
        try await stage.browser.wait(
            until: "return location.pathname === '\(stage.app.prefix)/' && document.body?.dataset.rendered !== undefined", timeout: 10, "the root")
        #expect(try await stage.browser.currentAddress == stage.app.origin + stage.app.prefix + "/")
        // The used token, replayed from another tab or a log, is refused.
        try await stage.browser.navigate(to: stage.app.origin + "/?token=" + used)
        #expect(try await stage.browser.text("body") == "forbidden\n")
    }

    @Test func aBrowserWithoutTheTokenIsShownNothing() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.browser.navigate(to: stage.app.origin + "/apps/" + Self.bridge)
        #expect(try await stage.browser.text("body") == "forbidden\n")
    }

    @Test func eachControlChangesTheDaemonsValueWithItsType() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser

        try await b.click("#row-Root_plist-4-input")  // Warp Drive, on by default
        try await stage.waitForValue("warp", .bool(false))

        try await b.run("const s = document.querySelector('#row-Root_plist-6-input'); s.value = '7'; s.dispatchEvent(new Event('change'));")
        try await stage.waitForValue("warpFactor", .real(7))  // the bundle's DefaultValue is a real

        try await b.type("#row-Root_plist-1-input", "Jean-Luc Picard" + Chromium.enterKey)
        try await stage.waitForValue("officer", .string("Jean-Luc Picard"))

        try await b.click("#row-Root_plist-3-open")  // Rank: opens the list of titles
        try await b.wait(until: "return document.querySelector('.choices') !== null", "the list of ranks")
        #expect(try await b.text("h1") == "Rank")
        try await b.click("#row-Root_plist-3-option-4")
        try await stage.waitForValue("rank", .string("Captain"))
        try await b.wait(until: "return document.querySelector('#row-Root_plist-3-option-4').getAttribute('aria-checked') === 'true'", "the check mark")
    }

    @Test func aValueTheDaemonRefusesShowsItsMessageAndTheControlReturns() async throws {
        let stage = try await Stage(arguments: ["--max-domain-bytes", "2048"])
        defer { stage.finish() }
        _ = try stage.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"officer","value":"Kirk"}"#)
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        try await b.replaceText("#row-Root_plist-1-input", with: String(repeating: "x", count: 3000) + Chromium.enterKey)
        try await b.wait(until: "return document.querySelector('#row-Root_plist-1 .error').textContent !== ''", "the daemon's message")
        let message = try await b.text("#row-Root_plist-1 .error") ?? ""
        #expect(message.contains("2048"), "the daemon's own message: \(message)")
        #expect(try await b.run("return document.querySelector('#row-Root_plist-1-input').value") as? String == "Kirk")
        #expect(try stage.value("officer") == .string("Kirk"))
    }

    @Test func aChangeMadeInATerminalAppearsWithinASecond() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.open("/apps/\(Self.bridge)")
        let defaults = URL(fileURLWithPath: SettingsAppProcess.binary).deletingLastPathComponent().appendingPathComponent("defaults").path
        let run = try FinishedRun.run(defaults, ["write", Self.bridge, "officer", "Kathryn Janeway"], environment: stage.daemon.clientEnvironment)
        #expect(run.status == 0, "\(run.output)")
        try await stage.browser.wait(
            until: "return document.querySelector('#row-Root_plist-1-input').value === 'Kathryn Janeway'", timeout: 1, "the new value on the page")
        // A key with a bundle default (rank: Ensign) is marked Changed as soon as a terminal changes it.
        _ = try FinishedRun.run(defaults, ["write", Self.bridge, "rank", "Captain"], environment: stage.daemon.clientEnvironment)
        try await stage.browser.wait(
            until: "return document.querySelector('#row-Root_plist-3 .changed')?.textContent === 'Changed'", timeout: 1, "Changed on rank")
    }

    @Test func aChildPaneOpensWithItsTitleAndTheBackLinkReturns() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        try await b.click("[data-kind=childPane]")
        try await b.wait(until: "return document.querySelector('.pane').dataset.file === 'More.plist'", "the child pane")
        #expect(try await b.text("h1") == "More Settings")
        #expect(try await b.text("#row-More_plist-1 .title") == "Favorite Tea")
        #expect(try await b.text("#back-title") == Self.bridge)
        try await b.click("#back")
        try await b.wait(until: "return document.querySelector('.pane').dataset.file === 'Root.plist'", "the root pane again")
    }

    @Test func aFrenchBrowserGetsTheFrenchPaneAndCanSwitch() async throws {
        let stage = try await Stage(languages: "fr-FR,fr;q=0.9")
        defer { stage.finish() }
        try await stage.open("/apps/\(Self.bridge)?pane=More.plist")
        let b = stage.browser
        #expect(try await b.text("h1") == "Autres réglages")
        #expect(try await b.text("#row-More_plist-1 .title") == "Thé préféré")
        #expect(try await b.run("return document.getElementById('language').value") as? String == "fr")
        try await b.run("const l = document.getElementById('language'); l.value = 'en'; l.dispatchEvent(new Event('change'));")
        try await b.wait(until: "return document.querySelector('h1').textContent === 'More Settings'", "the English pane")
    }

    @Test("a French browser gets the app's own words in French, and a pane switched to English gets them in English")
    func theAppsOwnWordsAreFrenchInAFrenchPane() async throws {
        let stage = try await Stage(languages: "fr-FR,fr;q=0.9")
        defer { stage.finish() }
        _ = try stage.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"rank","value":"Captain"}"#)
        try await stage.open("/")
        let b = stage.browser
        #expect(try await b.text("h1") == "Réglages")
        #expect(try await b.run("return document.getElementById('search-input').placeholder") as? String == "Rechercher")
        #expect(try await b.text("#other-domains h2") == "Autres domaines")
        #expect(try await b.run("return document.title") as? String == "Réglages")
        try await b.replaceText("#search-input", with: "zzz")
        try await b.wait(until: "return document.querySelector('.row.disabled .title')?.textContent === 'Aucun résultat'", "Aucun résultat")

        try await stage.open("/apps/\(Self.bridge)")
        #expect(try await b.text("#row-Root_plist-3 .changed") == "Modifié")
        #expect(try await b.text("#row-Root_plist-3 .reset") == "Rétablir la valeur par défaut")
        #expect(try await b.text("#back-title") == "Réglages")
        try await b.run("const l = document.getElementById('language'); l.value = 'en'; l.dispatchEvent(new Event('change'));")
        try await b.wait(until: "return document.querySelector('#row-Root_plist-3 .changed')?.textContent === 'Changed'", "the English words")
        #expect(try await b.text("#row-Root_plist-3 .reset") == "Reset to default")
        #expect(try await b.text("#back-title") == "Settings")
    }

    @Test func aSecureValueNeverReachesTheBrowser() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        let secret = "SECRET-31337"
        _ = try stage.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"authorizationCode","value":"\#(secret)"}"#)
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        // A second live connection from the page, recording every message.
        try await b.run("window.seen = []; const w = new WebSocket(`ws://${location.host}${document.documentElement.dataset.base}/live`); w.onmessage = (m) => seen.push(m.data); window.recorder = w;")
        try await b.wait(until: "return window.recorder.readyState === 1", "the recorder")
        #expect(try await b.run("return document.querySelector('#row-Root_plist-2-input').placeholder") as? String == "Set — type to replace")
        _ = try stage.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"authorizationCode","value":"\#(secret)-2"}"#)
        try await b.wait(until: "return window.seen.some(m => m.includes('changed'))", "the change notice")
        let api = try await b.run("""
            const r = await Promise.all(['/api/apps/com.example.BridgeControl', '/api/domains/com.example.BridgeControl', '/api/search?q=auth']
              .map(p => fetch(document.documentElement.dataset.base + p).then(a => a.text())));
            return r.join('\\n');
            """.replacingOccurrences(of: "const r = await", with: "return (async () => { const r = await").replacingOccurrences(of: "return r.join('\\n');", with: "return r.join('\\n'); })();"))
        let everything = [try await b.pageSource, api as? String ?? "", (try await b.run("return window.seen.join('\\n')") as? String) ?? ""].joined()
        #expect(!everything.contains(secret))
        #expect(everything.contains("authorizationCode"), "the API answers were read")
        try await b.type("#row-Root_plist-2-input", "4242" + Chromium.enterKey)
        try await stage.waitForValue("authorizationCode", .string("4242"))
    }

    @Test func resetToDefaultRemovesTheUsersValue() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        _ = try stage.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"rank","value":"Captain"}"#)
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        #expect(try await b.text("#row-Root_plist-3 .detail") == "Captain")
        try await b.click("#row-Root_plist-3 .reset")
        try await stage.waitForValue("rank", nil)
        try await b.wait(until: "return document.querySelector('#row-Root_plist-3 .detail').textContent === 'Ensign'", "the default again")
        #expect(try await b.run("return document.querySelector('#row-Root_plist-3 .reset') === null") as? Bool == true)
    }

    @Test("a slider shows its value and follows a change; Changed and its reset appear only where the bundle gives a default")
    func sliderValuesAndResetOnlyWithADefault() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        _ = try stage.request(#"{"op":"apply","domain":"com.example.BridgeControl","set":{"officer":"Kirk","rank":"Captain"}}"#)
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        let slider = "[data-key=warpFactor] output.slider-value"
        #expect(try await b.run("return document.querySelector('\(slider)').textContent") as? String == "5")
        _ = try stage.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"warpFactor","value":7.25}"#)
        try await b.wait(until: "return document.querySelector('\(slider)').textContent === '7.25'", "the slider's new value")
        // rank has a default (Ensign): Changed and its reset. officer has none: neither.
        #expect(try await b.run("return document.querySelector('[data-key=rank] .reset') !== null") as? Bool == true)
        #expect(try await b.run("return document.querySelector('[data-key=officer] .reset') === null && document.querySelector('[data-key=officer] .changed') === null") as? Bool == true)
    }

    @Test("an app's desktop entry names it and gives its icon, on the root list and its pane, in the browser's language")
    func desktopEntryNameAndIcon() async throws {
        for (languages, name) in [("en-US,en", "Bridge Control"), ("fr-FR,fr", "Contrôle de passerelle")] {
            let stage = try await Stage(languages: languages)
            defer { stage.finish() }
            let data = stage.daemon.home + "/.local/share"
            try FileManager.default.createDirectory(atPath: data + "/applications", withIntermediateDirectories: true)
            try FileManager.default.createDirectory(atPath: data + "/icons/hicolor/48x48/apps", withIntermediateDirectories: true)
            try "[Desktop Entry]\nType=Application\nName=Bridge Control\nName[fr]=Contrôle de passerelle\nIcon=bridge-control\n"
                .write(toFile: data + "/applications/\(Self.bridge).desktop", atomically: true, encoding: .utf8)
            // A 1×1 PNG.
            try Data(base64Encoded: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")!
                .write(to: URL(fileURLWithPath: data + "/icons/hicolor/48x48/apps/bridge-control.png"))
            try await stage.open("/")
            let b = stage.browser
            let row = "[data-domain='\(Self.bridge)']"
            #expect(try await b.text("\(row) .title") == name)
            try await b.wait(until: "const i = document.querySelector(\"\(row) img\"); return i.complete && i.naturalWidth === 1", "the app's icon")
            #expect(try await b.run("return document.querySelector(\"\(row) img\").getAttribute('src').endsWith('/icon')") as? Bool == true)
            try await b.click(row)
            try await b.wait(until: "return document.querySelector('.pane') !== null", "the pane")
            #expect(try await b.text("#title") == name)
            #expect(try await b.text(".app-heading .title") == name)
            try await b.wait(until: "const i = document.querySelector('.app-heading img'); return i.complete && i.naturalWidth === 1", "the icon on the pane")
        }
    }

    @Test("a plain Foundation program's domain: its value shows in Other domains, and a change made there is what the program reads next")
    func aFoundationProgramsDomainIsEditable() async throws {
        // The daemon in its default folder, $XDG_CONFIG_HOME, where Foundation keeps its files.
        let stage = try await Stage(defaultPaths: true)
        defer { stage.finish() }
        let probe = URL(fileURLWithPath: SettingsAppProcess.binary).deletingLastPathComponent().appendingPathComponent("FoundationDefaultsProbe").path
        let environment = stage.daemon.clientEnvironment
        let domain = "com.example.foundation"
        #expect(try FinishedRun.run(probe, ["set", domain, "rank", "Captain"], environment: environment).output == "ok\n")
        try await stage.waitForValue("rank", .string("Captain"), in: domain)
        try await stage.open("/domains/\(domain)")
        let b = stage.browser
        try await b.wait(until: "return document.querySelector('#key-rank-input')?.value === 'Captain'", "the program's value on the page")
        try await b.replaceText("#key-rank-input", with: "Admiral" + Chromium.enterKey)
        try await stage.waitForValue("rank", .string("Admiral"), in: domain)
        // The daemon wrote the shared file: the program reads the change at its next start (or synchronize).
        _ = try stage.request(#"{"op":"synchronize"}"#)
        #expect(try FinishedRun.run(probe, ["get", domain, "rank"], environment: environment).output == "String Admiral\n")
    }

    @Test("Other domains edits a nested array and a dictionary element by element, at any depth, keeping every element's type; its columns are aligned")
    func theOtherDomainsEditorEditsNestedValues() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        let domain = "com.example.nested"
        _ = try stage.request(#"{"op":"apply","domain":"\#(domain)","set":{"list":[1,"two",[3.5]],"map":{"a":{"b":false}},"name":"x","count":5}}"#)
        try await stage.open("/domains/\(domain)")
        let b = stage.browser
        let value = { (key: String) in try stage.value(key, in: domain) }
        let changed = { (key: String, expected: PlistValue) async throws in try await stage.waitForValue(key, expected, in: domain) }

        // The type badges of every row start at the same place.
        let lefts = try await b.run("return [...new Set([...document.querySelectorAll('.plain .row > .type')].map(t => Math.round(t.getBoundingClientRect().left)))].length") as? Int
        #expect(lefts == 1)

        // The page writes a key's whole value and draws its row again when the daemon tells it of
        // the change; each step on that row waits for the drawing before the next, by marking a
        // field drawn before it (the fields keep their ids): an edit made in a field about to be
        // replaced is lost.
        let mark = { (selector: String) async throws in
            try await b.run("document.querySelector(\"\(selector)\").dataset.drawnBefore = 'yes';")
        }
        let drawnAgain = { (selector: String, what: String) async throws in
            try await b.wait(
                until: "const field = document.querySelector(\"\(selector)\"); return field !== null && field.dataset.drawnBefore === undefined",
                what)
        }

        // An element's text, its type kept: "two" → "deux", still a string; 1 stays an integer.
        try await mark("#key-list-2-add")
        try await b.replaceText("#key-list-1-input", with: "deux" + Chromium.enterKey)
        try await changed("list", .array([.integer(1), .string("deux"), .array([.real(3.5)])]))
        // An element added to the nested array, then typed as an integer.
        try await drawnAgain("#key-list-2-add", "the nested array")
        try await b.click("#key-list-2-add")
        try await changed("list", .array([.integer(1), .string("deux"), .array([.real(3.5), .string("")])]))
        try await b.wait(until: "return document.querySelector('#key-list-2-1-type') !== null", "the new element")
        try await b.run("const t = document.getElementById('key-list-2-1-type'); t.value = 'integer'; t.dispatchEvent(new Event('change'));")
        try await changed("list", .array([.integer(1), .string("deux"), .array([.real(3.5), .integer(0)])]))
        try await b.wait(until: "return document.querySelector('#key-list-2-1-input')?.value === '0'", "the integer element")
        try await mark("[data-path='0'] .down")
        try await b.replaceText("#key-list-2-1-input", with: "4" + Chromium.enterKey)
        try await changed("list", .array([.integer(1), .string("deux"), .array([.real(3.5), .integer(4)])]))
        // Reordered: the first element moved down; then removed.
        try await drawnAgain("[data-path='0'] .down", "the changed element")
        try await b.click("[data-path='0'] .down")
        try await changed("list", .array([.string("deux"), .integer(1), .array([.real(3.5), .integer(4)])]))
        try await b.wait(until: "return document.querySelector('#key-list-1-input')?.value === '1'", "the moved element")
        try await b.click("#key-list-tree > [data-path='1'] .remove")
        try await changed("list", .array([.string("deux"), .array([.real(3.5), .integer(4)])]))

        // The dictionary: a nested boolean switched on, an entry added and renamed, typed as a real.
        try await b.wait(until: "return document.querySelector('#key-map-0-0-input') !== null", "the nested dictionary")
        try await mark("#key-map-add")
        try await b.click("#key-map-0-0-input")
        try await changed("map", .dictionary(["a": .dictionary(["b": .bool(true)])]))
        try await drawnAgain("#key-map-add", "the dictionary")
        try await b.click("#key-map-add")
        try await changed("map", .dictionary(["a": .dictionary(["b": .bool(true)]), "key": .string("")]))
        try await b.wait(until: "return document.querySelector('#key-map-1-key-input')?.value === 'key'", "the new entry")
        try await mark("#key-map-1-type")
        try await b.replaceText("#key-map-1-key-input", with: "warp" + Chromium.enterKey)
        try await changed("map", .dictionary(["a": .dictionary(["b": .bool(true)]), "warp": .string("")]))
        try await drawnAgain("#key-map-1-type", "the renamed entry")
        // Typed as a real, the entry is written as the real zero.
        try await mark("#key-map-1-input")
        try await b.run("const t = document.getElementById('key-map-1-type'); t.value = 'real'; t.dispatchEvent(new Event('change'));")
        try await changed("map", .dictionary(["a": .dictionary(["b": .bool(true)]), "warp": .real(0)]))
        try await drawnAgain("#key-map-1-input", "the real entry")
        try await b.replaceText("#key-map-1-input", with: "9.5" + Chromium.enterKey)
        try await changed("map", .dictionary(["a": .dictionary(["b": .bool(true)]), "warp": .real(9.5)]))
        // A value of the wrong type is refused with the element named, and nothing changes (the
        // field a person is typing in is kept as the row is drawn again).
        try await b.replaceText("#key-map-1-input", with: "fast" + Chromium.enterKey)
        try await b.wait(until: "return document.getElementById('plain-error').textContent.includes('warp')", "the refusal")
        #expect(try value("map") == .dictionary(["a": .dictionary(["b": .bool(true)]), "warp": .real(9.5)]))
    }

    @Test func theOtherDomainsEditorKeepsEachType() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        _ = try stage.request(#"{"op":"apply","domain":"com.example.plain","set":{"count":5,"ratio":1.0,"name":"x","on":true,"list":[1,2]}}"#)
        try await stage.open("/domains/com.example.plain")
        let b = stage.browser
        #expect(try await b.run("return [...document.querySelectorAll('.plain .row')].map(r => r.dataset.key + ':' + r.dataset.type).join(' ')") as? String
            == "count:integer list:array name:string on:boolean ratio:real")
        try await b.replaceText("#key-count-input", with: "6" + Chromium.enterKey)
        try await stage.waitForValue("count", .integer(6), in: "com.example.plain")
        try await b.wait(until: "return document.querySelector('#key-ratio-input') !== null", "the editor again")
        try await b.replaceText("#key-ratio-input", with: "2" + Chromium.enterKey)
        try await stage.waitForValue("ratio", .real(2), in: "com.example.plain")
        try await b.type("#new-key", "added")
        try await b.run("document.getElementById('new-type').value = 'integer';")
        try await b.type("#new-value", "12" + Chromium.enterKey)
        try await stage.waitForValue("added", .integer(12), in: "com.example.plain")
        try await b.wait(until: "return document.querySelector('#key-name .delete') !== null", "the delete button")
        try await b.click("#key-name .delete")
        try await stage.waitForValue("name", nil, in: "com.example.plain")
    }

    @Test("a domain GSettings programs keep here shows its schema: a menu for an enum, and a value out of range refused with the reason",
          .enabled(if: SettingsRouteTests.schemaToolIsBuilt, "needs `make gsettings-backend` and gsettings-desktop-schemas"))
    func aGSettingsDomainShowsItsSchema() async throws {
        let domain = "org.gnome.desktop.interface"
        let stage = try await Stage(appEnvironment: ["DEFAULTSD_SCHEMA_TOOL": SettingsRouteTests.schemaTool])
        defer { stage.finish() }
        _ = try stage.request(#"{"op":"set","domain":"\#(domain)","key":"gtk-theme","value":"Adwaita"}"#)
        try await stage.open("/domains/\(domain)")
        let b = stage.browser
        #expect(try await b.run("return document.querySelector('#schema-color-scheme .title').textContent") as? String == "Color scheme")
        #expect(try await b.run("return [...document.querySelectorAll('#schema-color-scheme-input option')].map(o => o.value).join(' ')") as? String
            == "default prefer-dark prefer-light")
        #expect(try await b.run("return document.querySelector('#schema-text-scaling-factor .detail').textContent") as? String
            == "text-scaling-factor · default: 1.0 · 0.5 to 3")
        try await b.run("const menu = document.getElementById('schema-color-scheme-input'); menu.value = 'prefer-dark'; menu.dispatchEvent(new Event('change'));")
        try await stage.waitForValue("color-scheme", .string("prefer-dark"), in: domain)
        try await b.wait(until: "return document.querySelector('#schema-text-scaling-factor-input') !== null", "the editor again")
        try await b.replaceText("#schema-text-scaling-factor-input", with: "4" + Chromium.enterKey)
        try await b.wait(until: "return document.getElementById('plain-error').textContent.includes('out of the range')", "the reason")
        #expect(try await b.run("return document.getElementById('plain-error').textContent") as? String
            == "4.0 is out of the range of text-scaling-factor: 0.5 to 3.0")
        #expect(try stage.value("text-scaling-factor", in: domain) == nil)
    }

    @Test(.enabled(if: getuid() == 0, "trusted managed files must belong to root"))
    func aKeyTheAdministratorForcesIsShownDisabledAndCannotBeChanged() async throws {
        let managed = FileManager.default.temporaryDirectory.appendingPathComponent("managed-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: managed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: managed) }
        try PropertyListFile.encode(["warp": .bool(false)], format: .xml).write(to: URL(fileURLWithPath: managed + "/\(Self.bridge).plist"))
        let stage = try await Stage(arguments: ["--managed-dir", managed])
        defer { stage.finish() }
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        #expect(try await b.text("#row-Root_plist-4 .locked") == "Set by your administrator")
        #expect(try await b.run("const s = document.querySelector('#row-Root_plist-4-input'); return [s.disabled, s.checked]") as? [Bool] == [true, false])
        // The API refuses too, as the daemon would.
        let refused = try LoopbackHTTP.send(
            port: stage.app.port, "POST", stage.app.prefix + "/api/apps/\(Self.bridge)/rows",
            headers: ["Cookie": stage.app.cookie, "Origin": stage.app.origin],
            body: #"{"file":"Root.plist","index":4,"input":{"on":true}}"#)
        #expect(refused.status == 422)
        #expect(refused.body.contains(#""code":"forced""#))
        #expect(try stage.value("warp") == nil)
    }

    @Test func theDaemonGoingAwayIsOneLineAndThePageRecovers() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.open("/apps/\(Self.bridge)")
        let b = stage.browser
        stage.daemon.kill()
        try await b.wait(until: "return !document.getElementById('status').hidden", timeout: 5, "the status line")
        #expect(try await b.text("#status") == "defaultsd is not running; waiting for it to come back…")
        try stage.daemon.restart()
        _ = try stage.request(#"{"op":"set","domain":"com.example.BridgeControl","key":"officer","value":"Sisko"}"#)
        try await b.wait(until: "return document.getElementById('status').hidden", timeout: 5, "the status line to go")
        try await b.wait(until: "return document.querySelector('#row-Root_plist-1-input').value === 'Sisko'", timeout: 5, "the page again")
    }

    @Test func aBundleInstalledWhileTheRootIsOpenAppears() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.open("/")
        try Stage.register("com.example.SecondBridge", path: SharedData.bridgeControlBundle, on: stage.daemon)
        try await stage.browser.wait(until: "return document.querySelector('[data-domain=\"com.example.SecondBridge\"]') !== null", timeout: 2, "the new app")
    }

    @Test("search, typed at a person's speed (300 ms and 150 ms between keys), keeps every key in order and finds by words")
    func searchTypedAsAPersonFindsByWords() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        try await stage.open("/")
        let b = stage.browser
        let results = "return [...document.querySelectorAll('.search-result .title')].map(t => t.textContent).join(', ')"
        for (word, pause, expected) in [("warp", 0.3, "Warp Drive, Warp Factor"), ("rank", 0.15, "Rank")] {
            try await b.click("#search-input")
            try await b.run("document.getElementById('search-input').select()")
            try await b.typeAsAPerson(word, pause: pause)
            try await b.wait(until: "return document.querySelectorAll('.search-result').length > 0 && new URLSearchParams(location.search).get('q') === '\(word)'", "results for \(word)")
            #expect(try await b.run("return document.getElementById('search-input').value") as? String == word)
            let found = try await b.run(results) as? String
            #expect(found == expected, "\(word): \(found ?? "nil")")
        }
        // By words: "rite" begins no word ("Favorite" contains it), "fav cap" begins two.
        try await b.replaceText("#search-input", with: "rite")
        try await b.wait(until: "return document.querySelector('.row.disabled .title')?.textContent === 'No results'", "no results for rite")
        try await b.replaceText("#search-input", with: "fav cap")
        try await b.wait(until: "return document.querySelectorAll('.search-result').length > 0", "results for fav cap")
        #expect(try await b.run(results) as? String == "Favorite Captain")
        try await b.click(".search-result")
        try await b.wait(until: "return document.querySelector('.pane')?.dataset.file === 'More.plist'", "the pane of the result")
    }

    /// The pictures of docs/SETTINGS-APP.md, made by the test run from the real page.
    /// The pictures of docs/SETTINGS-APP.md, made by the test run from the real page: the root
    /// list (an app named and drawn by its desktop entry), Bridge Control's pane in light and
    /// dark, and the Other domains editor with a nested value open.
    @Test func screenshotsOfTheRootThePaneAndTheOtherDomainsEditor() async throws {
        let stage = try await Stage()
        defer { stage.finish() }
        let data = stage.daemon.home + "/.local/share"
        try FileManager.default.createDirectory(atPath: data + "/applications", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: data + "/icons/hicolor/scalable/apps", withIntermediateDirectories: true)
        try "[Desktop Entry]\nType=Application\nName=Bridge Control\nIcon=bridge-control\n"
            .write(toFile: data + "/applications/\(Self.bridge).desktop", atomically: true, encoding: .utf8)
        try ##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><rect width="64" height="64" rx="14" fill="#1f6feb"/><path d="M14 42h36M20 42V28h24v14M26 28v-6h12v6" stroke="#fff" stroke-width="4" fill="none" stroke-linecap="round"/></svg>"##
            .write(toFile: data + "/icons/hicolor/scalable/apps/bridge-control.svg", atomically: true, encoding: .utf8)
        _ = try stage.request(#"{"op":"apply","domain":"com.example.editor","set":{"fontSize":14,"theme":"Solarized","wrap":true,"recent":["notes.txt","todo.md"],"window":{"width":1200,"height":800,"maximized":false}}}"#)
        let folder = SharedData.repository.appendingPathComponent("docs/images")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let b = stage.browser
        func save(_ name: String) async throws {
            let png = try await b.screenshot()
            #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]))
            try png.write(to: folder.appendingPathComponent(name))
        }

        try await stage.open("/")
        try await b.wait(until: "const i = document.querySelector('.app img'); return i.complete && i.naturalWidth > 0", "the app's icon")
        try await save("settings-root-light.png")

        try await stage.open("/apps/\(Self.bridge)")
        for dark in [false, true] {
            try await b.setColorScheme(dark: dark)
            let background = try await b.run("return getComputedStyle(document.body).backgroundColor") as? String
            #expect(background == (dark ? "rgb(0, 0, 0)" : "rgb(242, 242, 247)"))
            try await save("settings-bridge-control-\(dark ? "dark" : "light").png")
        }

        try await b.setColorScheme(dark: false)
        try await stage.open("/domains/com.example.editor")
        try await b.wait(until: "return document.querySelector('#key-window-tree') !== null", "the nested dictionary")
        try await save("settings-other-domains-light.png")
    }
}
