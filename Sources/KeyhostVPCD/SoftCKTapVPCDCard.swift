import KeyhostCard

/// Serves a `SoftCKTap` (TAPSIGNER or SATSCARD) to vpcd with the ATR `cktap` looks for.
public final class SoftCKTapVPCDCard: VPCDCard {
    public let card: SoftCKTap
    public let atr: [UInt8]
    /// Told about failures the card cannot answer with a status word (e.g. the state file cannot be written).
    public var log: (String) -> Void

    public init(card: SoftCKTap, log: @escaping (String) -> Void = { _ in }) {
        self.card = card
        self.atr = CKTap.atr
        self.log = log
    }

    public func powerOff() { card.powerCycle() }
    public func powerOn() {}
    public func reset() { card.powerCycle() }

    public func respond(to command: [UInt8]) -> [UInt8] {
        let apdu: CommandAPDU
        do { apdu = try CommandAPDU(bytes: command) } catch {
            return [0x67, 0x00]  // wrong length: the bytes are no well-formed APDU
        }
        do {
            return try card.transmit(apdu).encoded
        } catch {
            log("soft tap card: \(error)")
            return [0x6F, 0x00]
        }
    }
}
