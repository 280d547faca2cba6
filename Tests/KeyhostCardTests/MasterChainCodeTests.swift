import KeyhostCrypto
import Testing
@testable import KeyhostCard

/// EXPORT KEY of the master's extended key. The 3.2 applet's doDerive copies only the master private key into its
/// output buffer for an empty path, so the chain code it answers is the last derivation's (zeros after a reset);
/// 4.0 refuses it (6985). The software card must do the same, and the client must never hand such a key on.
@Suite struct MasterChainCodeTests {
    static let m = try! KeyPath("m")

    /// The raw EXPORT KEY P1 01 P2 02 of m, past the client's refusal: what the card itself answers.
    static func rawMasterExport(_ client: KeycardCommandSet) throws -> ExportedKey {
        try ExportedKey(response: client.sendSecure(.exportKey, p1: 0x01, p2: ExportOption.extendedPublic.rawValue, data: []))
    }

    @Test func softCard32AnswersTheLastDerivationsChainCode() throws {
        let pair = try makeReadyCard(.v3_2)
        try pair.client.loadKey(seed: testMnemonic.seed())
        let master = try HDNode(seed: testMnemonic.seed())

        // After a reset the buffer is zero.
        let fresh = try Self.rawMasterExport(pair.client)
        #expect(fresh.chainCode == [UInt8](repeating: 0, count: 32))
        #expect(fresh.publicKey?.compressed == master.publicKey.compressed)

        // What keyhost's xpub of m/84'/1'/0' sends: the key, then its parent's (for the fingerprint).
        _ = try pair.client.exportKey(.extendedPublic, path: try KeyPath("m/84'/1'/0'"))
        _ = try pair.client.exportKey(.publicOnly, path: try KeyPath("m/84'/1'"))
        let stale = try Self.rawMasterExport(pair.client)
        #expect(stale.chainCode == (try master.derive("m/84'/1'")).chainCode)
        #expect(stale.chainCode != master.chainCode)
        #expect(stale.publicKey?.compressed == master.publicKey.compressed)

        // SELECT keeps it (transient memory, cleared on reset only); power loss clears it.
        try pair.client.select()
        try pair.client.openSecureChannel()
        try pair.client.verifyPIN(testPIN)
        #expect(try Self.rawMasterExport(pair.client).chainCode == (try master.derive("m/84'/1'")).chainCode)
        pair.soft.powerCycle()
        try pair.client.select()
        try pair.client.openSecureChannel()
        try pair.client.verifyPIN(testPIN)
        #expect(try Self.rawMasterExport(pair.client).chainCode == [UInt8](repeating: 0, count: 32))
    }

    @Test(arguments: [AppletVersion.v3_2, .v4_0])
    func clientRefusesTheMastersExtendedKey(applet: AppletVersion) throws {
        let pair = try makeReadyCard(applet)
        try pair.client.loadKey(seed: testMnemonic.seed())
        let master = try HDNode(seed: testMnemonic.seed())
        #expect {
            try pair.client.exportKey(.extendedPublic, path: Self.m)
        } throws: { error in
            guard case KeycardError.unsupportedForm(.exportKey, let what, _) = error else { return false }
            return what.contains("master key's extended public key (m)")
        }
        // The public key alone is fine, and so is any extended key below m.
        #expect(try pair.client.exportKey(.publicOnly, path: Self.m).publicKey?.compressed == master.publicKey.compressed)
        #expect(try pair.client.exportKey(.extendedPublic, path: try KeyPath("m/0")).chainCode == (try master.derive("m/0")).chainCode)
        if applet == .v3_2 {
            // The current key (m after LOAD KEY) and relative paths that land on m are refused as well.
            #expect(throws: KeycardError.self) { try pair.client.exportKey(.extendedPublic) }
            try pair.client.deriveKey(try KeyPath("m/44'"))
            #expect(throws: KeycardError.self) { try pair.client.exportKey(.extendedPublic, path: try KeyPath("..")) }
            #expect(try pair.client.exportKey(.extendedPublic).chainCode == (try master.derive("m/44'")).chainCode)
        } else {
            #expect(throws: KeycardError.conditionsNotSatisfied(.exportKey)) { try Self.rawMasterExport(pair.client) }
        }
    }
}
