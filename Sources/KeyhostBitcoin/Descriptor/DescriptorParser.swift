import KeyhostCrypto

/// Reads descriptor text into an `OutputDescriptor`: recursive descent over ASCII bytes, every error with its position.
///
/// The grammar bounds the nesting (sh(wsh(multi)) is the deepest valid form), and the text, the keys, the
/// derivation steps and the multipath choices are all bounded before any work is done on them.
struct DescriptorParser {
    /// Where a script expression stands, which decides what may appear in it.
    enum Context {
        case top, sh, wsh

        var name: String {
            switch self {
            case .top: return "at the top level"
            case .sh: return "inside sh()"
            case .wsh: return "inside wsh()"
            }
        }
    }

    private let text: [UInt8]
    private let allowPrivateKeys: Bool
    private var pos = 0
    /// Whether an extended key seen so far was a tpub (nil before the first extended key).
    private var testnet: Bool?
    /// The multipath length seen so far, and where.
    private var multipath: (count: Int, position: Int)?

    private init(_ text: [UInt8], allowPrivateKeys: Bool) {
        self.text = text
        self.allowPrivateKeys = allowPrivateKeys
    }

    static func parse(_ source: String, allowPrivateKeys: Bool) throws -> OutputDescriptor {
        let bytes = Array(source.utf8)
        guard bytes.count <= OutputDescriptor.maxLength else {
            throw DescriptorError(.invalid, "\(bytes.count) bytes is over the \(OutputDescriptor.maxLength)-byte limit for a descriptor; check that the right text was given")
        }
        guard !bytes.isEmpty else { throw DescriptorError(.invalid, "the descriptor is empty; write one such as wpkh([fingerprint/84h/0h/0h]xpub…/0/*)") }
        // The checksum check also refuses, with its position, any character outside BIP380's set: all that follows is ASCII.
        let (body, _) = try DescriptorChecksum.split(bytes)
        _ = try DescriptorChecksum.compute(body, offset: 0)
        var parser = DescriptorParser(body, allowPrivateKeys: allowPrivateKeys)
        let script = try parser.script(.top)
        if parser.pos < body.count {
            throw DescriptorError(.invalid, "unexpected \(DescriptorText.excerpt(body[parser.pos...])) after the end of the descriptor", at: parser.pos)
        }
        let marker = body.contains(UInt8(ascii: "'")) ? "'" : "h"
        return OutputDescriptor(script: script, marker: marker)
    }

    // MARK: - Script expressions

