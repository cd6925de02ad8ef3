// swift-tools-version:6.1
// CredentialVault: encrypted credential storage for Linux (Secret Service, sealed file, memory)
// and an OAuth 2.0 / OpenID Connect client that keeps its session in it.
import PackageDescription

let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

// What FoundationEssentials needs when it is linked statically: the modules were compiled
// against the shared libraries, whose autolink entries do not name these (`swiftc
// -static-stdlib` adds them). The lean `credvault`'s modules (CredentialVault,
// CredentialVaultCLI, credvault) import only FoundationEssentials, so neither Foundation,
// FoundationInternationalization nor ICU's data (about 50 MB) is linked. lld resolves them in
// any order (and, unlike gold, does not relay glibc's link-time warnings). The DWARF sections
// (2.6 MB, mostly the static Swift libraries') are left out of the lean binary: the symbol table
// stays, so a crash's backtrace still names its functions (not their lines).
let staticFoundation = ["-use-ld=lld", "-Xlinker", "--strip-debug"] + [
    "FoundationEssentials", "_FoundationCShims", "_FoundationCollections", "swiftSynchronization", "stdc++",
].map { "-l" + $0 }

/// swift-metrics, in the modules that count, when the `Metrics` trait is on.
let metrics: Target.Dependency = .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"]))
/// swift-metrics' test backend, in the test targets that check what is counted (`#if Metrics`).
let metricsTestKit: Target.Dependency = .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"]))

