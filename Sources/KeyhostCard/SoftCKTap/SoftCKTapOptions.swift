/// How a new software tap card is made, and how it behaves.
public struct SoftCKTapOptions: Sendable {
    public var kind: SoftCKTapState.Kind
    /// The CVC printed on the card (6 to 32 bytes; the emulator's is "123456").
    public var cvc: [UInt8]
    public var testnet: Bool
    /// Makes every random byte reproducible (tests only).
    public var randomSeed: [UInt8]?
    /// Seconds one `wait` takes; a real card takes one, tests need none.
    public var secondsPerWait: Double
    /// Whether `sign` answers 205 (unlucky number) one time in eight, as the real card does.
    public var unluckySigning: Bool

    public static let defaultCVC: [UInt8] = Array("123456".utf8)

    public init(kind: SoftCKTapState.Kind, cvc: [UInt8] = SoftCKTapOptions.defaultCVC, testnet: Bool = false,
                randomSeed: [UInt8]? = nil, secondsPerWait: Double = 0, unluckySigning: Bool = true) {
        self.kind = kind
        self.cvc = cvc
        self.testnet = testnet
        self.randomSeed = randomSeed
        self.secondsPerWait = secondsPerWait
        self.unluckySigning = unluckySigning
    }
}
