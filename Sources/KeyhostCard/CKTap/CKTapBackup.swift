import KeyhostCrypto

/// A TAPSIGNER backup opened with the AES key printed on the card: the master extended private key and the
/// derivation path in effect when it was made.
public struct CKTapBackup: CustomStringConvertible {
    public let master: HDNode
    /// The path line as the card wrote it, e.g. "m/84h/0h/0h".
    public let path: String

    /// Largest backup decrypted; a real one is about 130 bytes.
    static let maxSize = 1024

    /// Decrypts and parses `data`; a wrong key gives text that is no xprv and fails here.
    public init(data: [UInt8], key: SecretBytes) throws {
        guard data.count <= Self.maxSize else { throw CKTapError.invalidArgument("a backup of \(data.count) bytes is larger than \(Self.maxSize)") }
        guard key.count == 16 else { throw CKTapError.invalidArgument("the backup key has 16 bytes (32 hex digits); the one given has \(key.count)") }
        var raw = key.revealedBytes()
        defer { zero(&raw) }
        var plain = try AESCTR.apply(data, key: raw)
        defer { zero(&plain) }
        let lines = plain.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard lines.count >= 2, let xprv = String(validating: lines[0], as: UTF8.self),
              let path = String(validating: lines[1], as: UTF8.self), path.hasPrefix("m") else {
            throw CKTapError.invalidArgument("the backup does not decrypt to an xprv and a path; check the backup key")
        }
        guard let node = try? HDNode.parse(xprv).node, node.isPrivate, node.depth == 0 else {
            throw CKTapError.invalidArgument("the backup's first line is no master extended private key; check the backup key")
        }
        master = node
        self.path = path
    }

    public var description: String { "CKTapBackup(path \(path), master key redacted)" }
}
