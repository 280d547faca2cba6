/// A SeedKeeper's identity from SELECT and GET STATUS (plain, the Satochip format), for `CardIdentification`.
public enum SeedKeeperIdentity {
    public static let probe: CardIdentification.Probe = { channel in
        guard try CardIdentification.select(SeedKeeper.aid, on: channel).statusWord == .success else { return nil }
        let answer = try channel.transmit(CommandAPDU(cla: Satochip.cla, ins: SatochipInstruction.getStatus.rawValue))
        guard answer.statusWord == .success else {
            return CardIdentity(family: .seedkeeper, version: "", state: "status unreadable (SW \(answer.statusWord))")
        }
        let status = try SatochipStatus(parsing: answer.data)
        return CardIdentity(family: .seedkeeper, version: status.version, state: status.isSetupDone ? "ready" : "not set up")
    }
}
