import Foundation
import KeyhostCrypto
import Testing
@testable import KeyhostCard

/// Counts what reaches the card, to show a refusal sent nothing.
private final class CountingTap: CardChannel {
    let inner: CardChannel
    var count = 0
    var sent: [[UInt8]] = []
    init(_ inner: CardChannel) { self.inner = inner }
    func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        count += 1
        sent.append(apdu.data)
        return try inner.transmit(apdu)
    }
}

private func path(_ text: String) throws -> [UInt32] { try DerivationPath(text).indexes }

/// TapsignerSigner and SatscardSigner against the twin; keys checked with bip-utils' BIP32 from the card's own
/// backup, signatures with coincurve (Tests/Oracles/cktap_oracle.py).
@Suite struct TapCardSignerTests {
    /// A set-up TAPSIGNER behind a counting channel, with a signer on it.
    private func tapsigner() throws -> (soft: SoftCKTap, counter: CountingTap, signer: TapsignerSigner) {
        let (soft, setupClient) = try makeReadyTapsigner(seed: "signer")
        _ = setupClient
        let counter = CountingTap(soft)
        let client = CKTapCommandSet(channel: counter, random: SeededRandom(seed: "signer client"))
        try client.select()
        return (soft, counter, TapsignerSigner(card: client, cvc: tapCVC))
    }

