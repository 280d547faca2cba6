import Foundation
import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// The client against the software TAPSIGNER and SATSCARD through every flow; keys checked against KeyhostCrypto's
/// own BIP32 (`HDNode`, independent of the twin's derivation), the session crypto against the maker's client (cktap).
@Suite struct CKTapFlowTests {
    /// The CVC proof matches cktap's `calc_xcvc` for the same ephemeral key; the card ident its `card_pubkey_to_ident`.
    @Test func authMatchesCktap() throws {
        let card = try PrivateKey(bytes: Hash.sha256(Array("card".utf8))).publicKey
        let ephemeral = try PrivateKey(bytes: Hash.sha256(Array("ephemeral".utf8)))
        let nonce = Array(UInt8(0)..<16)
        let key = try CKTapAuth.sessionKey(privateKey: ephemeral, publicKey: card)
        let xcvc = CKTapAuth.maskCVC(Array("123456".utf8), sessionKey: key, cardNonce: nonce, command: "sign")
        let oracle = try tapOracle(["xcvc", "sign", hexOf(nonce), hexOf(card.compressed), "123456", hexOf(ephemeral.revealedBytes())]).split(separator: " ")
        #expect(oracle == [Substring(hexOf(key.revealedBytes())), Substring(hexOf(xcvc)), Substring(hexOf(ephemeral.publicKey.compressed))])
        #expect(CKTap.cardIdent(card.compressed) == (try tapOracle(["ident", hexOf(card.compressed)])))
    }