    private mutating func script(_ context: Context) throws -> DescriptorScript {
        let start = pos
        let name = identifier()
        guard !name.isEmpty, peek == UInt8(ascii: "(") else {
            if pos >= text.count && name.isEmpty {
                throw DescriptorError(.invalid, "a script expression such as wpkh(KEY) is missing here", at: start)
            }
            throw DescriptorError(.invalid, context == .top
                ? "expected a script expression such as wpkh(KEY), sh(…), wsh(…) or tr(KEY), found \(DescriptorText.excerpt(text[start...]))"
                : "\(context == .sh ? "sh" : "wsh")() takes a script expression such as \(context == .sh ? "wpkh(KEY) or wsh(…)" : "sortedmulti(2,KEY,KEY)"), "
                    + "not \(DescriptorText.excerpt(text[start...]))", at: start)
        }
        pos += 1  // "("
        let result: DescriptorScript
        switch name {
        case "pk":
            result = .pk(try key(context, inside: "pk"))
        case "pkh":
            result = .pkh(try key(context, inside: "pkh"))
        case "wpkh":
            guard context != .wsh else { throw DescriptorError(.invalid, "wpkh() cannot be inside wsh() (BIP382): a witness program inside a witness script", at: start) }
            result = .wpkh(try key(.wsh, inside: "wpkh"))  // segwit: compressed keys only, as inside wsh
        case "sh":
            guard context == .top else { throw DescriptorError(.invalid, "sh() can only be at the top level (BIP381), not \(context.name)", at: start) }
            result = .sh(try script(.sh))
        case "wsh":
            guard context != .wsh else { throw DescriptorError(.invalid, "wsh() can only be at the top level or inside sh() (BIP382), not inside wsh()", at: start) }
            result = .wsh(try script(.wsh))
        case "multi", "sortedmulti":
            result = try multisig(context, sorted: name == "sortedmulti", start: start)
        case "tr":
            guard context == .top else { throw DescriptorError(.invalid, "tr() can only be at the top level (BIP386), not \(context.name)", at: start) }
            result = .tr(try key(.top, inside: "tr", taproot: true))
            if peek == UInt8(ascii: ",") {
                throw DescriptorError(.unsupported, "tr() with a script tree is not supported; keyhost derives key-path-only tr(KEY) descriptors", at: pos)
            }
        case "combo", "raw", "addr", "rawtr", "multi_a", "sortedmulti_a", "musig", "sp":
            throw DescriptorError(.unsupported, "\(name)() is a valid descriptor form that keyhost does not derive; it takes pk, pkh, wpkh, "
                + "sh, wsh, multi, sortedmulti and tr(KEY)", at: start)
        default:
            throw DescriptorError(.invalid, "unknown script expression \"\(name.prefix(24))\"; keyhost takes pk, pkh, wpkh, sh, wsh, multi, "
                + "sortedmulti and tr(KEY) (miniscript is not supported)", at: start)
        }
        try expect(")", after: name)
        return result
    }

    private mutating func multisig(_ context: Context, sorted: Bool, start: Int) throws -> DescriptorScript {
        let name = sorted ? "sortedmulti" : "multi"
        let thresholdAt = pos
        let digits = take { $0 != UInt8(ascii: ",") && $0 != UInt8(ascii: ")") }
        guard !digits.isEmpty, digits.count <= 3, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let threshold = Int(String(decoding: digits, as: UTF8.self)) else {
            throw DescriptorError(.invalid, "\(name)() starts with the number of signatures required, found \(DescriptorText.excerpt(digits[...]))", at: thresholdAt)
        }
        var keys = [DescriptorKey]()
        let limit = context == .wsh ? 20 : 16
        while peek == UInt8(ascii: ",") {
            pos += 1
            guard keys.count < limit else {
                throw DescriptorError(.invalid, "\(name)() \(context.name) takes at most \(limit) keys", at: pos)
            }
            keys.append(try key(context, inside: name))
        }
        guard !keys.isEmpty else { throw DescriptorError(.invalid, "\(name)() needs keys after the threshold", at: pos) }
        guard threshold >= 1 else { throw DescriptorError(.invalid, "\(name)() with a threshold of 0 can be spent by anyone; use 1 to \(keys.count)", at: thresholdAt) }
        guard threshold <= keys.count else {
            throw DescriptorError(.invalid, "\(name)() requires \(threshold) signatures of only \(keys.count) keys; the threshold is at most the number of keys", at: thresholdAt)
        }
        if context == .top && keys.count > 3 {
            throw DescriptorError(.invalid, "bare \(name)() (not inside sh or wsh) takes at most 3 keys to be standard; wrap it in wsh()", at: start)
        }
        if context == .sh {
            // The redeem script is pushed in the scriptSig: BIP16 and consensus cap a push at 520 bytes.
            let size = 3 + keys.reduce(0) { total, key in
                if case .single(let k) = key.material { return total + 1 + k.serialized.count }
                return total + 34
            }
            if size > 520 {
                throw DescriptorError(.invalid, "\(name)() inside sh() makes a \(size)-byte redeem script, over P2SH's 520 bytes (at most 15 compressed keys); use wsh() or sh(wsh())", at: start)
            }
        }
        return .multi(threshold: threshold, keys: keys, sorted: sorted)
    }

    // MARK: - Key expressions

