/// A Keycard's identity from its SELECT answer (application info), for `CardIdentification`.
public enum KeycardIdentity {
    public static let probe: CardIdentification.Probe = { channel in
        let answer = try CardIdentification.select(Keycard.instanceAID, on: channel)
        // 4.x answers 6985 when it holds no identity certificate: a Keycard nonetheless, not made by its maker.
        if answer.statusWord == StatusWord(0x6985) {
            return CardIdentity(family: .keycard, version: "4.x", state: "no identity certificate")
        }
        guard answer.statusWord == .success else { return nil }
        let info = try ApplicationInfo(selectResponse: answer.data)
        let state = !info.isInitialized ? "blank" : info.hasMasterKey ? "ready" : "initialised, no key"
        return CardIdentity(family: .keycard, version: info.isInitialized ? "\(info.version)" : "", state: state)
    }
}
