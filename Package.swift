// swift-tools-version:6.0
import PackageDescription

/// Release builds made by `make` (`bench`, `install`) link `defaultsd` and `defaults` fully
/// static: the Makefile sets `DEFAULTSD_STATIC_EXECUTABLES=1` together with
/// `--static-swift-stdlib`, which `-static-executable` needs. A plain `swift build -c release`,
/// and a package that depends on this one, get ordinary executables and no unsafe flags.
let fullyStaticInRelease: [LinkerSetting] =
    Context.environment["DEFAULTSD_STATIC_EXECUTABLES"] == "1"
    ? [.unsafeFlags(["-static-executable"], .when(configuration: .release))] : []

let package = Package(
    name: "defaultsd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "defaultsd", targets: ["defaultsd"]),
        .executable(name: "defaults", targets: ["defaults"]),
        .executable(name: "defaultsd-settings", targets: ["defaultsd-settings"]),
        .executable(name: "defaultsd-bench", targets: ["DefaultsBench"]),
        .library(name: "DefaultsCore", targets: ["DefaultsCore"]),
        .library(name: "DefaultsServer", targets: ["DefaultsServer"]),
        .library(name: "DefaultsClient", targets: ["DefaultsClient"]),
        .executable(name: "BridgeControl", targets: ["BridgeControl"]),
        .executable(name: "defaultsd-client-bench", targets: ["DefaultsClientBench"]),
        .executable(name: "defaultsd-fuzz", targets: ["defaultsd-fuzz"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-collections.git", from: "1.6.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
    ],
    targets: [
        // The value model, the changeset and both codecs (wire JSON, on-disk plist).
        // Shared by the server and every client; no networking.
        .target(name: "DefaultsCore", dependencies: ["GlibcExtras"]),

        // glibc's renameat2 and malloc_trim, which Swift's Glibc module does not import: a module
        // map and a header of declarations, nothing compiled.
        .systemLibrary(name: "GlibcExtras"),

        // Settings bundles: parsing, localisation, diagnostics, defaults, write checks, rendering.
        .target(name: "SettingsBundles", dependencies: ["DefaultsCore"]),

        // The fuzz harness of every parser (docs/RELIABILITY.md), and the executable that runs one
        // under libFuzzer (`make fuzz`) or replays inputs through it.
        .target(name: "FuzzHarnesses", dependencies: ["DefaultsCore", "SettingsBundles", "EtcdWire"]),
        .executableTarget(name: "defaultsd-fuzz", dependencies: ["FuzzHarnesses"]),

        // etcd's messages and the gateway's JSON form of them: the part of roaming that reads
        // what a cluster answers, apart from the HTTP client so that it can be fuzzed alone.
        .target(name: "EtcdWire", dependencies: ["DefaultsCore"]),

        // etcd v3 through its JSON gateway: ranges, transactions and the streaming watch, over the
        // members of a cluster in turn (docs/ROAMING.md).
        .target(
            name: "EtcdGateway",
            dependencies: [
                "DefaultsCore", "EtcdWire",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The daemon: store (state owner), persistence, notifier, transport, the roaming link.
        .target(
            name: "DefaultsServer",
            dependencies: [
                "DefaultsCore", "SettingsBundles", "EtcdWire", "EtcdGateway", "GlibcExtras",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "OrderedCollections", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),

        // The service manager's protocol: sd_notify, socket activation, the watchdog.
        .target(name: "SystemdSupport"),

        // Linked fully static in release builds: without shared libraries, only the code the
        // daemon runs is resident, not the rest of libc's and libstdc++'s pages that fault-around
        // brings in with it (docs/PERFORMANCE.md, "Where the memory goes").
        .executableTarget(
            name: "defaultsd",
            dependencies: [
                "DefaultsServer", "DefaultsCore", "SystemdSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            linkerSettings: fullyStaticInRelease
        ),

        // A blocking, deadline-driven line client over a Unix socket: the `defaults` tool, tests, the benchmark.
        .target(name: "LineSocket", dependencies: ["DefaultsCore"]),

        // The `defaults` command (macOS syntax and output) over defaultsd.
        .target(
            name: "DefaultsTool",
            dependencies: [
                "DefaultsCore", "LineSocket", "SettingsBundles",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Linked fully static in release builds: scripts call `defaults` hundreds of times in a
        // row, and resolving libstdc++'s symbols at every start cost more than the work itself
        // (docs/PERFORMANCE.md, "defaults per call"). It needs glibc's NSS libraries only
        // without $HOME, as every static program does.
        .executableTarget(
            name: "defaults", dependencies: ["DefaultsTool"],
            linkerSettings: fullyStaticInRelease),

        .executableTarget(
            name: "DefaultsBench",
            dependencies: [
                "LineSocket", "DefaultsCore", "WebDriver",
                // RoamingLatency: a real etcd cluster on loopback, as the tests start it.
                "LocalServices",
                // TransportFloor: a SwiftNIO line server that does no work, with defaultsd's channel options.
                "DefaultsServer",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        // The Swift client: a UserDefaults-shaped API with a local cache kept exact by events.
        .target(
            name: "DefaultsClient",
            dependencies: [
                "DefaultsCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOExtras", package: "swift-nio-extras"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),

        // The Settings app: a local web page over defaultsd (docs/SETTINGS-APP.md). Hummingbird serves
        // HTTP and the live WebSocket; the page's files are compiled in.
        .target(
            name: "SettingsApp",
            dependencies: [
                "DefaultsClient", "DefaultsCore", "SettingsBundles",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [
                .embedInCode("Assets/index.html"), .embedInCode("Assets/app.css"), .embedInCode("Assets/icon.svg"),
                // The page's script modules; SettingsServer's `Assets.scripts` serves each.
                .embedInCode("Assets/app.js"), .embedInCode("Assets/api.js"), .embedInCode("Assets/dom.js"),
                .embedInCode("Assets/domains.js"), .embedInCode("Assets/live.js"), .embedInCode("Assets/navigation.js"),
                .embedInCode("Assets/panes.js"), .embedInCode("Assets/root.js"), .embedInCode("Assets/schema.js"),
                .embedInCode("Assets/tree.js"), .embedInCode("Assets/words.js"),
            ]
        ),
        .executableTarget(
            name: "defaultsd-settings",
            dependencies: [
                "SettingsApp", "DefaultsCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The Bridge Control app of the classic iOS settings tutorial, on defaultsd.
        .executableTarget(
            name: "BridgeControl",
            dependencies: ["DefaultsClient"],
            path: "Examples/BridgeControl"
        ),

        // Cached read cost of the client against Foundation's UserDefaults (docs/CLIENT.md).
        .executableTarget(
            name: "DefaultsClientBench",
            dependencies: ["DefaultsClient", "DefaultsCore"]
        ),

        // Each test case on threads of its own (`.ownThreads`), so no blocking test starves another.
        .target(name: "TestThreads", dependencies: [.product(name: "NIOPosix", package: "swift-nio")], path: "Tests/TestThreads"),
        // Starts the real defaultsd on a temporary socket and directory, for the tests that need it,
        // and finds the shared test data.
        .target(name: "DaemonTestSupport", dependencies: ["DefaultsCore", "LineSocket", "LocalServices"], path: "Tests/DaemonTestSupport"),
        // Real services and programs run on this machine: an etcd cluster (on loopback, or in
        // network namespaces), the leash that stops its members, a program run to completion and
        // a child's log. Shared by the tests and the benchmark, so in Sources.
        .target(name: "LocalServices"),
        // The third-party corpus beside the checkout (../shared), and the trait that skips a test without it.
        .target(name: "SharedCorpus", dependencies: ["DaemonTestSupport"], path: "Tests/SharedCorpus"),
        // A program that uses plain Foundation UserDefaults and nothing else, run beside the daemon.
        .executableTarget(name: "FoundationDefaultsProbe", path: "Tests/FoundationDefaultsProbe"),
        // Runs a command under the seccomp sandbox the user unit declares, where no systemd manager can apply it.
        .executableTarget(name: "defaultsd-unit-sandbox", path: "Tests/UnitSandbox"),
        // The one table of value syntax (boolean words, hex data, boolValue) every user is tested on.
        .target(name: "ValueSyntaxCases", path: "Tests/ValueSyntaxCases"),

        .testTarget(name: "DefaultsCoreTests", dependencies: ["TestThreads", "DefaultsCore", "DaemonTestSupport", "SharedCorpus", "ValueSyntaxCases"]),
        .testTarget(
            name: "DefaultsServerTests",
            dependencies: [
                "TestThreads", "DefaultsServer", "DefaultsCore", "DaemonTestSupport", "EtcdWire", "EtcdGateway",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // LineSocket against a canned SwiftNIO server on a Unix socket.
        .testTarget(
            name: "LineSocketTests",
            dependencies: [
                "TestThreads", "LineSocket", "DefaultsCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // EtcdClient against a canned gateway (a SwiftNIO HTTP server on loopback).
        .testTarget(
            name: "EtcdGatewayTests",
            dependencies: [
                "TestThreads", "EtcdGateway", "EtcdWire", "DefaultsCore",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "TestThreadsTests", dependencies: ["TestThreads", "DaemonTestSupport"]),
        .testTarget(name: "SystemdSupportTests", dependencies: ["TestThreads", "SystemdSupport"]),

        // A real headless Chromium over WebDriver, for the Settings app's tests and benchmark.
        .target(name: "WebDriver"),
        .testTarget(
            name: "SettingsAppTests",
            dependencies: [
                "TestThreads", "SettingsApp", "SettingsBundles", "DefaultsClient", "DefaultsCore", "LineSocket", "DaemonTestSupport", "LocalServices",
                "WebDriver",
                "ValueSyntaxCases",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                "defaultsd", "defaultsd-settings", "defaults", "FoundationDefaultsProbe",
            ]
        ),
        .testTarget(name: "DefaultsToolTests", dependencies: ["TestThreads", "DefaultsTool", "DefaultsCore", "ValueSyntaxCases"]),
        // Every kept fuzz input (fuzz/seeds, fuzz/regressions) through its harness.
        .testTarget(name: "FuzzRegressionTests", dependencies: ["TestThreads", "FuzzHarnesses", "DaemonTestSupport"]),
        .testTarget(
            name: "SettingsBundleTests",
            dependencies: ["TestThreads", "SettingsBundles", "DefaultsCore", "DaemonTestSupport", "SharedCorpus", "ValueSyntaxCases"],
            resources: [.copy("Fixtures")]
        ),
        .testTarget(
            name: "DaemonIntegrationTests",
            dependencies: [
                "TestThreads", "DefaultsCore", "LineSocket", "DaemonTestSupport", "LocalServices", "SharedCorpus", "defaultsd", "defaults",
                "FoundationDefaultsProbe",
            ]
        ),
        // Two real daemons on a real 3-member etcd cluster on loopback.
        .testTarget(
            name: "RoamingTests",
            dependencies: ["TestThreads", "DefaultsCore", "DefaultsClient", "LineSocket", "DaemonTestSupport", "LocalServices", "defaultsd", "defaults"]
        ),
        .testTarget(
            name: "DefaultsClientTests",
            dependencies: [
                "TestThreads", "DefaultsClient", "DefaultsCore", "LineSocket", "DaemonTestSupport", "LocalServices", "defaultsd", "BridgeControl",
                "ValueSyntaxCases",
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)
