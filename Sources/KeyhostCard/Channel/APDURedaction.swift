import KeyhostCrypto

/// Which APDU data fields carry secrets, decided by what the command is rather than by Keycard's CLA alone: traces
/// and error messages print these as `[n bytes redacted]`.
///
/// Keyed on INS for every CLA, because the Keycard applet dispatches on INS alone (3.2 and 4.0 both ignore CLA),
/// so `00 20 …` reaches VERIFY PIN, and because `s:transmit` can talk to any applet.
///
/// Command data redacted:
/// - ISO 7816-4 VERIFY (20/21), CHANGE REFERENCE DATA (24/25), RESET RETRY COUNTER (2C/2D): PINs, PUKs.
/// - Keycard INIT (FE), CHANGE PIN (21), UNBLOCK PIN (22), LOAD KEY (D0), PAIR (12).
/// - PERFORM SECURITY OPERATION (2A) when P2 names a plain value in the data (80, 84, 85: ENCIPHER's input).
/// - GlobalPlatform PUT KEY (D8) and PUT DATA with an odd INS (DB: OpenPGP's private key import).
///
/// Response data redacted:
/// - Keycard PAIR (12; its cryptograms allow guessing the pairing password offline), GENERATE MNEMONIC (D2; the
///   word indexes are the mnemonic), EXPORT KEY (C2) unless P2 is 01 (public) or 02 (extended public): P2 00
///   answers the private key and an unknown P2 is not trusted, EXPORT LEE (C3), EXPORT BIP85 (C4; entropy),
///   ECDH (C5; the raw shared secret).
/// - PERFORM SECURITY OPERATION (2A) when P1 names a plain value in the answer (80, 84, 85: DECIPHER's output).
/// - Tap cards (CB): the answers to `unseal`, `dump` and `backup` (`CKTapRedaction`).
public enum APDURedaction {
    /// INS whose command data is secret, whatever the CLA and parameters.
    static let secretCommandINS: Set<UInt8> = [
        0x20, 0x21, 0x24, 0x25, 0x2C, 0x2D,  // ISO VERIFY, CHANGE REFERENCE DATA, RESET RETRY COUNTER (even and odd)
        KeycardInstruction.initialize.rawValue, KeycardInstruction.unblockPIN.rawValue,
        KeycardInstruction.loadKey.rawValue, KeycardInstruction.pair.rawValue,
        0xD8, 0xDB,  // GlobalPlatform PUT KEY, PUT DATA (odd)
    ]

    /// INS whose answer data is secret, whatever the CLA and parameters.
    static let secretResponseINS: Set<UInt8> = [
        KeycardInstruction.pair.rawValue, KeycardInstruction.generateMnemonic.rawValue,
        0xC3,  // EXPORT LEE
        KeycardInstruction.exportBIP85.rawValue, KeycardInstruction.ecdh.rawValue,
    ]

    /// PERFORM SECURITY OPERATION's tags for a plain (not enciphered) value.
    static let plainValueTags: Set<UInt8> = [0x80, 0x84, 0x85]
    static let performSecurityOperation: UInt8 = 0x2A

    /// Whether the command's data field is secret.
    public static func redactsCommand(_ apdu: CommandAPDU) -> Bool {
        if secretCommandINS.contains(apdu.ins) { return true }
        return apdu.ins == performSecurityOperation && plainValueTags.contains(apdu.p2)
    }

    /// Whether the answer's data field is secret.
    public static func redactsResponse(to apdu: CommandAPDU) -> Bool {
        if secretResponseINS.contains(apdu.ins) { return true }
        if CKTapRedaction.redactsResponse(to: apdu) { return true }
        if apdu.ins == KeycardInstruction.exportKey.rawValue {
            return apdu.p2 != ExportOption.publicOnly.rawValue && apdu.p2 != ExportOption.extendedPublic.rawValue
        }
        return apdu.ins == performSecurityOperation && plainValueTags.contains(apdu.p1)
    }

    /// The command as hex, its data replaced by `[n bytes redacted]` when it is secret (for error messages).
    public static func describe(_ apdu: CommandAPDU) -> String {
        guard redactsCommand(apdu), !apdu.data.isEmpty else {
            if let bytes = try? apdu.encoded() { return Hex.encode(bytes) }
            return TracingChannel.format(command: apdu)
        }
        return Hex.encode([apdu.cla, apdu.ins, apdu.p1, apdu.p2]) + " [\(apdu.data.count) bytes redacted]"
    }
}