    @Test func tapsignerSetupDeriveXpubSignBackup() throws {
        let (soft, client) = try makeTapCard(.tapsigner)
        let fresh = try client.select()
        #expect(fresh.product == .tapsigner && fresh.path == nil && fresh.numBackups == 0)
        #expect { try client.xpub(master: true, cvc: tapCVC) } throws: { ($0 as? CKTapError)?.code == 400 }
        try client.setup(chainCode: Hash.sha256(Array("chain code".utf8)), cvc: tapCVC)
        #expect(client.status?.path == CKTap.defaultTapsignerPath)
        #expect { try client.setup(chainCode: Hash.sha256(Array("again".utf8)), cvc: tapCVC) } throws: { ($0 as? CKTapError)?.kind == "bad_arguments" }

        // Certificates: the twin's root is trusted when given, Coinkite's is not reached.
        #expect(try client.certificateCheck(trustedRoots: [testRoot]) == testRoot)
        #expect { try client.certificateCheck(trustedRoots: [CKTap.factoryRootKey]) } throws: { ($0 as? CKTapError) == .untrustedRoot(testRoot) }

        let path: [UInt32] = [0x8000_0054, 0x8000_0001, 0x8000_0000]
        let derived = try client.derive(path: path, cvc: tapCVC)
        let xpub = try client.xpub(master: false, cvc: tapCVC)
        let master = try client.xpub(master: true, cvc: tapCVC)
        #expect(xpub.publicKey == derived.publicKey && xpub.chainCode == derived.chainCode && xpub.depth == 3)
        #expect(master.publicKey == derived.masterPublicKey && master.depth == 0)
        #expect(try client.readPublicKey(cvc: tapCVC) == derived.publicKey)

        // The backup, opened with the key on the card, re-derives everything with HDNode.
        let data = try client.backup(cvc: tapCVC)
        let backup = try CKTapBackup(data: data, key: SecretBytes(try #require(soft.state.backupKey)))
        #expect(backup.path == "m/84h/1h/0h")
        #expect(backup.master.neutered().extendedPublicKey() == master.extendedPublicKey())
        let node = try backup.master.derive(try DerivationPath("m/84'/1'/0'"))
        #expect(node.publicKey == derived.publicKey && node.chainCode == derived.chainCode)
        #expect(try client.getStatus().numBackups == 1)
        #expect(throws: CKTapError.self) { try CKTapBackup(data: data, key: SecretBytes([UInt8](repeating: 7, count: 16))) }

        let digest = Hash.sha256(Array("spend".utf8))
        let signed = try client.sign(digest: digest, subpath: [1, 7], cvc: tapCVC)
        let child = try node.derive(try DerivationPath(indexes: [1, 7], absolute: false))
        #expect(signed.publicKey == child.publicKey)
        #expect(try child.publicKey.verify(signed.signature, digest: digest))
        #expect { try client.sign(digest: digest, subpath: [0x8000_0000], cvc: tapCVC) } throws: { ($0 as? CKTapError)?.kind == "invalid_argument" }
    }

    /// `sign` retries the card's 205 as cktap does; a seeded twin that answers 205 one time in eight still signs.
    @Test func signRetriesUnluckyNumbers() throws {
        let (_, client) = try makeReadyTapsigner(unlucky: true)
        let digest = Hash.sha256(Array("lucky".utf8))
        for _ in 0..<20 { _ = try client.sign(digest: digest, cvc: tapCVC) }
    }

    @Test func changeCVCNeedsBackupAndTakesEffect() throws {
        let (_, client) = try makeReadyTapsigner()
        let newCVC = SecretBytes(Array("24682468".utf8))
        #expect { try client.changeCVC(from: tapCVC, to: newCVC) } throws: { ($0 as? CKTapError) == .backupFirst(command: "change") }
        _ = try client.backup(cvc: tapCVC)
        #expect { try client.changeCVC(from: tapCVC, to: SecretBytes(Array("abcdef".utf8))) } throws: { ($0 as? CKTapError)?.code == 400 }
        try client.changeCVC(from: tapCVC, to: newCVC)
        #expect { try client.readPublicKey(cvc: tapCVC) } throws: { ($0 as? CKTapError) == .badAuth(command: "read") }
        _ = try client.readPublicKey(cvc: newCVC)
        #expect { try client.changeCVC(from: newCVC, to: SecretBytes(Array("12345".utf8))) } throws: { ($0 as? CKTapError)?.kind == "invalid_argument" }
    }

    /// Three wrong CVCs answer 401, then 429 until 15 `wait`s; the right CVC then works, and a wrong one after the
    /// delay starts it again. The back-off survives a power cycle.
    @Test func wrongCVCBackOff() throws {
        let (soft, client) = try makeReadyTapsigner()
        for _ in 0..<3 {
            #expect { try client.readPublicKey(cvc: wrongTapCVC) } throws: { ($0 as? CKTapError) == .badAuth(command: "read") }
        }
        #expect { try client.readPublicKey(cvc: tapCVC) } throws: { ($0 as? CKTapError) == .rateLimited(command: "read", delay: 15) }
        soft.powerCycle()
        #expect { try client.getStatus() } throws: { ($0 as? CKTapError) == .statusWord(.insNotSupported, command: "status") }
        #expect(try client.select().authDelay == 15)
        for expected in (0..<15).reversed() { #expect(try client.wait() == expected) }
        #expect(try client.getStatus().authDelay == 0)
        #expect { try client.readPublicKey(cvc: wrongTapCVC) } throws: { ($0 as? CKTapError) == .badAuth(command: "read") }
        #expect(try client.getStatus().authDelay == 15)
        for _ in 0..<15 { try client.wait() }
        _ = try client.readPublicKey(cvc: tapCVC)
        #expect { try client.readPublicKey(cvc: wrongTapCVC) } throws: { ($0 as? CKTapError) == .badAuth(command: "read") }
        #expect(try client.getStatus().authDelay == 0)
    }

    @Test func satscardSlotsReadDeriveUnsealNewDump() throws {
        let (soft, client) = try makeTapCard(.satscard)
        let st = try client.select()
        #expect(st.product == .satscard && st.activeSlot == 0 && st.numSlots == 10 && st.blankedAddress != nil)
        let slot0 = try client.readSlot()
        #expect(try client.verifySlotDerivation().address == slot0.address)
        #expect(try client.certificateCheck(trustedRoots: [testRoot]) == testRoot)
        #expect(try client.dump(slot: 0).state == .sealed)
        #expect(try client.dump(slot: 1).state == .unused)
        #expect { try client.sign(digest: [UInt8](repeating: 1, count: 32), slot: 0, cvc: tapCVC) } throws: { ($0 as? CKTapError)?.code == 406 }
        #expect { try client.newSlot(cvc: tapCVC) } throws: { ($0 as? CKTapError)?.code == 400 }

        let unsealed = try client.unseal(cvc: tapCVC)
        #expect(unsealed.slot == 0 && unsealed.address == slot0.address)
        #expect(unsealed.privateKey.publicKey == slot0.publicKey)
        #expect(try client.getStatus().activeSlot == 1 && client.status?.blankedAddress == nil)
        let public0 = try client.dump(slot: 0)
        #expect(public0.state == .unsealed && public0.address == slot0.address && public0.privateKey == nil)
        let private0 = try client.dump(slot: 0, cvc: tapCVC)
        #expect(private0.privateKey == unsealed.privateKey && private0.masterPrivateKey == unsealed.masterPrivateKey)
        #expect { try client.unseal(cvc: tapCVC) } throws: { ($0 as? CKTapError)?.code == 400 }

        let digest = Hash.sha256(Array("sweep".utf8))
        let signed = try client.sign(digest: digest, slot: 0, cvc: tapCVC)
        #expect(signed.publicKey == slot0.publicKey)

        #expect(try client.newSlot(cvc: tapCVC) == 1)
        let slot1 = try client.readSlot()
        #expect(slot1.address != slot0.address)
        let derivation = try client.verifySlotDerivation()
        #expect(derivation.address == slot1.address && derivation.chainCode == unsealed.chainCode)
        #expect(try client.certificateCheck(trustedRoots: [testRoot]) == testRoot)
        #expect { try client.sign(digest: digest, slot: 1, cvc: tapCVC) } throws: { ($0 as? CKTapError)?.code == 406 }
        #expect(soft.state.slots[1].sealed)
        // A TAPSIGNER-only command on a SATSCARD is refused before anything is sent, and by the card if sent anyway.
        #expect { try client.backup(cvc: tapCVC) } throws: { ($0 as? CKTapError)?.kind == "wrong_product" }
    }

    /// The whole card runs out: nine unseal/new rounds, then the last slot unsealed stays the active one.
    @Test func satscardConsumesAllSlots() throws {
        let (_, client) = try makeTapCard(.satscard, seed: "consume")
        try client.select()
        for slot in 0..<10 {
            #expect(try client.unseal(cvc: tapCVC).slot == slot)
            if slot < 9 { #expect(try client.newSlot(chainCode: Hash.sha256([UInt8(slot)]), cvc: tapCVC) == slot + 1) }
        }
        #expect(try client.getStatus().activeSlot == 9)
        #expect(try client.dump(slot: 9).state == .unsealed)
        #expect { try client.newSlot(cvc: tapCVC) } throws: { ($0 as? CKTapError)?.code == 400 }
    }

    /// The twin's certificates and check signature pass cktap's own verification, which reaches the twin's root.
    @Test func certificatesPassCktapVerification() throws {
        for kind in [SoftCKTapState.Kind.satscard, .tapsigner] {
            let (soft, client) = try makeTapCard(kind, seed: "certs-\(kind)")
            let st = try client.select()
            let slotKey = kind == .satscard ? try client.readSlot().publicKey.compressed : nil
            let status = try client.getStatus()
            let chain = try #require(try CKTapCommandSet(channel: soft).send("certs")["cert_chain"]?.arrayValue).compactMap(\.byteString)
            let nonce = Array(UInt8(1)...16)
            let check = try soft.transmit(CommandAPDU(cla: 0, ins: 0xCB, data: CKTapCBORCoding.encode(.textMap([("cmd", .text("check")), ("nonce", .bytes(nonce))]))))
            let sig = try #require(try CKTapCBORCoding.decode(check.data)["auth_sig"]?.byteString)
            let root = try tapOracle(["certs", hexOf(status.cardNonce), hexOf(st.cardPublicKey.compressed), hexOf(nonce), hexOf(sig),
                                      slotKey.map(hexOf) ?? "-"] + chain.map(hexOf))
            #expect(root == hexOf(testRoot))
        }
    }

    @Test func stateFilePersistsAndIsPrivate() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("cktap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("card.json")
        let first = try makeTapCard(.satscard, seed: "file", store: SoftCKTapStore(url: url))
        try first.client.select()
        let unsealed = try first.client.unseal(cvc: tapCVC)
        let mode = try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
        #expect(mode & 0o777 == 0o600)
        let again = try makeTapCard(.satscard, seed: "other", store: SoftCKTapStore(url: url))
        #expect(try again.client.select().activeSlot == 1)
        #expect(try again.client.dump(slot: 0, cvc: tapCVC).privateKey == unsealed.privateKey)
        #expect { try makeTapCard(.tapsigner, store: SoftCKTapStore(url: url)) } throws: { "\($0)".contains("holds a satscard") }
    }
}
