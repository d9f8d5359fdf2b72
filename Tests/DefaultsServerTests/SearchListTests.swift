import DefaultsCore
@testable import DefaultsServer
import Testing

@Suite struct SearchListTests {
    let app = try! DomainName("com.example.app")
    let suite = try! DomainName("group.example.shared")
    let other = try! DomainName("group.example.other")

    func resolve(_ key: String, _ list: SearchList, _ stored: [DomainName: [String: PlistValue]],
                 registration: [String: PlistValue] = [:]) throws -> (PlistValue, String)? {
        try list.resolve(key, values: { stored[$0] ?? [:] }, registration: registration).map { ($0.0, $0.1.name) }
    }

    @Test func appDomainThenSuitesThenGlobalThenRegistration() throws {
        let list = SearchList(appDomain: app, suites: [suite, other])
        let stored: [DomainName: [String: PlistValue]] = [
            app: ["a": 1], suite: ["a": 2, "b": 2], other: ["b": 3, "c": 3], .global: ["c": 4, "d": 4],
        ]
        let registration: [String: PlistValue] = ["a": 0, "d": 0, "e": 5]
        #expect(try resolve("a", list, stored, registration: registration)! == (1, "com.example.app"))
        #expect(try resolve("b", list, stored, registration: registration)! == (2, "group.example.shared"))
        #expect(try resolve("c", list, stored, registration: registration)! == (3, "group.example.other"))
        #expect(try resolve("d", list, stored, registration: registration)! == (4, "NSGlobalDomain"))
        #expect(try resolve("e", list, stored, registration: registration)! == (5, "NSRegistrationDomain"))
        #expect(try resolve("f", list, stored, registration: registration) == nil)
    }

    @Test func duplicatesAreConsultedOnce() {
        let list = SearchList(appDomain: app, suites: [app, .global, suite])
        #expect(list.persistentDomains == [app, .global, suite])
        #expect(SearchList(appDomain: nil).persistentDomains == [.global])
    }
}