    @Test func tapsignerKeysAreBIP32OfItsBackup() throws {
        let (soft, _, signer) = try tapsigner()
        let paths = ["m", "m/84'/0'/0'", "m/84'/0'/0'/0/5", "m/44'/1'/2'/1", "m/0'"]
        var mine: [String] = []
        for text in paths {
            let key = try signer.extendedKey(at: try path(text))
            mine.append("\(hexOf(key.publicKey.compressed)) \(hexOf(key.chainCode))")
            #expect(try signer.publicKey(at: try path(text)).compressed == key.publicKey.compressed)
        }
        let backup = try CKTapBackup(data: try signer.card.backup(cvc: tapCVC), key: SecretBytes(try #require(soft.state.backupKey)))
        let oracle = try tapOracle(["bip32", try backup.master.extendedPrivateKey()] + paths).split(separator: "\n").map(String.init)
        #expect(mine == oracle)
        // The session moved the card's derivation; closing puts it back.
        signer.close()
        #expect(try signer.card.getStatus().path == CKTap.defaultTapsignerPath)
    }

    @Test func tapsignerSignsAtDerivedPathPlusSubpathVerifiedByCoincurve() throws {
        let (_, _, signer) = try tapsigner()
        let digest = Hash.sha256(Array("tapsigner signer".utf8))
        for text in ["m/84'/0'/0'/1/9", "m/84'/0'/0'", "m/49'/0'/3'/0", "m/84'/0'/0'/0/0"] {
            let signed = try signer.signECDSA(digest: digest, at: try path(text))
            #expect(signed.publicKey.compressed == (try signer.publicKey(at: try path(text))).compressed)
            #expect(try signed.signature.recoverPublicKey(digest: digest).compressed == signed.publicKey.compressed)
            let verdict = try tapOracle(["verify", hexOf(signed.publicKey.compressed), hexOf(digest), hexOf(signed.signature.signature.compact)])
            #expect(verdict == "valid", "\(text)")
        }
    }

    @Test func tapsignerRefusesUnreachablePathsBeforeSending() throws {
        let (_, counter, signer) = try tapsigner()
        let before = counter.count
        let digest = Hash.sha256(Array("refused".utf8))
        let refusals: [(String, () throws -> Void)] = [
            ("3 levels below", { _ = try signer.signECDSA(digest: digest, at: try path("m/84'/0'/0'/0/1/2")) }),
            ("hardened after unhardened", { _ = try signer.publicKey(at: try path("m/84'/0/1'")) }),
            ("9 hardened", { _ = try signer.extendedKey(at: try path("m/1'/2'/3'/4'/5'/6'/7'/8'/9'")) }),
            ("schnorr", { _ = try signer.signSchnorr(digest: digest, at: try path("m/86'/0'/0'/0/0"), taproot: nil) }),
        ]
        for (name, call) in refusals {
            #expect(throws: CardSignerError.self, "\(name)") { try call() }
        }
        #expect(counter.count == before)
        do {
            _ = try signer.signECDSA(digest: digest, at: try path("m/84'/0'/0'/0/1/2"))
        } catch let error as CardSignerError {
            #expect(error.kind == "invalid_path")
            #expect(error.description.contains("a TAPSIGNER signs at most 2 unhardened levels below the path it derived to"))
        }
        // Public keys go deeper than signatures: they are derived here.
        #expect(throws: Never.self) { _ = try signer.publicKey(at: try path("m/84'/0'/0'/0/1/2")) }
    }

    @Test func blankTapsignerIsRefusedBeforeSending() throws {
        let (soft, _) = try makeTapCard(.tapsigner, seed: "blank")
        let counter = CountingTap(soft)
        let client = CKTapCommandSet(channel: counter, random: SeededRandom(seed: "blank client"))
        try client.select()
        let signer = TapsignerSigner(card: client, cvc: tapCVC)
        let before = counter.count
        #expect { _ = try signer.publicKey(at: try path("m/84'/0'/0'")) } throws: { ($0 as? CardSignerError)?.kind == "no_key" }
        #expect(counter.count == before)
    }

    @Test func satscardSignsWithItsUnsealedSlotOnly() throws {
        let (soft, _) = try makeTapCard(.satscard, seed: "sats")
        let counter = CountingTap(soft)
        let client = CKTapCommandSet(channel: counter, random: SeededRandom(seed: "sats client"))
        let status = try client.select()
        let sealed = SatscardSigner(card: client, slot: try client.dump(slot: status.activeSlot), cvc: { tapCVC })
        let key = try sealed.publicKey(at: [0])
        #expect(key.compressed == (try client.readSlot()).publicKey.compressed)
        let digest = Hash.sha256(Array("satscard".utf8))
        let before = counter.count
        #expect { _ = try sealed.signECDSA(digest: digest, at: [0]) } throws: { ($0 as? CardSignerError)?.kind == "sealed" }
        #expect { _ = try sealed.extendedKey(at: [0]) } throws: { ($0 as? CardSignerError)?.kind == "unsupported" }
        #expect { _ = try sealed.publicKey(at: try path("m/84'/0'/0'/0/0")) } throws: { ($0 as? CardSignerError)?.kind == "invalid_path" }
        #expect(counter.count == before)

        let unsealed = try client.unseal(cvc: tapCVC)
        #expect(unsealed.privateKey.publicKey.compressed == key.compressed)
        #expect(try client.getStatus().activeSlot == unsealed.slot + 1)  // the card moves on to the next slot
        let open = SatscardSigner(card: client, slot: try SatscardSigner.slotToUse(client), cvc: { tapCVC })
        #expect(open.slot.slot == unsealed.slot && open.slot.state == .unsealed)
        #expect(try open.publicKey(at: [0]).compressed == key.compressed)
        let signed = try open.signECDSA(digest: digest, at: [0])
        #expect(signed.publicKey.compressed == key.compressed)
        let verdict = try tapOracle(["verify", hexOf(key.compressed), hexOf(digest), hexOf(signed.signature.signature.compact)])
        #expect(verdict == "valid")
    }

    @Test func theCVCNeverCrossesTheWireAndKeyAnswersAreRedacted() throws {
        let (_, counter, signer) = try tapsigner()
        _ = try signer.signECDSA(digest: Hash.sha256(Array("wire".utf8)), at: try path("m/84'/0'/0'/0/0"))
        _ = try signer.extendedKey(at: [])
        #expect(counter.count > 3)
        let cvc = Array("123456".utf8)
        for data in counter.sent where data.count >= cvc.count {
            let found = (0...(data.count - cvc.count)).contains { Array(data[$0..<$0 + cvc.count]) == cvc }
            #expect(!found)
        }
        func command(_ name: String) -> CommandAPDU {
            CommandAPDU(cla: CKTap.cla, ins: CKTap.ins, data: CKTapCBORCoding.encode(.textMap([("slot", .int(0)), ("cmd", .text(name))])))
        }
        for name in ["unseal", "dump", "backup"] { #expect(APDURedaction.redactsResponse(to: command(name)), "\(name)") }
        for name in ["read", "status", "sign", "derive"] { #expect(!APDURedaction.redactsResponse(to: command(name)), "\(name)") }
    }
}
