import KeyhostCard

/// Serves a `SoftSatochip` to vpcd.
public final class SoftSatochipVPCDCard: VPCDCard {
    /// What a PC/SC reader reports for an ISO 14443-4 card without historical bytes, as a Satochip on an NFC reader
    /// shows up: `3B 80 80 01 01`. pysatochip (and Electrum, Sparrow) filter on nothing but the applet's AID,
    /// so the ATR only has to be well formed.
    public static let contactlessATR: [UInt8] = [0x3B, 0x80, 0x80, 0x01, 0x01]

    public let card: SoftSatochip
    public let atr: [UInt8]
    /// Told about failures the card cannot answer with a status word (e.g. the state file cannot be written).
    public var log: (String) -> Void

    public init(card: SoftSatochip, atr: [UInt8] = SoftSatochipVPCDCard.contactlessATR, log: @escaping (String) -> Void = { _ in }) {
        self.card = card
        self.atr = atr
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
            log("soft satochip: \(error)")
            return [0x6F, 0x00]
        }
    }
}
