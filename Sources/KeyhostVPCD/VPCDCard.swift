import KeyhostCard

/// A card as vpcd sees it: power, reset, an ATR, and raw APDUs in and out.
public protocol VPCDCard: AnyObject {
    var atr: [UInt8] { get }
    /// Power off or reset: session state goes (what the card keeps in EEPROM stays).
    func powerOff()
    func powerOn()
    func reset()
    /// Answers raw command bytes with raw response bytes (data ‖ SW1 SW2).
    func respond(to command: [UInt8]) -> [UInt8]
}

/// Serves any software twin (`SoftCard`) to vpcd, with the ATR its makers' clients look for.
public final class SoftCardVPCDCard: VPCDCard {
    /// What a PC/SC reader reports for an ISO 14443-4 card without historical bytes, as a Keycard or a Satochip on a
    /// contactless reader shows up: `3B 80 80 01 01` (T=1 offered; TCK = 01). keycard-py and pysatochip select by AID
    /// only, so this ATR only has to be well formed; cktap looks for `CKTap.atr`.
    public static let contactlessATR: [UInt8] = [0x3B, 0x80, 0x80, 0x01, 0x01]

    public let card: SoftCard
    public let atr: [UInt8]
    /// Told about failures the card cannot answer with a status word (e.g. the state file cannot be written).
    public var log: (String) -> Void

    public init(card: SoftCard, atr: [UInt8] = SoftCardVPCDCard.contactlessATR, log: @escaping (String) -> Void = { _ in }) {
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
            log("software card: \(error)")
            return [0x6F, 0x00]
        }
    }
}
