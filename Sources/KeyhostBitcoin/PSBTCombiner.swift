extension PSBT {
    /// BIP174's combiner: adds every pair of `other` this PSBT lacks (signatures from another signer, say).
    /// Both must describe the same transaction; a key in both keeps this PSBT's value. A new pair goes after
    /// this map's last pair of its type (after what this signer had, as Bitcoin Core's combiner writes them),
    /// or where its key sorts when the type is new here.
    public mutating func combine(_ other: PSBT) throws {
        guard version == other.version else {
            throw PSBTError.invalid("cannot combine a version \(version) PSBT with a version \(other.version) one")
        }
        let mine = try unsignedTransaction(), theirs = try other.unsignedTransaction()
        // Version 2 lock times may differ while inputs are still being added; the inputs and outputs may not.
        guard mine.version == theirs.version, mine.inputs == theirs.inputs, mine.outputs == theirs.outputs,
              version == 2 || mine.lockTime == theirs.lockTime else {
            throw PSBTError.invalid("the PSBTs are for different transactions (\(mine.displayTxid) and \(theirs.displayTxid)); only PSBTs of one transaction combine")
        }
        var combined = self
        combined.global.merge(other.global)
        for i in inputs.indices { combined.inputs[i].merge(other.inputs[i]) }
        for i in outputs.indices { combined.outputs[i].merge(other.outputs[i]) }
        self = combined
    }
}

extension PSBTMap {
    /// Adds the pairs of `other` whose keys this map lacks.
    mutating func merge(_ other: PSBTMap) {
        let keys = Set(fields.map(\.key))
        for field in other.fields where !keys.contains(field.key) {
            if let last = fields.lastIndex(where: { $0.type == field.type }) {
                fields.insert(field, at: last + 1)
            } else {
                insert(field)
            }
        }
    }
}
