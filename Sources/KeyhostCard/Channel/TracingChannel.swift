#if canImport(Glibc)
import Glibc
#endif
import KeyhostCrypto
import KeyhostFiles

/// Passes every APDU to another channel and writes each exchange as text lines:
///
///     >> 00 a4 04 00 09 a0 00 00 08 04 00 01 01 01
///     << a4 81 ... 90 00 (0.12 ms)
///
/// Data fields that carry secrets are replaced by `[n bytes redacted]`, by what the command is and for every
/// CLA (`APDURedaction` lists them): PINs, PUKs, pairing cryptograms, keys loaded or exported, GENERATE
/// MNEMONIC's word indexes, BIP85 entropy, ECDH secrets. This holds for wrapped
/// (secure channel v1) commands too, whose header stays readable. Secure channel v2 sends every command as
/// INS 18, whose data is ciphertext; `plaintext(command:response:)` shows the inner exchange when the
/// command set reports it (`KeycardCommandSet.secureExchangeObserver`), redacted the same way.
public final class TracingChannel: CardChannel {
    public let underlying: CardChannel
    /// Whether `plaintext(command:response:)` writes anything.
    public var showsPlaintext: Bool
    private let output: (String) -> Void

    /// `output` receives one line at a time, without the newline; the default writes to standard error.
    public init(_ underlying: CardChannel, showsPlaintext: Bool = false, output: ((String) -> Void)? = nil) {
        self.underlying = underlying
        self.showsPlaintext = showsPlaintext
        self.output = output ?? TracingChannel.standardError
    }

    public static func standardError(_ line: String) {
        _ = WriteAll.write(STDERR_FILENO, Array((line + "\n").utf8))
    }

    /// Whether the command's data field is redacted (see `APDURedaction`).
    public static func redactsCommand(_ apdu: CommandAPDU) -> Bool { APDURedaction.redactsCommand(apdu) }

    /// Whether the answer's data field is redacted (see `APDURedaction`).
    public static func redactsResponse(to apdu: CommandAPDU) -> Bool { APDURedaction.redactsResponse(to: apdu) }

    public func transmit(_ apdu: CommandAPDU) throws -> ResponseAPDU {
        output(">> " + TracingChannel.format(command: apdu))
        let start = TracingChannel.now()
        do {
            let response = try underlying.transmit(apdu)
            output("<< " + TracingChannel.format(response: response, redacted: TracingChannel.redactsResponse(to: apdu))
                   + " (\(TracingChannel.milliseconds(since: start)))")
            return response
        } catch {
            output("!! \(error) (\(TracingChannel.milliseconds(since: start)))")
            throw error
        }
    }

    /// Shows one decrypted secure-channel exchange (only when `showsPlaintext`), indented under the wire lines.
    public func plaintext(command: CommandAPDU, response: ResponseAPDU) {
        guard showsPlaintext else { return }
        output("   plaintext >> " + TracingChannel.format(command: command))
        output("   plaintext << " + TracingChannel.format(response: response, redacted: TracingChannel.redactsResponse(to: command)))
    }

    // MARK: - Formatting

    public static func spaced(_ bytes: [UInt8]) -> String {
        bytes.map { byteHex($0) }.joined(separator: " ")
    }

    public static func format(command apdu: CommandAPDU) -> String {
        var text = spaced([apdu.cla, apdu.ins, apdu.p1, apdu.p2])
        if !apdu.data.isEmpty {
            let count = apdu.data.count
            text += " " + (count > 255 || apdu.forceExtended ? spaced([0, UInt8(truncatingIfNeeded: count >> 8), UInt8(truncatingIfNeeded: count)])
                                                             : byteHex(UInt8(truncatingIfNeeded: count)))
            text += redactsCommand(apdu) ? " [\(count) bytes redacted]" : " " + spaced(apdu.data)
        }
        if let le = apdu.le { text += " Le=\(le)" }
        if let name = KeycardInstruction(rawValue: apdu.ins).name, apdu.cla & 0xF0 == 0x80 || apdu.ins == 0xA4 {
            text += "  ; \(name)"
        }
        return text
    }

    public static func format(response: ResponseAPDU, redacted: Bool) -> String {
        let sw = byteHex(response.statusWord.sw1) + byteHex(response.statusWord.sw2)
        var text: String
        if response.data.isEmpty {
            text = sw
        } else if redacted {
            text = "[\(response.data.count) bytes redacted] " + sw
        } else {
            text = spaced(response.data) + " " + sw
        }
        if let name = response.statusWord.name, !response.statusWord.isSuccess { text += "  ; \(name)" }
        return text
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    static func milliseconds(since start: UInt64) -> String {
        let elapsed = Double(now() &- start) / 1_000_000
        return elapsed < 10 ? String(format2: elapsed) + " ms" : "\(Int(elapsed.rounded())) ms"
    }
}

private extension String {
    /// Two decimals without Foundation.
    init(format2 value: Double) {
        let hundredths = Int((value * 100).rounded())
        let fraction = hundredths % 100
        self = "\(hundredths / 100)." + (fraction < 10 ? "0" : "") + "\(fraction)"
    }
}
