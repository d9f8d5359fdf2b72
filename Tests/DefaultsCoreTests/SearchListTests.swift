import DaemonTestSupport
import DefaultsCore
import TestThreads
import Testing

/// The search list itself: its layers, suites added as `addSuite(named:)` adds them, and
/// resolution over plain tables (the daemon's and the client's uses run the same cases in
/// their own targets).
@Suite(.ownThreads) struct SearchListTests {
    let app = SearchOrderCases.app
    let suite = SearchOrderCases.suite
    let other = SearchOrderCases.other

    @Test func theLayersAreInApplesOrder() {
        #expect(
            SearchOrderCases.list.layers == [
                .managed(app), .managed(suite), .managed(other), .managed(.global),
                .persistent(app.currentHost), .persistent(app), .persistent(suite.currentHost), .persistent(suite),
                .persistent(other.currentHost), .persistent(other), .persistent(DomainName.global.currentHost), .persistent(.global),
                .bundle(app), .bundle(suite), .bundle(other), .registration,
            ])
        #expect(SearchList(appDomain: app, searchesArguments: true).layers == [
            .managed(app), .managed(.global), .argument, .persistent(app.currentHost), .persistent(app),
            .persistent(DomainName.global.currentHost), .persistent(.global), .bundle(app), .registration,
        ])
        #expect(SearchList(appDomain: nil).layers
            == [.managed(.global), .persistent(DomainName.global.currentHost), .persistent(.global), .registration])
        // Each domain is consulted once, where it first appears.
        #expect(SearchList(appDomain: app, suites: [app, .global, suite]).persistentDomains == [app, .global, suite])
        #expect(SearchList(appDomain: app).storedDomains == [app.currentHost, app, DomainName.global.currentHost, .global])
    }

    @Test func oneDomainsLayersAreItsSliceOfTheList() throws {
        #expect(SearchList.layers(of: app) == [.managed(app), .persistent(app.currentHost), .persistent(app), .bundle(app)])
        #expect(SearchList.layers(of: app.currentHost) == SearchList.layers(of: app))
        #expect(SearchList.layers(of: .global)
            == [.managed(.global), .persistent(DomainName.global.currentHost), .persistent(.global)])
        // A name too long for a by-host file has no by-host layer.
        let long = try DomainName(String(repeating: "x", count: DomainName.maximumByHostBytes + 1))
        #expect(SearchList.layers(of: long) == [.managed(long), .persistent(long), .bundle(long)])
    }

    @Test func suitesAreAddedBeforeTheGlobalDomainAndNeverTwice() {
        var list = SearchList(appDomain: app)
        let added = [list.addSuite(suite), list.addSuite(other), list.addSuite(suite), list.addSuite(app), list.addSuite(.global)]
        #expect(added == [true, true, false, false, false])
        #expect(list.persistentDomains == [app, suite, other, .global])
        #expect(list.includes(other) && !list.includes(try! DomainName("com.elsewhere")))
        list.removeSuite(suite)
        #expect(list.persistentDomains == [app, other, .global])
        #expect(list == SearchList(appDomain: app, suites: [other]))
    }

    @Test func resolveTakesTheFirstLayerThatHasTheKey() {
        for (key, value, layer) in SearchOrderCases.expected {
            let found = SearchOrderCases.list.resolve { layer -> PlistValue? in
                switch layer {
                case .persistent(let domain): SearchOrderCases.stored[domain]?[key]
                case .bundle(let domain): SearchOrderCases.bundleDefaults[domain]?[key]
                case .registration: SearchOrderCases.registration[key]
                case .argument, .managed: nil
                }
            }
            #expect(found?.value == value && found?.layer == layer, "\(key)")
        }
        // What an administrator forces on any domain of the list wins over every other layer.
        let forced = SearchList(appDomain: app, searchesArguments: true).resolve { layer -> PlistValue? in
            switch layer {
            case .managed(.global): .integer(9)
            case .managed: nil
            default: .integer(1)
            }
        }
        #expect(forced?.value == .integer(9) && forced?.layer == .managed(.global) && forced?.layer.kind == "managed")
        #expect(SearchList.Layer.bundle(app).name == "com.example.app" && SearchList.Layer.bundle(app).kind == "bundle")
        #expect(SearchList.Layer.registration.name == "NSRegistrationDomain" && SearchList.Layer.argument.kind == "argument")
    }
}
