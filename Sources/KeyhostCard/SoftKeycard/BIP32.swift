import KeyhostCrypto

/// BIP32 private derivation as the applet does it, kept separate from KeyhostCrypto's `HDNode`
/// so tests can compare the two independent implementations.
enum BIP32 {
    struct Node {
        var key: PrivateKey
        var chainCode: [UInt8]
    }

    static func master(seed: [UInt8]) throws -> Node {
        var i = Hash.hmacSHA512(key: Array("Bitcoin seed".utf8), data: seed)
        defer { wipe(&i) }
        return Node(key: try PrivateKey(bytes: Array(i[0..<32])), chainCode: Array(i[32..<64]))
    }

    static func child(_ parent: Node, _ index: UInt32) throws -> Node {
        var data: [UInt8]
        if index & 0x8000_0000 != 0 {
            data = [0] + parent.key.revealedBytes()
        } else {
            data = parent.key.publicKey.compressed
        }
        data += [UInt8(truncatingIfNeeded: index >> 24), UInt8(truncatingIfNeeded: index >> 16),
                 UInt8(truncatingIfNeeded: index >> 8), UInt8(truncatingIfNeeded: index)]
        defer { wipe(&data) }
        var i = Hash.hmacSHA512(key: parent.chainCode, data: data)
        defer { wipe(&i) }
        // adding(tweak:) fails exactly when IL >= n or the sum is zero, the cases BIP32 rejects.
        return Node(key: try parent.key.adding(tweak: Array(i[0..<32])), chainCode: Array(i[32..<64]))
    }

    static func derive(_ node: Node, _ path: [UInt32]) throws -> Node {
        try path.reduce(node) { try child($0, $1) }
    }
}