    /// A key expression ending at the next "," or ")"; `context` .wsh (and wpkh, tr) refuse uncompressed keys.
    private mutating func key(_ context: Context, inside name: String, taproot: Bool = false) throws -> DescriptorKey {
        let start = pos
        let element = take { ![UInt8(ascii: ","), UInt8(ascii: ")"), UInt8(ascii: "("), UInt8(ascii: "{"), UInt8(ascii: "}")].contains($0) }
        if peek == UInt8(ascii: "(") {
            throw DescriptorError(.invalid, "\(name)() takes a key here, not a script expression", at: start)
        }
        if peek == UInt8(ascii: "{") || peek == UInt8(ascii: "}") {
            throw DescriptorError(.invalid, "\"\(Character(Unicode.Scalar(peek!)))\" is only used in tr() script trees", at: pos)
        }
        guard !element.isEmpty else { throw DescriptorError(.invalid, "\(name)() is missing a key here", at: start) }
        var i = element.startIndex
        // [fingerprint/path]
        var origin: KeyOrigin?
        if element[i] == UInt8(ascii: "[") {
            guard let close = element.firstIndex(of: UInt8(ascii: "]")) else {
                throw DescriptorError(.invalid, "the key origin \"[\" is not closed by \"]\"", at: i)
            }
            origin = try keyOrigin(element[(i + 1)..<close], at: i + 1)
            i = close + 1
            guard i < element.endIndex else { throw DescriptorError(.invalid, "the key origin is followed by no key", at: i) }
            if element[i] == UInt8(ascii: "[") { throw DescriptorError(.invalid, "a key has at most one origin [fingerprint/path]", at: i) }
        }
        if let stray = element[i...].firstIndex(where: { $0 == UInt8(ascii: "]") || $0 == UInt8(ascii: "[") }) {
            throw DescriptorError(.invalid, "\"\(Character(Unicode.Scalar(element[stray])))\" out of place: a key origin is written [fingerprint/path] before the key", at: stray)
        }
        let keyEnd = element[i...].firstIndex(of: UInt8(ascii: "/")) ?? element.endIndex
        let keyText = element[i..<keyEnd]
        let material = try keyMaterial(keyText, at: i, context: context, inside: name, taproot: taproot, hasSteps: keyEnd < element.endIndex)
        guard case .extended(let node, let isTestnet) = material else {
            return try DescriptorKey(origin: origin, material: material, steps: [], wildcard: .none)
        }
        if let testnet, testnet != isTestnet {
            throw DescriptorError(.invalid, "the descriptor mixes mainnet (xpub) and testnet (tpub) keys; all its keys are for one network", at: i)
        }
        testnet = isTestnet
        let (steps, wildcard) = keyEnd < element.endIndex ? try derivationSteps(element[(keyEnd + 1)...]) : ([], .none)
        if Int(node.depth) + steps.count + (wildcard == .none ? 0 : 1) > DerivationPath.maxDepth {
            throw DescriptorError(.invalid, "the key would be derived past BIP32's depth of 255", at: keyEnd)
        }
        do {
            return try DescriptorKey(origin: origin, material: material, steps: steps, wildcard: wildcard)
        } catch {
            throw DescriptorError(.invalid, "the key's derivation fails: \(error)", at: i)
        }
    }

