import DaemonTestSupport
import Foundation
@testable import TestThreads
import Testing

/// `.ownThreads` keeps every test off Swift's shared pool, and every suite carries it.
@Suite(.ownThreads) struct OwnThreadsTests {
    /// The name of the calling thread: `NIOThreadPool` names its threads `TP-#<n>`.
    static func threadName() -> String {
        Thread.current.name ?? ""
    }

    @Test("a synchronous test's body runs on its own threads")
    func synchronousBody() {
        #expect(Self.threadName().hasPrefix("TP-#"), "\(Self.threadName())")
    }

    @Test("an asynchronous test stays on its own threads after it suspends, and so do its child tasks")
    func asynchronousBody() async throws {
        try await Task.sleep(for: .milliseconds(10))
        #expect(Self.threadName().hasPrefix("TP-#"), "\(Self.threadName())")
        let children = await withTaskGroup(of: String.self, returning: [String].self) { group in
            for _ in 0..<3 {
                group.addTask {
                    try? await Task.sleep(for: .milliseconds(5))
                    return Self.threadName()
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(children.count == 3)
        #expect(children.allSatisfy { $0.hasPrefix("TP-#") }, "\(children)")
    }

    @Test("a test that blocks one of its threads still runs a child task on the other")
    func blockingWithAChildTask() async {
        let answered = DispatchSemaphore(value: 0)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { answered.signal() }
            // Blocks this thread until the child, on the test's second thread, has run.
            #expect(answered.wait(timeout: .now() + 30) == .success)
        }
    }

    @Test("no more test cases run at once than there are slots, and each waiting one runs")
    func slotsBoundTheTestsAtOnce() async throws {
        let slots = TestSlots(count: 2)
        let running = Counter()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    _ = try? await slots.withSlot {
                        await running.enter()
                        try await Task.sleep(for: .milliseconds(20))
                        await running.leave()
                    }
                }
            }
        }
        #expect(await running.entered == 6)
        #expect(await running.most == 2)
    }

    actor Counter {
        var now = 0, most = 0, entered = 0
        func enter() {
            now += 1
            entered += 1
            most = max(most, now)
        }
        func leave() { now -= 1 }
    }

    /// Each file of tests: every suite it declares carries `.ownThreads`, and the suites it
    /// extends are such suites.
    @Test("every suite in Tests/ runs its tests on their own threads")
    func everySuiteCarriesTheTrait() throws {
        let tests = SharedData.repository.appendingPathComponent("Tests")
        let files = FileManager.default.enumerator(atPath: tests.path)!.compactMap { $0 as? String }.filter { $0.hasSuffix(".swift") }
        var suites: Set<String> = []
        var chunks: [(file: String, header: String, body: String)] = []
        for file in files {
            let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
            // Top-level declarations: each starts at the left margin, its attributes first, and
            // its header runs to the line that opens its body.
            var current: (header: String, body: String)?
            var inHeader = false
            for line in text.components(separatedBy: "\n") {
                let opens = ["@Suite", "@MainActor", "struct ", "final class ", "class ", "enum ", "actor ", "extension "]
                    .contains { line.hasPrefix($0) }
                if inHeader {
                    current?.header += "\n" + line
                } else if opens {
                    if let current { chunks.append((file, current.header, current.body)) }
                    current = (line, "")
                } else {
                    current?.body += line + "\n"
                }
                inHeader = (inHeader || opens) && !line.contains("{")
            }
            if let current { chunks.append((file, current.header, current.body)) }
        }
        for chunk in chunks where chunk.header.contains("@Suite") && chunk.header.contains(".ownThreads") {
            if let name = Self.declaredName(chunk.header) { suites.insert(name) }
        }
        for chunk in chunks where chunk.body.contains("@Test") && !chunk.file.hasPrefix("TestThreads/") {
            if chunk.header.hasPrefix("extension ") {
                let name = Self.declaredName(chunk.header) ?? ""
                #expect(suites.contains(name), "\(chunk.file): \(name) is extended with tests but is not a suite with .ownThreads")
            } else {
                #expect(chunk.header.contains("@Suite") && chunk.header.contains(".ownThreads"), "\(chunk.file): \(chunk.header.prefix(120))")
            }
        }
        #expect(suites.count > 100)
    }

    /// The name a declaration's header declares or extends.
    static func declaredName(_ header: String) -> String? {
        let header = header.replacing(#/"(?:[^"\\]|\\.)*"/#, with: "\"\"")
        for keyword in ["struct ", "class ", "enum ", "actor ", "extension "] {
            if let range = header.range(of: keyword) {
                return String(header[range.upperBound...].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
            }
        }
        return nil
    }
}