let package = Package(
    name: "CredentialVault",
    products: [
        .library(name: "CredentialVault", targets: ["CredentialVault"]),
        .library(name: "CredentialVaultSecretService", targets: ["CredentialVaultSecretService"]),
        .library(name: "CredentialVaultAuth", targets: ["CredentialVaultAuth"]),
        // The fleet store: credentials sealed client-side in PostgreSQL (the only product linking libpq).
        .library(name: "CredentialVaultPostgres", targets: ["CredentialVaultPostgres"]),
        // The TPM 2.0 device custodian (tpm2-tss ESYS): a device secret sealed to this machine's
        // TPM and rollback counters in its NV memory.
        .library(name: "CredentialVaultTPM", targets: ["CredentialVaultTPM"]),
        // For tests of code that uses the library, and of third-party backends: the
        // conformance suite (through both storage protocols) and a fault-injecting store.
        .library(name: "CredentialVaultTesting", targets: ["CredentialVaultTesting"]),
        // A swift-configuration provider that reads credentials from any vault backend (trait
        // `Configuration`: without it the module is empty and swift-configuration is not fetched).
        .library(name: "CredentialVaultConfiguration", targets: ["CredentialVaultConfiguration"]),
        // The server behind `credvault serve-credentials`, for applications that hand their own
        // credentials to systemd units (with the `ServiceLifecycle` trait, a `Service`).
        .library(name: "CredentialVaultCredentialServer", targets: ["CredentialVaultCredentialServer"]),
        .executable(name: "credvault", targets: ["credvault"]),
        .executable(name: "credvault-full", targets: ["credvault-full"]),
    ],
    // What a consumer turns on with `.package(url: ..., from: ..., traits: [...])`. None by
    // default: SwiftPM fetches every package a used target needs under the enabled traits, so a
    // consumer of the sealed file alone fetches swift-log and nothing else (measured: without
    // traits, a consumer of one product fetched all seven packages the others need).
    traits: [
        .trait(name: "Configuration", description: "The CredentialVaultConfiguration product: credentials read through apple/swift-configuration."),
        .trait(
            name: "ServiceLifecycle",
            description: "Services for swift-service-lifecycle's ServiceGroup: the session's background refresh and the credential server."),
        .trait(name: "Metrics", description: "Counters and timers through apple/swift-metrics (no-ops until the application bootstraps a backend)."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        // The logging API of every module (no Foundation). The only package dependency of the
        // `CredentialVault` product. Offline machines resolve it from ../shared/vendor's mirrors
        // (scripts/install-deps.sh); Package.resolved is not committed (a library's is not used by
        // its dependents). 1.11 is the first with `LogHandler.log(event:)`, which a handler must
        // implement to build warning-free against the current releases (the CLI's stderr handler
        // does); it needs Swift 6.2 or newer.
        .package(url: "https://github.com/apple/swift-log.git", from: "1.11.0"),
        // Fetched only by consumers that enable the trait using them.
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.8.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.7.0"),
    ],
    targets: [
        // C libraries come from Debian packages through system-library targets.
        .systemLibrary(name: "CSodium", pkgConfig: "libsodium", providers: [.apt(["libsodium-dev"])]),
        .systemLibrary(name: "CLibSecret", pkgConfig: "libsecret-1", providers: [.apt(["libsecret-1-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // The auth client's HTTP transport on Linux (FoundationNetworking's URLSession stops the
        // process on some responses a provider or proxy can send).
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),

        // libpq, only linked by the fleet store.
        .systemLibrary(name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"])]),
        // tpm2-tss: ESYS + marshalling + response codes in one module (the TPM2B types defined
        // once), and the TCTI loader.
        .systemLibrary(name: "CTSS2Esys", pkgConfig: "tss2-esys", providers: [.apt(["libtss2-dev"])]),
        .systemLibrary(name: "CTSS2TctiLdr", pkgConfig: "tss2-tctildr", providers: [.apt(["libtss2-dev"])]),
        // The kernel keyring's syscalls: a header-only module (no library to link).
        .systemLibrary(name: "CKeyctl"),
        // Linux system calls glibc's Swift module does not declare (renameat2, pidfd_open): header-only.
        .systemLibrary(name: "CLinuxCalls"),

        .target(
            name: "CredentialVault",
            dependencies: ["CSodium", "CKeyctl", "CLinuxCalls", .product(name: "Logging", package: "swift-log"), metrics],
            swiftSettings: strict),
        .target(
            name: "CredentialVaultTPM",
            dependencies: ["CredentialVault", "CTSS2Esys", "CTSS2TctiLdr", .product(name: "Logging", package: "swift-log"), metrics],
            swiftSettings: strict),
        .target(
            name: "CredentialVaultPostgres", dependencies: ["CredentialVault", "CLibPQ", .product(name: "Logging", package: "swift-log"), metrics],
            swiftSettings: strict),
        .target(
            name: "CredentialVaultSecretService",
            // OpenSSL for libsecret's keyring file (PBKDF2, AES-128-CBC, HMAC-SHA256: libsodium has
            // neither PBKDF2 nor AES-CBC); GLib (through libsecret) parses its GVariant.
            dependencies: ["CredentialVault", "CLibSecret", "CSodium", "COpenSSL", .product(name: "Logging", package: "swift-log"), metrics],
            swiftSettings: strict),
        .target(
            name: "CredentialVaultAuth",
            dependencies: [
                "CredentialVault", "CSodium", "COpenSSL", "CCurl", .product(name: "Logging", package: "swift-log"), metrics,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ],
            swiftSettings: strict),
        .target(
            name: "CredentialVaultConfiguration",
            dependencies: [
                "CredentialVault", .product(name: "Logging", package: "swift-log"),
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Configuration"])),
            ],
            swiftSettings: strict),
        // The command line: its parsing, options and vault commands (CredentialVault only), the
        // lean `credvault` (file and memory backends; the Swift libraries linked statically in
        // release, so that it starts in a few milliseconds), and `credvault-full` with every
        // command and backend, to which `credvault` hands over the rest (execv, git-style).
        // The credential server: CredentialVault and CLinuxCalls only (the lean CLI links it), and
        // swift-service-lifecycle for its `Service` when the trait is on.
        .target(
            name: "CredentialVaultCredentialServer",
            dependencies: [
                "CredentialVault", "CLinuxCalls",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ],
            swiftSettings: strict),
        .target(name: "CredentialVaultCLI", dependencies: ["CredentialVault", "CLinuxCalls", "CredentialVaultCredentialServer"], swiftSettings: strict),
        .executableTarget(
            name: "credvault",
            dependencies: ["CredentialVault", "CredentialVaultCLI"],
            swiftSettings: strict,
            linkerSettings: [.unsafeFlags(["-static-stdlib"] + staticFoundation, .when(configuration: .release))]),
        .executableTarget(
            name: "credvault-full",
            dependencies: [
                "CredentialVault", "CredentialVaultCLI", "CredentialVaultSecretService", "CredentialVaultAuth", "CredentialVaultTPM",
                "CredentialVaultPostgres", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        .executableTarget(
            name: "credvault-bench",
            dependencies: [
                "CredentialVault", "CredentialVaultSecretService", "CredentialVaultTPM", "CSodium", "CLibSecret", "credvault", "credvault-full",
                "CredentialVaultPostgres", "CLibPQ",
            ],
            path: "Benchmarks/credvault-bench",
            swiftSettings: strict),

        // The conformance suite every backend's tests run (a product: third-party backends run
        // it too) and the fault-injecting store.
        .target(name: "CredentialVaultTesting", dependencies: ["CredentialVault"], swiftSettings: strict),
        // The workloads of the multi-process tests, and the helper process that runs them
        // (concurrent writers, lock holders, crash victims).
        // What several test targets share: latches, ceilings, process spawners, line readers.
        .systemLibrary(name: "CTestSpawn", path: "Tests/CTestSpawn"),
        .target(
            name: "CredentialVaultTestSupport",
            dependencies: [
                "CredentialVaultTesting", "CTestSpawn", .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ],
            path: "Tests/Support", swiftSettings: strict),
        .target(name: "CredentialVaultTestPlans", dependencies: ["CredentialVault"], path: "Tests/Plans", swiftSettings: strict),
        .executableTarget(name: "credvault-testhelper", dependencies: ["CredentialVault", "CredentialVaultTestPlans"], path: "Tests/Helper", swiftSettings: strict),

        .testTarget(
            name: "CredentialVaultTests",
            dependencies: [
                "CredentialVaultTestSupport",
                "CredentialVault", "CredentialVaultCLI", "CSodium", "CredentialVaultTesting", "CredentialVaultTestPlans", "credvault-testhelper", "credvault", "credvault-full",
                "CredentialVaultCredentialServer", .product(name: "Logging", package: "swift-log"), metricsTestKit,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ],
            exclude: ["Fixtures"],
            swiftSettings: strict),
        // OpenSSL and libsodium are used directly by the tests to generate real keys and sign.
        .testTarget(
            name: "CredentialVaultAuthTests",
            dependencies: [
                "CredentialVaultTestSupport",
                "CredentialVaultAuth", "CredentialVault", "CredentialVaultTesting", "COpenSSL", "CSodium", "credvault", "credvault-full",
                "credvault-pghelper", .product(name: "Logging", package: "swift-log"), metricsTestKit,
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["ServiceLifecycle"])),
            ],
            swiftSettings: strict),
        // Runs Secret Service operations in a process of its own, on another D-Bus bus than the
        // test process's (locked keyring, no provider, no bus, stopped daemon). Tests only.
        .executableTarget(
            name: "secret-service-probe",
            dependencies: ["CredentialVault", "CredentialVaultSecretService", "CredentialVaultTesting"],
            path: "Tests/SecretServiceProbe",
            swiftSettings: strict),
        .testTarget(
            name: "CredentialVaultSecretServiceTests",
            dependencies: [
                "CredentialVaultTestSupport",
                "CredentialVault", "CredentialVaultSecretService", "CredentialVaultTesting", "secret-service-probe", "credvault", "credvault-full",
                .product(name: "Logging", package: "swift-log"), metricsTestKit,
            ],
            swiftSettings: strict),
        // The fleet store against a real PostgreSQL (scripts/services/postgres.sh), with its
        // helper process for the multi-process tests.
        .executableTarget(
            name: "credvault-pghelper", dependencies: ["CredentialVault", "CredentialVaultPostgres"], path: "Tests/PostgresHelper",
            swiftSettings: strict),
        .testTarget(
            name: "CredentialVaultPostgresTests",
            dependencies: [
                "CredentialVaultTestSupport", "CredentialVault", "CredentialVaultPostgres", "CredentialVaultTesting", "credvault-pghelper", "credvault", "credvault-full",
                .product(name: "Logging", package: "swift-log"), metricsTestKit,
            ],
            swiftSettings: strict),
        // TPM custody and the kernel keyring against swtpm and the real kernel; the helper runs
        // as another user (nobody) and is the process whose memory the scan reads.
        .executableTarget(
            name: "credvault-tpm-helper",
            dependencies: ["CredentialVault", "CredentialVaultTPM"],
            path: "Tests/TPMHelper",
            swiftSettings: strict),
        .testTarget(
            name: "CredentialVaultTPMTests",
            dependencies: [
                "CredentialVaultTestSupport",
                "CredentialVault", "CredentialVaultTPM", "CredentialVaultTesting", "credvault-tpm-helper", "credvault-testhelper", "credvault",
                "credvault-full", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // The configuration provider against the sealed file, the fleet store and systemd
        // credentials (built with the `Configuration` trait: scripts/test.sh enables every trait).
        .testTarget(
            name: "CredentialVaultConfigurationTests",
            dependencies: [
                "CredentialVaultTestSupport", "CredentialVault", "CredentialVaultConfiguration", "CredentialVaultPostgres", "CredentialVaultTesting",
                .product(name: "Configuration", package: "swift-configuration", condition: .when(traits: ["Configuration"])),
            ],
            swiftSettings: strict),
    ]
)
