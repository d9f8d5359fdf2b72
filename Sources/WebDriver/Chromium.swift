import Foundation

/// A real headless Chromium driven through the W3C WebDriver protocol (Debian's `chromium` and
/// `chromium-driver`), spoken from Swift: the protocol is a handful of JSON calls over HTTP
/// (``LoopbackHTTP``), and no WebDriver library for Swift resolves here. Used by the Settings
/// app's browser tests and by the benchmark's live-update measurement.
///
/// ```swift
/// let browser = try await Chromium.start()
/// defer { browser.quit() }
/// try await browser.navigate(to: address)
/// try await browser.click("#row-Root_plist-4-input")
/// ```
///
/// One browser and one driver process per instance, both stopped by PID in ``quit()``.
public final class Chromium: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public static let browserPath = "/usr/bin/chromium"
    public static let driverPath = "/usr/bin/chromedriver"
    public static var isInstalled: Bool {
        FileManager.default.isExecutableFile(atPath: browserPath) && FileManager.default.isExecutableFile(atPath: driverPath)
    }

    private let driver: Process
    private let port: Int
    private let session: String
    private let profile: String

    private init(driver: Process, port: Int, session: String, profile: String) {
        self.driver = driver
        self.port = port
        self.session = session
        self.profile = profile
    }

    /// Starts chromedriver on a free port and a headless browser session. `languages` is the
    /// browser's `Accept-Language`.
    public static func start(languages: String = "en-US,en", width: Int = 820, height: Int = 1100) async throws -> Chromium {
        guard isInstalled else { throw Failure(description: "chromium and chromium-driver are not installed (make test installs them)") }
        let profile = FileManager.default.temporaryDirectory.appendingPathComponent("chromium-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: profile, withIntermediateDirectories: true)
        var lastError: Error = Failure(description: "chromedriver did not start")
        for _ in 0..<5 {
            let port = Int.random(in: 20_000..<60_000)
            let driver = Process()
            driver.executableURL = URL(fileURLWithPath: driverPath)
            driver.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
            // The browser's home and XDG folders are inside its throw-away profile: nothing of the
            // person running the tests is read or written.
            var environment = ProcessInfo.processInfo.environment
            for (name, folder) in ["HOME": "", "XDG_CONFIG_HOME": "/.config", "XDG_CACHE_HOME": "/.cache", "XDG_DATA_HOME": "/.local/share", "XDG_STATE_HOME": "/.local/state"] {
                environment[name] = profile + folder
            }
            environment.removeValue(forKey: "XDG_RUNTIME_DIR")
            driver.environment = environment
            driver.standardOutput = FileHandle.nullDevice
            driver.standardError = FileHandle.nullDevice
            try driver.run()
            do {
                try await waitForDriver(port, process: driver)
                let capabilities: [String: Any] = [
                    "capabilities": [
                        "alwaysMatch": [
                            "browserName": "chrome",
                            "goog:chromeOptions": [
                                "binary": browserPath,
                                "args": [
                                    "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                                    "--no-first-run", "--disable-extensions", "--user-data-dir=\(profile)",
                                    "--window-size=\(width),\(height)", "--lang=\(languages.split(separator: ",").first ?? "en-US")",
                                ],
                                "prefs": ["intl.accept_languages": languages],
                            ],
                        ]
                    ]
                ]
                let created = try call(port, "POST", "/session", capabilities)
                guard let id = (created as? [String: Any])?["sessionId"] as? String else {
                    throw Failure(description: "no session: \(created)")
                }
                return Chromium(driver: driver, port: port, session: id, profile: profile)
            } catch {
                lastError = error
                kill(driver.processIdentifier, SIGKILL)
                driver.waitUntilExit()
            }
        }
        throw lastError
    }

    private static func waitForDriver(_ port: Int, process: Process) async throws {
        let deadline = Date(timeIntervalSinceNow: 20)
        while Date() < deadline {
            guard process.isRunning else { throw Failure(description: "chromedriver exited (port taken?)") }
            if let status = try? call(port, "GET", "/status", nil) as? [String: Any], status["ready"] as? Bool == true {
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "chromedriver did not answer within 20 s")
    }

    /// One WebDriver command; answers its `value`, throws its error.
    private static func call(_ port: Int, _ method: String, _ path: String, _ body: Any?) throws -> Any {
        let text = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        let answer = try LoopbackHTTP.send(port: port, method, path, headers: text == nil ? [:] : ["Content-Type": "application/json"], body: text)
        let json = try JSONSerialization.jsonObject(with: Data(answer.body.utf8), options: [.fragmentsAllowed]) as? [String: Any]
        let value = json?["value"] ?? NSNull()
        if let error = (value as? [String: Any])?["error"] as? String {
            throw Failure(description: "WebDriver \(method) \(path): \(error): \((value as? [String: Any])?["message"] ?? "")")
        }
        return value
    }

    @discardableResult
    private func command(_ method: String, _ path: String, _ body: Any? = nil) async throws -> Any {
        try Self.call(port, method, "/session/\(session)" + path, body ?? (method == "POST" ? [String: Any]() : nil))
    }

    public func navigate(to address: String) async throws {
        try await command("POST", "/url", ["url": address])
    }

    public var currentAddress: String {
        get async throws { try await command("GET", "/url") as? String ?? "" }
    }

    public var pageSource: String {
        get async throws { try await command("GET", "/source") as? String ?? "" }
    }

    /// Runs `script` (a function body; `arguments[0]`... are `arguments`) and answers its result.
    @discardableResult
    public func run(_ script: String, _ arguments: [Any] = []) async throws -> Any {
        try await command("POST", "/execute/sync", ["script": script, "args": arguments])
    }

    /// The element for a CSS selector; throws when there is none.
    public func element(_ selector: String) async throws -> String {
        let found = try await command("POST", "/element", ["using": "css selector", "value": selector])
        guard let id = (found as? [String: Any])?.first(where: { $0.key.hasPrefix("element-") })?.value as? String else {
            throw Failure(description: "no element \(selector)")
        }
        return id
    }

    /// Clicks an element (see ``onElement(_:_:)`` for one a re-render replaced or has not shown yet).
    public func click(_ selector: String) async throws {
        try await onElement(selector) { id in try await self.command("POST", "/element/\(id)/click") }
    }

    /// Types into an element as a person does (keys, then whatever `keys` ends with, e.g. Enter).
    public func type(_ selector: String, _ text: String) async throws {
        try await onElement(selector) { id in try await self.command("POST", "/element/\(id)/value", ["text": text]) }
    }

    /// Runs `action` on the element for `selector`. An element that a re-render replaced between
    /// finding it and acting on it ("stale element reference"), or that the page has not shown
    /// yet ("element not interactable"), is found again for up to a second, as a person looks at
    /// the field again: WebDriver refuses either before any key is typed or any click is made.
    private func onElement(_ selector: String, _ action: (String) async throws -> Void) async throws {
        let deadline = Date(timeIntervalSinceNow: 1)
        while true {
            do {
                return try await action(try await element(selector))
            } catch let failure as Failure
                where (failure.description.contains("stale element reference") || failure.description.contains("element not interactable"))
                && Date() < deadline
            {
                try await Task.sleep(for: .milliseconds(15))
            }
        }
    }

    /// Types at a person's speed into whatever has the focus: one key at a time (WebDriver's
    /// key actions, which go to the focused element as a keyboard's would), `pause` seconds
    /// apart. A page that replaces the field meanwhile loses keys or their order, as it would
    /// for a person.
    public func typeAsAPerson(_ text: String, pause: Double = 0.3) async throws {
        for character in text {
            let key = String(character)
            try await command("POST", "/actions", ["actions": [[
                "type": "key", "id": "keyboard",
                "actions": [["type": "keyDown", "value": key], ["type": "keyUp", "value": key]],
            ]]])
            try await Task.sleep(for: .milliseconds(Int(pause * 1000)))
        }
    }

    /// Selects the field's text and types over it, as a person does (WebDriver's own `clear`
    /// fires a `change` of its own, which the page would send).
    public func replaceText(_ selector: String, with text: String) async throws {
        try await type(selector, "\u{E009}a\u{E000}" + text)
    }

    public static let enterKey = "\u{E007}"

    /// How long a wait for the page lasts before it fails: a bound, not a pause (a wait returns
    /// as soon as its condition holds). `make test` runs the browser beside tests that load both
    /// CPUs for seconds (roaming under faults, bursts of 10,000 changes), so the bound leaves
    /// room for a page that answers slowly then.
    public static let defaultWait: Double = 15

    /// Waits until `condition` (a script returning a boolean) is true; throws after `timeout`.
    public func wait(until condition: String, timeout: Double = Chromium.defaultWait, _ what: String = "") async throws {
        let deadline = Date(timeIntervalSinceNow: timeout)
        while true {
            if try await run(condition) as? Bool == true { return }
            guard Date() < deadline else { throw Failure(description: "timed out waiting for \(what.isEmpty ? condition : what)") }
            try await Task.sleep(for: .milliseconds(15))
        }
    }

    /// The text of the first element matching `selector`, or nil when there is none.
    public func text(_ selector: String) async throws -> String? {
        try await run("const e = document.querySelector(arguments[0]); return e ? e.textContent : null;", [selector]) as? String
    }

    /// Emulates the light or dark colour scheme (Chrome DevTools' `Emulation.setEmulatedMedia`).
    public func setColorScheme(dark: Bool) async throws {
        try await command("POST", "/goog/cdp/execute", [
            "cmd": "Emulation.setEmulatedMedia",
            "params": ["features": [["name": "prefers-color-scheme", "value": dark ? "dark" : "light"]]],
        ])
    }

    public func screenshot() async throws -> Data {
        guard let text = try await command("GET", "/screenshot") as? String, let data = Data(base64Encoded: text) else {
            throw Failure(description: "no screenshot")
        }
        return data
    }

    /// Ends the session and stops the driver (and with it the browser), by PID.
    public func quit() {
        _ = try? Self.call(port, "DELETE", "/session/\(session)", nil)
        // chromedriver does not stop on SIGTERM; /shutdown asks it, SIGKILL makes sure.
        _ = try? LoopbackHTTP.send(port: port, "GET", "/shutdown")
        let deadline = Date(timeIntervalSinceNow: 2)
        while driver.isRunning && Date() < deadline { usleep(10_000) }
        if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
        driver.waitUntilExit()
        try? FileManager.default.removeItem(atPath: profile)
    }
}
