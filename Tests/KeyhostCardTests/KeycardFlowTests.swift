import Testing
import KeyhostCrypto
@testable import KeyhostCard

/// The whole client flow against the software card, for both secure channel versions. Keys are checked
/// against KeyhostCrypto's own BIP32 (`HDNode`), signatures by verification and recovery.
@Suite struct KeycardFlowTests {
    static let versions: [AppletVersion] = [.v3_2, .v4_0]

    @Test(arguments: versions)
    func selectBeforeAndAfterInit(_ version: AppletVersion) throws {
        let pair = try makeCard(version)
        let before = try pair.client.select()
        #expect(!before.isInitialized)
        #expect(before.secureChannelVersion == (version.major >= 4 ? .v2 : .v1))
        if version.major < 4 {
            #expect(before.secureChannelPublicKey != nil && before.version == AppletVersion(major: 0, minor: 0))
            // Before INIT the 3.x applet answers 6D00 to anything but INIT.
            #expect(throws: KeycardError.instructionNotSupported(.getData)) { try pair.client.getData() }
        } else {
            #expect(before.status == 0 && before.identityCertificate != nil)
            #expect(before.pinRetries == nil) // a blank card has no PIN: not "0 tries left"
        }
        try pair.client.initialize(pin: testPIN, puk: testPUK, pairingSecret: version.major < 4 ? PairingSecret.derive(password: testPairingPassword) : nil)
        let after = try pair.client.select()
        #expect(after.isInitialized)
        #expect(after.version == version)
        #expect(after.keyUID == nil)
        if version.major < 4 {
            #expect(after.freePairingSlots == 10)
            #expect(after.instanceUID?.count == 16)
            // INIT regenerates the card's secure channel key.
            #expect(after.secureChannelPublicKey != before.secureChannelPublicKey)
        } else {
            #expect(after.pinRetries == 3)
        }
        #expect(throws: KeycardError.alreadyInitialized) {
            try pair.client.initialize(pin: testPIN, puk: testPUK, pairingSecret: nil)
        }
    }

    @Test(arguments: versions)
    func wholeFlow(_ version: AppletVersion) throws {
        let pair = try makeReadyCard(version)
        let card = pair.client
        var status = try card.getStatus()
        #expect(status == ApplicationStatus(pinRetries: 3, pukRetries: 5, hasMasterKey: false))

        // GENERATE KEY, then GENERATE MNEMONIC and LOAD KEY (seed) of that mnemonic.
        let generatedUID = try card.generateKey()
        #expect(generatedUID.count == 32)
        #expect(try card.getStatus().hasMasterKey)
        let indexes = try card.generateMnemonic(wordCount: 12)
        let mnemonic = try KeycardMnemonic.mnemonic(fromIndexes: indexes)
        #expect(mnemonic.words.count == 12)
        let seed = mnemonic.seed()
        let master = try HDNode(seed: seed)
        let keyUID = try card.loadKey(seed: seed)
        #expect(keyUID == Hash.sha256(master.publicKey.uncompressed))
        #expect(keyUID != generatedUID)
        status = try card.getStatus()
        #expect(status.hasMasterKey)

        // SELECT now carries the key UID (3.x: A4 81 len; 4.x: one byte short, tolerated).
        let info = try card.select()
        #expect(info.keyUID == keyUID)
        try card.openSecureChannel()
        try card.verifyPIN(testPIN)

        // EXPORT: public, extended public, private on EIP-1581 only.
        let account = try KeyPath("m/44'/60'/0'/0/0")
        let exported = try card.exportKey(.publicOnly, path: account)
        #expect(exported.publicKey == (try master.derive("m/44'/60'/0'/0/0")).publicKey)
        #expect(exported.privateKey == nil && exported.chainCode == nil)
        let xpub = try card.exportKey(.extendedPublic, path: KeyPath("m/44'/60'/0'/0"))
        let node = try master.derive("m/44'/60'/0'/0")
        #expect(xpub.publicKey == node.publicKey && xpub.chainCode == node.chainCode)
        let eip = try card.exportKey(.privateAndPublic, path: KeyPath("m/43'/60'/1581'/0'/0"))
        #expect(eip.privateKey == (try master.derive("m/43'/60'/1581'/0'/0")).privateKey)
        #expect(eip.resolvedPublicKey == (try master.derive("m/43'/60'/1581'/0'/0")).publicKey)
        #expect(throws: KeycardError.conditionsNotSatisfied(.exportKey)) { try card.exportKey(.privateAndPublic, path: account) }
        #expect(throws: KeycardError.conditionsNotSatisfied(.exportKey)) { try card.exportKey(.extendedPublic, path: KeyPath("m/43'/60'/1581'/0'/0")) }

        // SIGN.
        let digest = Hash.sha256(Array("keyhost".utf8))
        func check(_ sig: KeycardSignature, _ path: String) throws {
            let expected = try master.derive(path).publicKey
            #expect(sig.publicKey == expected)
            #expect(sig.isValid)
            #expect(sig.signature.signature.isLowS)
            #expect(try sig.signature.recoverPublicKey(digest: digest) == expected)
        }
        try check(card.sign(digest: digest, mode: .current), "m")
        try check(card.sign(digest: digest, mode: .derive(KeyPath("m/44'/60'/0'/0/1"))), "m/44'/60'/0'/0/1")

        if version.major < 4 {
            try card.deriveKey(account)
            #expect(try card.getCurrentPath().components == account.components)
            #expect(try card.exportKey(.publicOnly).publicKey == (try master.derive("m/44'/60'/0'/0/0")).publicKey)
            try check(card.sign(digest: digest, mode: .current), "m/44'/60'/0'/0/0")
            try check(card.sign(digest: digest, mode: .deriveAndMakeCurrent(KeyPath("../2"))), "m/44'/60'/0'/0/2")
            #expect(try card.getCurrentPath().description == "m/44'/60'/0'/0/2")
            try check(card.sign(digest: digest, mode: .derive(KeyPath("./5"))), "m/44'/60'/0'/0/2/5")
            #expect(try card.getCurrentPath().description == "m/44'/60'/0'/0/2")
            // PIN-less: unset → 6A88; set → usable without PIN, with or without a secure channel.
            #expect(throws: KeycardError.referencedDataNotFound(.sign)) { try card.sign(digest: digest, mode: .pinless) }
            let pinless: [UInt32] = try DerivationPath("m/44'/60'/0'/0/7").indexes
            try card.setPinlessPath(pinless)
            try card.select()
            try check(card.sign(digest: digest, mode: .pinless), "m/44'/60'/0'/0/7")
            try card.openSecureChannel()
            try check(card.sign(digest: digest, mode: .pinless), "m/44'/60'/0'/0/7")
            #expect(throws: KeycardError.conditionsNotSatisfied(.sign)) { try card.sign(digest: digest, mode: .current) }
            try card.verifyPIN(testPIN)
        } else {
            #expect(throws: KeycardError.unsupported(.deriveKey, applet: "4.0")) { try card.deriveKey(account) }
            #expect(throws: KeycardError.unsupportedForm(.sign, what: "a PIN-less path (there is no SET PINLESS PATH on 4.x)", applet: "4.0")) {
                try card.sign(digest: digest, mode: .pinless)
            }
            // BIP340 Schnorr, untweaked and tweaked.
            let schnorr = try card.signSchnorr(digest: digest, path: account)
            let accountKey = try master.derive("m/44'/60'/0'/0/0")
            #expect(schnorr.publicKey == accountKey.publicKey)
            #expect(accountKey.publicKey.xOnly.verify(schnorr: schnorr.signature, message: digest))
            let tweak = Hash.sha256(Array("tweak".utf8))
            let tweaked = try card.signSchnorr(digest: digest, path: account, tweak: tweak)
            let tweakedKey = accountKey.publicKey.xOnly.bytes
            let outputKey = try PublicKey(bytes: [0x02] + tweakedKey).adding(tweak: tweak).xOnly
            #expect(outputKey.verify(schnorr: tweaked.signature, message: digest))
            #expect(!accountKey.publicKey.xOnly.verify(schnorr: tweaked.signature, message: digest))
            #expect(try card.getChallenge(length: 32).count == 32)
            // The applet refuses the master's chain code (6985); the client refuses first (MasterChainCodeTests).
            #expect(throws: KeycardError.self) { try card.exportKey(.extendedPublic, path: KeyPath("m")) }
        }

        // GET/STORE DATA.
        try card.storeData(Array("hello card".utf8))
        #expect(try card.getData() == Array("hello card".utf8))
        #expect(throws: KeycardError.wrongData(.storeData)) { try card.storeData([UInt8](repeating: 1, count: 128)) }

        // Change PIN and PUK, then use them.
        try card.changePIN("654321")
        try card.changePUK("111122223333")
        try card.select()
        try card.openSecureChannel()
        #expect(throws: KeycardError.wrongPIN(triesLeft: 2)) { try card.verifyPIN(testPIN) }
        try card.verifyPIN("654321")

        // REMOVE KEY.
        try card.removeKey()
        #expect(try !card.getStatus().hasMasterKey)
        #expect(throws: KeycardError.conditionsNotSatisfied(.sign)) { try card.sign(digest: digest) }

        if version.major < 4, let pairing = card.pairing {
            // UNPAIR frees the slot; the old pairing no longer opens a channel.
            try card.unpair(index: pairing.index)
            try card.select()
            card.pairing = pairing
            #expect(throws: KeycardError.incorrectParameters(.openSecureChannel, .incorrectP1P2)) { try card.openSecureChannel() }
            #expect(try card.select().freePairingSlots == 10)
        }

        // FACTORY RESET.
        try card.factoryReset()
        #expect(!(try card.select().isInitialized))
    }

    @Test(arguments: versions)
    func loadKeyPairs(_ version: AppletVersion) throws {
        let card = try makeReadyCard(version).client
        let master = try HDNode(seed: testMnemonic.seed())
        guard let masterKey = master.privateKey else { Issue.record("no private key"); return }
        // Extended key pair: derivation works like from the seed.
        let uid = try card.loadKey(privateKey: masterKey, chainCode: master.chainCode)
        #expect(uid == Hash.sha256(master.publicKey.uncompressed))
        #expect(try card.exportKey(.publicOnly, path: KeyPath("m/84'/0'/0'/0/0")).publicKey == (try master.derive("m/84'/0'/0'/0/0")).publicKey)
        // Plain key pair: no derivation, signing with the key itself.
        let plain = PrivateKey.generate()
        try card.loadKey(privateKey: plain, includePublicKey: false)
        let digest = Hash.sha256([1, 2, 3])
        let sig = try card.sign(digest: digest)
        #expect(sig.publicKey == plain.publicKey && sig.isValid)
        #expect(throws: KeycardError.conditionsNotSatisfied(.exportKey)) { try card.exportKey(.publicOnly, path: KeyPath("m/0")) }
    }

    @Test func fourOhSelectLengthQuirkIsTolerated() throws {
        // The 4.0 answer with a key is `A4 81 (len-1) ...`; a strict parser would cut the certificate short.
        let pair = try makeReadyCard(.v4_0)
        try pair.client.generateKey()
        let answer = try pair.soft.transmit(CommandAPDU(cla: 0, ins: 0xA4, p1: 4, data: Keycard.instanceAID))
        let header = try TLV.parseHeader(answer.data, at: 0)
        #expect(header.length == answer.data.count - header.valueOffset - 1)
        #expect(throws: TLVError.self) { try TLV.parseAll(answer.data).first?.children() }
        let info = try ApplicationInfo(selectResponse: answer.data)
        #expect(info.identityCertificate?.bytes.count == 98 && info.keyUID?.count == 32)
    }

    @Test func untrustedCertificateIsRefused() throws {
        let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v4_0, randomSeed: [1]))
        let client = KeycardCommandSet(channel: soft, random: SeededRandom(seed: "c"))  // trusts only the real Keycard CAs
        try client.select()
        #expect(throws: KeycardError.self) { try client.openSecureChannel() }
        #expect(!client.isSecureChannelOpen)
        client.trustedIdentityKeys = [try #require(client.applicationInfo?.identityCertificate?.identityKey)]
        try client.openSecureChannel()
        #expect(client.isSecureChannelOpen)
    }

    @Test func sessionHelperReturnsPairingForReuse() throws {
        let soft = try SoftKeycard(options: SoftKeycardOptions(appletVersion: .v3_2, randomSeed: [2]))
        let setup = KeycardCommandSet(channel: soft)
        try setup.select()
        try setup.initialize(pin: testPIN, puk: testPUK, pairingSecret: PairingSecret.derive(password: testPairingPassword))
        let (first, pairing) = try KeycardSession.open(channel: soft, pin: testPIN, pairingPassword: testPairingPassword)
        let stored = try #require(pairing)
        #expect(try first.getStatus().pinRetries == 3)
        #expect(try first.select().freePairingSlots == 9)
        let (second, reused) = try KeycardSession.open(channel: soft, pin: testPIN, pairing: Pairing(index: stored.index, key: stored.key.revealedBytes()))
        #expect(reused == stored)
        #expect(try second.getStatus().pinRetries == 3)
        #expect(try second.select().freePairingSlots == 9)
    }
}
