// swift-tools-version:6.1
import PackageDescription

/// A file sees extension members only from modules it imports itself. Without this, a dependency that imports
/// Foundation (GRDB, PostgresNIO) makes Foundation's String methods resolve in files that never import it,
/// and the static keyhost then links Foundation and its ICU data (32 MiB) for a `contains`.
let onlyImportedMembers: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")]

/// Swift 6 language mode (complete data-race checking) for the domain modules and the services: shared
/// state is guarded by `Mutex` or is immutable and `Sendable`, and the compiler holds every target here to it.
let swift6: [SwiftSetting] = [.swiftLanguageMode(.v6)]

/// A system library found through pkg-config and installed from Debian.
func systemLibrary(_ name: String, pkgConfig: String, apt: [String]) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", pkgConfig: pkgConfig, providers: [.apt(apt)])
}

/// A system library whose headers keyhost compiles against but which CKeyhostLoader opens on first use.
func lazyLibrary(_ name: String, apt: [String]) -> Target {
    .systemLibrary(name: name, path: "Sources/\(name)", providers: [.apt(apt)])
}

let package = Package(
    name: "keyhost",
    // keyhost builds for Linux only (Debian's liblua5.4, pcsclite, libsecp256k1, OpenSSL, libedit, SQLite;
    // Glibc and /proc throughout): no other platform is declared or tested.
    products: [
        .executable(name: "keyhost", targets: ["keyhost"]),
        .executable(name: "keyhost-ledger", targets: ["keyhost-ledger"]),
        .library(name: "LuaRuntime", targets: ["LuaRuntime"]),
        .library(name: "KeyhostCrypto", targets: ["KeyhostCrypto"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.34.1"),
    ],
    targets: [
        // C libraries from Debian, each wrapped once.
        systemLibrary("CLua", pkgConfig: "lua5.4", apt: ["liblua5.4-dev"]),
        systemLibrary("CSecp256k1", pkgConfig: "libsecp256k1", apt: ["libsecp256k1-dev"]),
        systemLibrary("CPCSCLite", pkgConfig: "libpcsclite", apt: ["libpcsclite-dev"]),
        // Headers only: CKeyhostLoader loads these libraries on first use, and a pkg-config or
        // module-map link would make the dynamic loader map them at every start (libcrypto alone
        // costs about as much as Lua's whole start-up). Their headers need no extra flags.
        lazyLibrary("COpenSSL", apt: ["libssl-dev"]),
        lazyLibrary("CEditLine", apt: ["libedit-dev"]),
        lazyLibrary("CSQLite", apt: ["libsqlite3-dev"]),
        .target(name: "CKeyhostLoader", dependencies: ["COpenSSL", "CEditLine", "CSQLite"], linkerSettings: [.linkedLibrary("dl")]),

        // Trampolines and macro shims: the only C that touches lua_error.
        .target(name: "CKeyhostLua", dependencies: ["CLua", "CKeyhostProcess"]),

        // The Lua runtime: owns lua_State, converts values, sandboxes.
        .target(name: "LuaRuntime", dependencies: ["CLua", "CKeyhostLua"]),

        // Reading files users name, with a size limit.
        .target(name: "KeyhostFiles", swiftSettings: swift6),
        // Results as Lua tables and as --json share one shape.
        .target(name: "KeyhostRecord", swiftSettings: swift6),

        // Domain modules: pure Swift, no Lua inside.
        .target(name: "KeyhostCrypto", dependencies: ["CSecp256k1", "COpenSSL", "CKeyhostLoader", "CKeyhostProcess", "CKeyhostSHA256"], swiftSettings: swift6),
        .target(name: "KeyhostCard", dependencies: ["KeyhostCrypto", "KeyhostFiles", "COpenSSL"], swiftSettings: swift6),
        .target(name: "KeyhostPCSC", dependencies: ["CPCSCLite", "KeyhostCard"], swiftSettings: swift6),
        .target(name: "KeyhostVPCD", dependencies: ["KeyhostCard"], swiftSettings: swift6),
        // HTTP/1.1 over sockets, TLS through OpenSSL: for usage sources, the ledger client and whatever else speaks HTTP.
        .target(name: "KeyhostHTTP", dependencies: ["KeyhostCrypto", "COpenSSL"], swiftSettings: swift6),
        .target(name: "KeyhostDiscovery", dependencies: ["KeyhostCrypto", "KeyhostFiles", "KeyhostRecord", "KeyhostHTTP", "KeyhostBitcoin"], swiftSettings: swift6),
        .target(name: "KeyhostTokens", dependencies: ["KeyhostCrypto", "KeyhostRecord"], swiftSettings: swift6),
        // Ethereum transactions (RLP, EIP-155/2930/1559) and EIP-712 typed data.
        .target(name: "KeyhostEthereum", dependencies: ["KeyhostCrypto", "KeyhostRecord"], swiftSettings: swift6),
        // Bitcoin transactions and PSBTs (BIP174 v0, BIP370 v2, BIP371 taproot fields): parse, sign, finalize;
        // output descriptors (BIP380-386, BIP389) and their scripts and addresses.
        .target(name: "KeyhostBitcoin", dependencies: ["KeyhostCrypto", "KeyhostRecord"], swiftSettings: swift6),
        // A Keycard as a PSBT signer (kept apart so the domain module knows no card).
        .target(name: "KeyhostBitcoinCard", dependencies: ["KeyhostBitcoin", "KeyhostCard", "KeyhostCrypto"], swiftSettings: swift6),
        // The one caller of SQLite's C API: connections, statements, transactions, migrations.
        .target(name: "KeyhostSQLite", dependencies: ["CSQLite", "CKeyhostLoader"], swiftSettings: swift6),
        // The wallet file: held tokens and their exactly-once runs, in SQLite.
        .target(name: "KeyhostWallet", dependencies: ["KeyhostTokens", "KeyhostCrypto", "KeyhostFiles", "KeyhostSQLite", "KeyhostRecord"], swiftSettings: swift6),

        // The issuer's ledger of deposited tokens: verification, its JSON, the SQLite store, and
        // PostgreSQL through a keyhost-ledger child process (no database driver linked here).
        .target(name: "KeyhostLedger", dependencies: [
            "KeyhostTokens", "KeyhostCrypto", "KeyhostFiles", "KeyhostRecord", "KeyhostSQLite", "KeyhostWorkerProcess", "CKeyhostProcess",
        ], swiftSettings: swift6),
        // Deadlines on NIO's event loops for the store and the service: linked into keyhost-ledger only.
        .target(name: "KeyhostLedgerDeadline", dependencies: [
            "KeyhostLedger", .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOPosix", package: "swift-nio"),
        ], swiftSettings: swift6),
        // The PostgreSQL store (PostgresNIO): linked into keyhost-ledger only.
        .target(name: "KeyhostLedgerPostgres", dependencies: [
            "KeyhostLedger", "KeyhostLedgerDeadline", "KeyhostCrypto", .product(name: "PostgresNIO", package: "postgres-nio"),
        ], swiftSettings: swift6),
        // The ledger's HTTP service (Hummingbird): linked into keyhost-ledger only.
        .target(name: "KeyhostLedgerServer", dependencies: [
            "KeyhostLedger", "KeyhostLedgerDeadline", "KeyhostRecord", "KeyhostTokens", "KeyhostCrypto", "KeyhostWorkerProcess", .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "Logging", package: "swift-log"), .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "HummingbirdCore", package: "hummingbird"), .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
        ], swiftSettings: swift6),
        // The options `ledger serve` shares between keyhost (which describes them) and keyhost-ledger.
        .target(name: "KeyhostLedgerCommand", dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")]),
        // The server side of the ledger, kept out of keyhost's binary and start-up: `keyhost token
        // ledger serve` execs it, a postgres:// ledger runs in it as a child (`keyhost-ledger pipe`).
        .executableTarget(name: "keyhost-ledger", dependencies: [
            "KeyhostLedger", "KeyhostLedgerCommand", "KeyhostLedgerPostgres", "KeyhostLedgerServer", "KeyhostRecord", "KeyhostTokens",
            "KeyhostCrypto", "KeyhostWorkerProcess", "CKeyhostProcess", .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // Runs a token's program in the deterministic sandbox (inside the worker process).
        .target(name: "KeyhostPlayer", dependencies: ["LuaRuntime", "KeyhostTokens", "KeyhostCrypto", "CKeyhostProcess", "KeyhostWorkerProcess"]),
        // Starting worker processes and talking to them (no Lua here): wallets run tokens through
        // it, and verifiers (payees, ledgers, keyhost-ledger) re-run programs to check transfers.
        .target(name: "KeyhostWorkerProcess", dependencies: ["KeyhostTokens", "KeyhostFiles", "CKeyhostProcess"], swiftSettings: swift6),
        .target(name: "CKeyhostProcess"),
        .target(name: "CKeyhostSHA256"),

        // The card services both front ends share (keyhost's commands and the Lua binding): sessions, pairing and
        // its store, secrets, reader choice, structured errors. Plain Swift values and `Record` results: no Lua here.
        .target(name: "KeyhostServices", dependencies: [
            "KeyhostCard", "KeyhostCrypto", "KeyhostFiles", "KeyhostRecord", "KeyhostTokens", "KeyhostWallet", "KeyhostLedger", "KeyhostHTTP",
            "KeyhostBitcoin", "KeyhostDiscovery", "CKeyhostProcess",
        ], swiftSettings: onlyImportedMembers + swift6),

        // Thin Lua modules over the domain modules and the services.
        .target(name: "KeyhostBindings", dependencies: [
            "LuaRuntime", "KeyhostServices", "KeyhostCrypto", "KeyhostCard", "KeyhostDiscovery", "KeyhostHTTP", "KeyhostFiles", "KeyhostTokens", "KeyhostWallet", "KeyhostPlayer",
            "KeyhostWorkerProcess", "KeyhostLedger", "KeyhostRecord", "KeyhostEthereum", "KeyhostBitcoin", "KeyhostBitcoinCard", "CKeyhostProcess",
        ], swiftSettings: onlyImportedMembers),

        .executableTarget(
            name: "keyhost",
            dependencies: [
                "LuaRuntime", "KeyhostBindings", "KeyhostServices", "CEditLine", "CKeyhostLoader", "KeyhostCrypto",
                "KeyhostPCSC", "KeyhostVPCD", "KeyhostCard", "KeyhostDiscovery", "KeyhostHTTP", "KeyhostTokens", "KeyhostFiles",
                "KeyhostPlayer", "KeyhostWorkerProcess", "KeyhostWallet", "KeyhostLedger", "KeyhostLedgerCommand", "KeyhostRecord", "KeyhostEthereum",
                "KeyhostBitcoin", "KeyhostBitcoinCard", "CKeyhostProcess", .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // With --static-swift-stdlib the toolchain links with -export-dynamic, which puts every
            // public symbol of every package module (~50 000) in the dynamic symbol table: the Swift
            // runtime's start-up dladdr() then scans them all and each run pays about 0.5 ms.
            // Nothing looks keyhost's symbols up dynamically, so they stay local (release builds only;
            // tests link this module into their own bundle and keep the defaults).
            swiftSettings: onlyImportedMembers,
            linkerSettings: [.unsafeFlags(["-Xlinker", "--no-export-dynamic"], .when(platforms: [.linux], configuration: .release))],
            plugins: ["BuildInfo"]
        ),
        // The commit and C library versions `keyhost --version` prints.
        .plugin(name: "BuildInfo", capability: .buildTool()),

        // Speed figures against C baselines (scripts/bench); not part of the product.
        .executableTarget(name: "keyhost-bench", dependencies: ["KeyhostCrypto", "KeyhostCard", "KeyhostBitcoin", "KeyhostBitcoinCard"]),
        .executableTarget(
            name: "keyhost-token-bench",
            dependencies: ["KeyhostWallet", "KeyhostPlayer", "KeyhostWorkerProcess", "KeyhostTokens", "KeyhostCrypto", "KeyhostSQLite", "CKeyhostProcess"]
        ),

        .executableTarget(name: "keyhost-ledger-bench", dependencies: [
            "KeyhostLedger", "KeyhostLedgerPostgres", "KeyhostTokens", "KeyhostCrypto", "KeyhostWorkerProcess", "KeyhostPlayer",
        ]),

        // Test helpers shared by test targets (a loopback HTTP server).
        .target(name: "KeyhostTestSupport", dependencies: ["KeyhostFiles"], path: "Tests/KeyhostTestSupport"),

        .testTarget(name: "LuaRuntimeTests", dependencies: ["LuaRuntime"]),
        .testTarget(name: "KeyhostCryptoTests", dependencies: ["KeyhostCrypto", "KeyhostTestSupport"], resources: [.copy("Vectors")]),
        .testTarget(name: "KeyhostCLITests", dependencies: [
            "keyhost", "KeyhostTestSupport", "KeyhostPlayer", "KeyhostWorkerProcess", "KeyhostTokens", "KeyhostCrypto",
        ]),
        .testTarget(name: "KeyhostCardTests", dependencies: ["KeyhostCard", "KeyhostCrypto"]),
        .testTarget(name: "KeyhostBindingsTests", dependencies: ["KeyhostBindings", "KeyhostServices", "KeyhostRecord", "KeyhostCard", "KeyhostCrypto", "LuaRuntime"]),
        .testTarget(name: "KeyhostServicesTests", dependencies: [
            "KeyhostServices", "KeyhostRecord", "KeyhostCard", "KeyhostCrypto", "KeyhostDiscovery", "KeyhostLedger", "KeyhostFiles",
        ]),
        .testTarget(name: "KeyhostPCSCTests", dependencies: ["KeyhostPCSC", "KeyhostCard"]),
        .testTarget(name: "KeyhostTokensTests", dependencies: ["KeyhostTokens", "KeyhostCrypto", "KeyhostTestSupport"], resources: [.copy("Vectors")]),
        .testTarget(name: "KeyhostPlayerTests", dependencies: ["KeyhostPlayer", "KeyhostTokens", "KeyhostCrypto", "LuaRuntime"]),
        .testTarget(
            name: "KeyhostWalletTests", dependencies: ["KeyhostWallet", "KeyhostTokens", "KeyhostCrypto", "KeyhostSQLite", "KeyhostTestSupport"],
            // Wallet files GRDB wrote, opened by copy (see WalletLegacyFileTests).
            exclude: ["Fixtures"]),
        .testTarget(name: "KeyhostLedgerTests", dependencies: [
            "KeyhostLedger", "KeyhostLedgerDeadline", "KeyhostLedgerPostgres", "KeyhostLedgerServer", "KeyhostRecord", "KeyhostTokens", "KeyhostCrypto", "KeyhostTestSupport", "keyhost",
            "KeyhostWorkerProcess", .product(name: "NIOEmbedded", package: "swift-nio"),
        ]),
        .testTarget(name: "KeyhostEthereumTests", dependencies: ["KeyhostEthereum", "KeyhostCrypto", "KeyhostRecord", "KeyhostTestSupport"]),
        .testTarget(name: "KeyhostBitcoinTests", dependencies: ["KeyhostBitcoin", "KeyhostCrypto", "KeyhostTestSupport"], resources: [.copy("Vectors")]),
        .testTarget(name: "KeyhostSQLiteTests", dependencies: ["KeyhostSQLite", "KeyhostTestSupport"]),
        .testTarget(name: "KeyhostDiscoveryTests", dependencies: ["KeyhostDiscovery", "KeyhostHTTP", "KeyhostCrypto", "KeyhostBitcoin", "KeyhostTestSupport"]),
    ],
    swiftLanguageModes: [.v5]
)
