import KeyhostCard

/// Serves a `SoftSeedKeeper` to vpcd.
public final class SoftSeedKeeperVPCDCard: VPCDCard {
    /// The contactless ATR Satochip's cards show too; pysatochip selects by AID only.
    public static let contactlessATR: [UInt8] = SoftSatochipVPCDCard.contactlessATR

    public let card: SoftSeedKeeper
    public let atr: [UInt8]
    /// Told about failures the card cannot answer with a status word (e.g. the state file cannot be written).
    public var log: (String) -> Void

    public init(card: SoftSeedKeeper, atr: [UInt8] = SoftSeedKeeperVPCDCard.contactlessATR, log: @escaping (String) -> Void = { _ in }) {
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
            log("soft seedkeeper: \(error)")
            return [0x6F, 0x00]
        }
    }
}
