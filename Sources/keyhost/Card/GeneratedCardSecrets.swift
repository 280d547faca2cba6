import KeyhostCard
import KeyhostCrypto
import KeyhostRecord
import KeyhostServices

#if canImport(Glibc)
import Glibc
#endif

/// PIN, PUK and pairing password made by keyhost for `keyhost card init --generate-secrets` (keycard-cli's init does
/// the same), from the system CSPRNG: six and twelve digits, each drawn uniformly, and 12 random bytes in base64url
/// as the pairing password (16 characters, as keycard-go's GenerateSecrets makes it). The PUK never starts with the
/// PIN and the PIN is never the duress PIN: either would let the PIN open the duress wallet (DuressPIN).
public struct GeneratedCardSecrets {
    public let pin: SecretBytes
    public let puk: SecretBytes
    /// For 3.x cards, which pair; nil for 4.x.
    public let pairingPassword: SecretBytes?

    /// New secrets; `duressPIN` is one the user chose, which the PIN must not be.
    public init(pairingPassword: Bool, duressPIN: [UInt8]?, random: RandomSource = SystemRandom()) {
        var pin: [UInt8] = [], puk: [UInt8] = []
        defer { zero(&pin); zero(&puk) }
        repeat {
            zero(&pin); zero(&puk)
            pin = Self.digits(Keycard.pinLength, random)
            puk = Self.digits(Keycard.pukLength, random)
        } while DuressPIN.problem(pin: pin, puk: puk, duress: duressPIN) != nil
        self.pin = SecretBytes(pin)
        self.puk = SecretBytes(puk)
        if pairingPassword {
            var bytes = random.bytes(12)
            var text = Base64.encodeURLBytes(bytes)
            self.pairingPassword = SecretBytes(text)
            zero(&bytes); zero(&text)
        } else {
            self.pairingPassword = nil
        }
    }

    /// The secrets under the names `keyhost card init` prints them: `pin`, `puk`, `pairing_password` (null on 4.x).
    public var fields: [(String, Record)] {
        [("pin", .string(pin.text)), ("puk", .string(puk.text)), ("pairing_password", .string(pairingPassword?.text))]
    }

    /// Refuses new secrets while KEYHOST_PIN, KEYHOST_PUK or (when the card pairs) KEYHOST_PAIRING_PASSWORD is set: the
    /// card would take the new ones while the user believes it holds theirs.
    public static func checkEnvironment(pairingPassword: Bool) throws {
        let secrets: [CardSecret] = [.pin, .puk] + (pairingPassword ? [.pairingPassword] : [])
        let set = secrets.map(\.environment).filter { name in getenv(name).map { $0.pointee != 0 } ?? false }
        guard !set.isEmpty else { return }
        let (verb, them) = set.count == 1 ? ("is", "it") : ("are", "them")
        throw CardServiceError(kind: "invalid_argument", "\(set.joined(separator: ", ")) \(verb) set, but --generate-secrets makes the card's "
                               + "secrets: unset \(them) to have new ones made, or leave out --generate-secrets to use \(them)")
    }

    /// `count` ASCII digits, each uniform: bytes from 250 up are drawn again (250 is the largest multiple of 10 in a byte).
    static func digits(_ count: Int, _ random: RandomSource) -> [UInt8] {
        var digits: [UInt8] = []
        while digits.count < count {
            var batch = random.bytes(count)
            for byte in batch where byte < 250 && digits.count < count { digits.append(0x30 + byte % 10) }
            zero(&batch)
        }
        return digits
    }
}

/// INIT went through with secrets keyhost made, and what followed (pairing, storing the pairing) failed: the
/// secrets must still be shown, or nobody would know them. `result` is what `initialize` knows, secrets included.
public struct CardInitIncomplete: Error {
    public let result: Record
    public let error: Error
}
