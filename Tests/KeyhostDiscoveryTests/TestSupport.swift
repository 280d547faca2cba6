import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostDiscovery

/// The BIP39 test wallet ("abandon ... about"), whose addresses are published in BIP84 and elsewhere.
enum TestWallet {
    static let phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about"
    static let seed: SecretBytes = (try! Mnemonic(phrase: phrase)).seed()
    static let master = try! HDNode(seed: seed)

    static func keys() throws -> SeedKeySource { try SeedKeySource(seed: seed) }

    /// The address at a full path, derived independently of the engine (private derivation from the master).
    static func address(_ path: String, _ kind: AddressKind, coin: Coin = .bitcoin) throws -> String {
        try master.derive(path).address(kind, coin: coin)
    }

    static func bip84(account: UInt32 = 0, change: UInt32 = 0, index: UInt32) throws -> String {
        try address("m/84'/0'/\(account)'/\(change)/\(index)", .p2wpkh)
    }

    static func ethereum(_ path: String) throws -> String { try address(path, .ethereum, coin: .ethereum) }
}

/// A usage source over a set of used addresses that counts what it is asked.
final class CountingSource: UsageSource {
    let name: String
    let used: Set<String>
    private let lock = NSLock()
    private(set) var calls = 0
    private(set) var asked: [String] = []
    /// Throws on the call with this number (1-based), to simulate an interruption.
    var failOnCall: Int?

    init(_ used: [String], name: String = "counting") {
        self.used = Set(used)
        self.name = name
    }

    struct Interrupted: Error {}

    func usage(of addresses: [String]) throws -> [Bool] {
        lock.lock()
        defer { lock.unlock() }
        calls += 1
        if let failOnCall, calls >= failOnCall { throw Interrupted() }
        asked += addresses
        return addresses.map(used.contains)
    }
}

func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("keyhost-discovery-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Runs `body` and returns the DiscoveryError it throws, recording an issue if it throws none or another error.
func discoveryError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> DiscoveryError? {
    do {
        try body()
        Issue.record("expected a DiscoveryError, got none", sourceLocation: sourceLocation)
    } catch let error as DiscoveryError {
        return error
    } catch {
        Issue.record("expected a DiscoveryError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}
