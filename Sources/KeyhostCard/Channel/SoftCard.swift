/// A software twin of a card: it answers APDUs in process, and power loss drops its session (secure channel, verified
/// PIN, selection) while what the real card keeps in EEPROM stays.
public protocol SoftCard: CardChannel {
    func powerCycle()
}

extension SoftKeycard: SoftCard {}
extension SoftSatochip: SoftCard {}
extension SoftSeedKeeper: SoftCard {}
extension SoftCKTap: SoftCard {}
