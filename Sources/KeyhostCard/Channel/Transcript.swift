import KeyhostCrypto

/// A recorded card session in a line-based text format:
///
///     # keyhost card transcript 1
///     > 00a4040009a00000080400010101
///     < a481...  9000
///     ! connection lost
///
/// `>` lines are encoded command APDUs, `<` lines the response data (possibly empty) and the status word,
/// `!` a transport failure, `#` comments. Hex is lower case. Transcripts of secure sessions hold only
/// ciphertext for wrapped commands, but plain APDUs (e.g. PAIR cryptograms) are visible: treat files as sensitive.
public struct Transcript: Equatable, Sendable {
    public enum Entry: Equatable, Sendable {
        case exchange(command: [UInt8], response: ResponseAPDU)
        case failure(command: [UInt8])
    }

    public static let header = "# keyhost card transcript 1"

    public var entries: [Entry]

    public init(entries: [Entry] = []) { self.entries = entries }

    public var text: String {
        var lines = [Transcript.header]
        for entry in entries {
            switch entry {
            case .exchange(let command, let response):
                lines.append("> " + Hex.encode(command))
                let sw = Hex.encode([response.statusWord.sw1, response.statusWord.sw2])
                lines.append(response.data.isEmpty ? "< \(sw)" : "< \(Hex.encode(response.data)) \(sw)")
            case .failure(let command):
                lines.append("> " + Hex.encode(command))
                lines.append("! connection lost")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    public init(text: String) throws {
        var entries: [Entry] = []
        var pending: (command: [UInt8], line: Int)?
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let number = index + 1
            let line = String(raw).trimmed(" \t\r")
            if line.isEmpty || line.hasPrefix("#") { continue }
            guard let marker = line.first else { continue }
            let rest = String(line.dropFirst()).trimmed(" \t")
            switch marker {
            case ">":
                if let pending { throw CardChannelError.badTranscript(line: pending.line, reason: "command without a response") }
                do { pending = (try Hex.decode(rest), number) } catch {
                    throw CardChannelError.badTranscript(line: number, reason: "\(error)")
                }
            case "<":
                guard let command = pending?.command else {
                    throw CardChannelError.badTranscript(line: number, reason: "response without a command")
                }
                let parts = rest.split(separator: " ").map(String.init)
                guard (1...2).contains(parts.count), let swText = parts.last, swText.count == 4 else {
                    throw CardChannelError.badTranscript(line: number, reason: "expected '< [data] SW'")
                }
                do {
                    let data = parts.count == 2 ? try Hex.decode(parts[0]) : []
                    let sw = try Hex.decode(swText)
                    entries.append(.exchange(command: command, response: ResponseAPDU(data: data, statusWord: StatusWord(sw1: sw[0], sw2: sw[1]))))
                } catch {
                    throw CardChannelError.badTranscript(line: number, reason: "\(error)")
                }
                pending = nil
            case "!":
                guard let command = pending?.command else {
                    throw CardChannelError.badTranscript(line: number, reason: "failure without a command")
                }
                entries.append(.failure(command: command))
                pending = nil
            default:
                throw CardChannelError.badTranscript(line: number, reason: "unknown line marker '\(marker)'")
            }
        }
        if let pending { throw CardChannelError.badTranscript(line: pending.line, reason: "command without a response") }
        self.entries = entries
    }
}

private extension String {
    func trimmed(_ set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let f = s.first, chars.contains(f) { s = s.dropFirst() }
        while let l = s.last, chars.contains(l) { s = s.dropLast() }
        return String(s)
    }
}
