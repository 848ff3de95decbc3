// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "Chorus",
    platforms: [.macOS(.v13), .iOS(.v16)],
    products: [
        .library(name: "ChorusKit", targets: ["ChorusKit"]),
        .library(name: "ChorusAPI", targets: ["ChorusAPI"]),
        .executable(name: "chorus", targets: ["chorus"]),
        .executable(name: "chorus-bench", targets: ["chorus-bench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.0"),
        .package(url: "https://github.com/vapor/fluent.git", from: "4.13.0"),
        .package(url: "https://github.com/vapor/fluent-kit.git", from: "1.57.0"),
        .package(url: "https://github.com/vapor/fluent-sqlite-driver.git", from: "4.9.0"),
        .package(url: "https://github.com/vapor/fluent-postgres-driver.git", from: "2.14.0"),
        .package(url: "https://github.com/vapor/sql-kit.git", from: "3.36.0"),
        .package(url: "https://github.com/vapor/sqlite-kit.git", from: "4.5.2"),
        .package(url: "https://github.com/vapor/async-kit.git", from: "1.22.0"),
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/vapor/websocket-kit.git", from: "2.16.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.86.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.34.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        // /metrics: a PrometheusCollectorRegistry per app instance (swift-prometheus builds on swift-metrics' CoreMetrics).
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        // Traces (issue 18): the tracing API in the server and the provider clients, exported over OTLP/HTTP by swift-otel
        // (its OTLPHTTP trait only: the default also builds gRPC), run as a ServiceLifecycle service.
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-otel/swift-otel.git", from: "1.6.0", traits: ["OTLPHTTP"]),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.6.0"),
    ],
    targets: [
        // Wire types shared by the server and the SDK. Foundation only.
        .target(name: "ChorusAPI", swiftSettings: swiftSettings),
        // Pure domain: no I/O frameworks.
        .target(
            name: "ChorusCore",
            dependencies: ["ChorusAPI", .product(name: "Crypto", package: "swift-crypto")],
            swiftSettings: swiftSettings
        ),
        // Outbound clients behind protocols.
        .target(
            name: "ChorusProviders",
            dependencies: [
                "ChorusCore",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            swiftSettings: swiftSettings
        ),
        // Local emulators of the outside services, speaking their wire protocols on loopback.
        .target(
            name: "ChorusSandbox",
            dependencies: [
                "ChorusProviders",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // The Vapor application.
        .target(
            name: "ChorusServer",
            dependencies: [
                "ChorusProviders",
                .product(name: "Vapor", package: "vapor"),
                .product(name: "Fluent", package: "fluent"),
                .product(name: "FluentKit", package: "fluent-kit"),
                .product(name: "FluentSQLiteDriver", package: "fluent-sqlite-driver"),
                .product(name: "FluentPostgresDriver", package: "fluent-postgres-driver"),
                .product(name: "SQLKit", package: "sql-kit"),
                .product(name: "SQLiteKit", package: "sqlite-kit"),
                .product(name: "AsyncKit", package: "async-kit"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                // The metrics API the Prometheus registry implements, at the version we tested with.
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            resources: [.copy("Resources/openapi.json"), .copy("Resources/web")],
            swiftSettings: swiftSettings
        ),
        // The sandbox embedded in a development server: composed in by chorus, chorus-bench and the tests' servers.
        .target(
            name: "ChorusEmbeddedSandbox",
            dependencies: ["ChorusServer", "ChorusSandbox", .product(name: "Vapor", package: "vapor")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "chorus",
            dependencies: [
                "ChorusServer", "ChorusSandbox", "ChorusEmbeddedSandbox",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        // chorus-bench floor's reference relay: plain C over epoll, the machine's floor for the bridge's CPU.
        .target(name: "CChorusFloor"),
        .executableTarget(
            name: "chorus-bench",
            dependencies: [
                "ChorusServer", "ChorusAPI", "ChorusSandbox", "ChorusEmbeddedSandbox", "ChorusProviders", "ChorusCore", "CChorusFloor",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Vapor", package: "vapor"),
            ],
            swiftSettings: swiftSettings
        ),
        // The parsers of untrusted bytes as fuzz targets; chorus-fuzz runs them under libFuzzer (scripts/fuzz builds it
        // with -sanitize=fuzzer) or replays inputs, and the tests replay the committed corpora (Fuzz/corpus).
        .target(
            name: "ChorusFuzz",
            dependencies: [
                "ChorusCore", "ChorusProviders",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "CChorusFuzzDriver"),
        .executableTarget(name: "chorus-fuzz", dependencies: ["ChorusFuzz", "CChorusFuzzDriver"], swiftSettings: swiftSettings),
        // The client SDK: ChorusAPI + Foundation only.
        .target(name: "ChorusKit", dependencies: ["ChorusAPI"], swiftSettings: swiftSettings),

        // Shared by the test targets: starting a real server on a loopback port.
        .target(
            name: "ChorusTestSupport",
            dependencies: ["ChorusServer", "ChorusSandbox", "ChorusEmbeddedSandbox", .product(name: "Vapor", package: "vapor")],
            path: "Tests/ChorusTestSupport",
            resources: [.copy("Specs")],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "ChorusAPITests", dependencies: ["ChorusAPI"], swiftSettings: swiftSettings),
        .testTarget(name: "ChorusCoreTests", dependencies: ["ChorusCore"], swiftSettings: swiftSettings),
        .testTarget(
            name: "ChorusProvidersTests",
            dependencies: [
                "ChorusProviders", "ChorusFuzz",
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            resources: [.copy("Fixtures")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ChorusSandboxTests",
            dependencies: ["ChorusSandbox", .product(name: "VaporTesting", package: "vapor")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ChorusServerTests",
            dependencies: [
                "ChorusServer", "ChorusSandbox", "ChorusAPI", "ChorusTestSupport",
                .product(name: "VaporTesting", package: "vapor"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "WebSocketKit", package: "websocket-kit"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "ChorusKitTests",
            dependencies: ["ChorusKit", "ChorusServer", "ChorusSandbox", "ChorusTestSupport"],
            swiftSettings: swiftSettings
        ),
    ]
)