    private func keyOrigin(_ body: ArraySlice<UInt8>, at start: Int) throws -> KeyOrigin {
        let fingerprintEnd = body.firstIndex(of: UInt8(ascii: "/")) ?? body.endIndex
        let fingerprint = body[body.startIndex..<fingerprintEnd]
        guard fingerprint.count == 8 else {
            throw DescriptorError(.invalid, "a key origin starts with an 8-hex-digit fingerprint, found \(fingerprint.count) characters", at: start)
        }
        guard let value = UInt32(String(decoding: fingerprint, as: UTF8.self), radix: 16), fingerprint.allSatisfy({ Hex.nibble($0) != nil }) else {
            throw DescriptorError(.invalid, "the key origin's fingerprint \(DescriptorText.excerpt(fingerprint)) is not hex", at: start)
        }
        var indexes = [UInt32]()
        if fingerprintEnd < body.endIndex {
            let path = body[(fingerprintEnd + 1)...]
            var elementStart = path.startIndex
            for element in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
                defer { elementStart += element.count + 1 }
                if element.first == UInt8(ascii: "*") { throw DescriptorError(.invalid, "a key origin cannot hold a wildcard *", at: elementStart) }
                if element.first == UInt8(ascii: "<") { throw DescriptorError(.invalid, "a key origin cannot hold a multipath step <…> (BIP389)", at: elementStart) }
                indexes.append(try index(element, at: elementStart))
                if indexes.count > DerivationPath.maxDepth { throw DescriptorError(.invalid, "the origin path is deeper than BIP32's 255 levels", at: elementStart) }
            }
        }
        // Cannot fail: the depth was checked.
        return KeyOrigin(fingerprint: value, path: (try? DerivationPath(indexes: indexes)) ?? .master)
    }

    private func keyMaterial(_ key: ArraySlice<UInt8>, at start: Int, context: Context, inside name: String, taproot: Bool,
                             hasSteps: Bool) throws -> DescriptorKey.Material {
        guard !key.isEmpty else { throw DescriptorError(.invalid, "a key is missing before the \"/\"", at: start) }
        if key.allSatisfy({ Hex.nibble($0) != nil }) && [64, 66, 130].contains(key.count) {
            if hasSteps { throw DescriptorError(.invalid, "a hex public key takes no derivation steps; only extended keys (xpub/tpub) do", at: start + key.count) }
            let bytes = (try? Hex.decode(String(decoding: key, as: UTF8.self))) ?? []
            if key.count == 64 {
                guard taproot else { throw DescriptorError(.invalid, "a 64-hex-digit x-only key is only allowed inside tr() (BIP386); give the 66-digit compressed key", at: start) }
                guard let xOnly = try? XOnlyPublicKey(bytes: bytes) else { throw DescriptorError(.invalid, "the x-only key is not a point on secp256k1", at: start) }
                return .xOnly(xOnly)
            }
            let publicKey: PublicKey
            do { publicKey = try PublicKey(bytes: bytes) } catch {
                throw DescriptorError(.invalid, "the hex key is not a valid public key: \(error)", at: start)
            }
            if !publicKey.isCompressed && (context == .wsh || taproot) {
                throw DescriptorError(.invalid, "\(name)() \(taproot ? "" : "under segwit ")takes compressed keys only; this one is uncompressed (BIP\(taproot ? "386" : "382"))", at: start)
            }
            return .single(publicKey)
        }
        if key.allSatisfy({ Hex.nibble($0) != nil }) && key.count > 40 {
            throw DescriptorError(.invalid, "a hex public key has 66 digits (compressed) or 130 (uncompressed), or 64 (x-only) inside tr(); this one has \(key.count)", at: start)
        }
        let text = String(decoding: key, as: UTF8.self)
        guard key.count <= InputLimit.base58, let payload = try? Base58.decodeCheck(text) else {
            throw DescriptorError(.invalid, "\(DescriptorText.excerpt(key, limit: 8)) is not a key: expected a hex public key, an xpub/tpub (with its "
                + "derivation steps) or, where allowed, a WIF or xprv; check for a typo or a cut-off key", at: start)
        }
        if payload.count == 78 {
            let (node, family): (HDNode, ExtendedKeyVersion)
            do { (node, family) = try HDNode.parse(text) } catch {
                throw DescriptorError(.invalid, "the extended key does not parse: \(error)", at: start)
            }
            guard family == .xpub || family == .tpub else {
                throw DescriptorError(.invalid, "descriptors take xpub or tpub keys, not \(node.isPrivate ? family.privatePrefix : family.publicPrefix): "
                    + "the script type is the descriptor's, not the key's; re-write it with keyhost key xpub --xpub KEY --family xpub", at: start)
            }
            if node.isPrivate && !allowPrivateKeys {
                throw DescriptorError(.privateKey, "this key is an extended PRIVATE key (\(family.privatePrefix)); keyhost takes public descriptors only: "
                    + "give the account's \(family.publicPrefix) (keyhost key xpub --descriptor prints one), and treat the private key as exposed if it was shared", at: start)
            }
            return .extended(node, testnet: family == .tpub)
        }
        // WIF: mainnet or test-network version byte.
        let wif = (try? PrivateKey.fromWIF(text, coin: .bitcoin)) ?? (try? PrivateKey.fromWIF(text, coin: .bitcoinTestnet))
        guard let (privateKey, compressed) = wif else {
            throw DescriptorError(.invalid, "the Base58 key decodes to \(payload.count) bytes, which is neither an extended key (78) nor a WIF private key", at: start)
        }
        guard allowPrivateKeys else {
            throw DescriptorError(.privateKey, "this key is a WIF PRIVATE key; keyhost takes public descriptors only: give its public key in hex, "
                + "and treat the private key as exposed if it was shared", at: start)
        }
        if hasSteps { throw DescriptorError(.invalid, "a WIF private key takes no derivation steps; only extended keys do", at: start + key.count) }
        if !compressed && (context == .wsh || taproot) {
            throw DescriptorError(.invalid, "\(name)() \(taproot ? "" : "under segwit ")takes compressed keys only; this WIF key is uncompressed", at: start)
        }
        return .single(privateKey.publicKey.compressed(compressed))
    }

    /// The steps after an extended key: indexes, at most one `<a;b;…>`, and a final `*` or `*h`.
    private mutating func derivationSteps(_ path: ArraySlice<UInt8>) throws -> ([DescriptorKey.Step], DescriptorKey.Wildcard) {
        var steps = [DescriptorKey.Step]()
        var wildcard = DescriptorKey.Wildcard.none
        // Slices of `text` keep its indexes, so an element's start index is its position in the descriptor.
        var elementStart = path.startIndex
        var sawMultipath = false
        for element in path.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            defer { elementStart += element.count + 1 }
            guard wildcard == .none else { throw DescriptorError(.invalid, "the wildcard * must be the last step", at: elementStart - 1) }
            guard steps.count < DerivationPath.maxDepth else { throw DescriptorError(.invalid, "more than 255 derivation steps", at: elementStart) }
            if element.first == UInt8(ascii: "*") {
                let marker = element.dropFirst()
                if marker.isEmpty {
                    wildcard = .unhardened
                } else if marker.count == 1 && (marker.first == UInt8(ascii: "h") || marker.first == UInt8(ascii: "'")) {
                    wildcard = .hardened
                } else if marker.count == 1 && marker.first == UInt8(ascii: "H") {
                    throw DescriptorError(.invalid, "\"H\" is not a hardened marker in descriptors (BIP380); write *h or *'", at: elementStart + 1)
                } else {
                    throw DescriptorError(.invalid, "a wildcard step is * or *h, found \(DescriptorText.excerpt(element))", at: elementStart)
                }
                continue
            }
            if element.first == UInt8(ascii: "<") {
                guard !sawMultipath else { throw DescriptorError(.invalid, "a key has at most one multipath step <…> (BIP389)", at: elementStart) }
                sawMultipath = true
                steps.append(.multipath(try multipathStep(element, at: elementStart)))
                continue
            }
            if element.contains(UInt8(ascii: ">")) || element.contains(UInt8(ascii: ";")) {
                throw DescriptorError(.invalid, "a multipath step is written <a;b> (BIP389); this one has no \"<\"", at: elementStart)
            }
            steps.append(.index(try index(element, at: elementStart)))
        }
        return (steps, wildcard)
    }

    private mutating func multipathStep(_ element: ArraySlice<UInt8>, at start: Int) throws -> [UInt32] {
        guard element.last == UInt8(ascii: ">") else {
            throw DescriptorError(.invalid, "the multipath step is not closed by \">\" before the next \"/\"", at: start)
        }
        let inner = element.dropFirst().dropLast()
        guard !inner.isEmpty else { throw DescriptorError(.invalid, "the multipath step <> is empty; write <0;1>", at: start) }
        var values = [UInt32]()
        var valueStart = start + 1
        for part in inner.split(separator: UInt8(ascii: ";"), omittingEmptySubsequences: false) {
            defer { valueStart += part.count + 1 }
            guard values.count < OutputDescriptor.maxMultipath else {
                throw DescriptorError(.invalid, "a multipath step takes at most \(OutputDescriptor.maxMultipath) choices", at: valueStart)
            }
            let value = try index(part, at: valueStart)
            guard !values.contains(value) else { throw DescriptorError(.invalid, "the multipath step names \(DerivationPath.format(value, hardened: "h")) twice (BIP389)", at: valueStart) }
            values.append(value)
        }
        guard values.count >= 2 else { throw DescriptorError(.invalid, "a multipath step needs at least two choices, as in <0;1>", at: start) }
        if let seen = multipath, seen.count != values.count {
            throw DescriptorError(.invalid, "multipath steps of different lengths (\(seen.count) at position \(seen.position) and \(values.count) here); "
                + "every <…> of a descriptor has the same number of choices (BIP389)", at: start)
        }
        multipath = (values.count, start)
        return values
    }

    /// One derivation index: digits with an optional h or ' (BIP380 no longer takes H), below 2^31.
    private func index(_ element: ArraySlice<UInt8>, at start: Int) throws -> UInt32 {
        guard !element.isEmpty else { throw DescriptorError(.invalid, "empty derivation step: remove the doubled or trailing \"/\"", at: start) }
        var digits = element
        var hardened = false
        if let last = digits.last, last == UInt8(ascii: "h") || last == UInt8(ascii: "'") {
            hardened = true
            digits = digits.dropLast()
        } else if digits.last == UInt8(ascii: "H") {
            throw DescriptorError(.invalid, "\"H\" is not a hardened marker in descriptors (BIP380); write h or '", at: start + element.count - 1)
        }
        guard !digits.isEmpty, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else {
            throw DescriptorError(.invalid, "\(DescriptorText.excerpt(element)) is not a derivation step; write a number with an optional h for hardened", at: start)
        }
        guard digits.count <= 10, let value = UInt32(String(decoding: digits, as: UTF8.self)), value < DerivationPath.hardenedOffset else {
            throw DescriptorError(.invalid, "index \(DescriptorText.excerpt(digits, limit: 12)) is out of range; indexes are 0…2147483647 (add h for hardened)", at: start)
        }
        return hardened ? value | DerivationPath.hardenedOffset : value
    }

    // MARK: - Tokens

    private var peek: UInt8? { pos < text.count ? text[pos] : nil }

    private mutating func identifier() -> String {
        let start = pos
        while pos < text.count, text[pos] == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(text[pos])
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(text[pos]) {
            pos += 1
        }
        return String(decoding: text[start..<pos], as: UTF8.self)
    }

    private mutating func take(while keep: (UInt8) -> Bool) -> ArraySlice<UInt8> {
        let start = pos
        while pos < text.count, keep(text[pos]) { pos += 1 }
        return text[start..<pos]
    }

    private mutating func expect(_ character: Character, after name: String) throws {
        guard let next = peek else {
            throw DescriptorError(.invalid, "\(name)( is not closed: \"\(character)\" is missing at the end", at: pos)
        }
        guard next == character.asciiValue! else {
            throw DescriptorError(.invalid, "expected \"\(character)\" to close \(name)(…), found \(DescriptorText.excerpt(text[pos...]))", at: pos)
        }
        pos += 1
    }
}
