import KeyhostCrypto
import KeyhostFiles
import KeyhostRecord
import KeyhostTokens
#if canImport(Glibc)
import Glibc
#endif

/// A proof file that could not be written: the folder or the file, and the system's reason.
public struct ProofFileError: StructuredError {
    public let description: String
    public var errorKind: String { "proof_file" }
}

/// Double-spend proofs kept as files, as `keyhost token deposit --proofs DIR` and Lua's `l:deposit(chains, {proofs = DIR})`
/// keep them: `DIR/<token id>.<first 8 bytes of the proof's SHA-256>.khproof`, one armoured proof and a newline.
public enum ProofFiles {
    /// Writes `proof` into `dir` (created 0700 when missing; the file 0600, whole or not at all) and returns its path.
    /// Named by content, so writing the same proof again leaves the file as it is.
    public static func write(_ proof: FraudProof, into dir: String) throws -> String {
        if mkdir(dir, 0o700) != 0 && errno != EEXIST {
            throw ProofFileError(description: "cannot create the proofs folder \(dir): \(String(cString: strerror(errno)))")
        }
        let path = "\(joinable(dir))/\(Hex.encode(proof.token.token.id)).\(Hex.encode(Hash.sha256(proof.encoded).prefix(8))).khproof"
        do {
            try AtomicFile.write(Array((proof.armored + "\n").utf8), to: path, mode: 0o600, replace: false)
        } catch let error as AtomicFile.WriteError where error.code == EEXIST {
            // Already written (same content: the name is its hash).
        } catch let error as AtomicFile.WriteError {
            throw ProofFileError(description: "cannot write the proof \(path): \(error.problem)")
        }
        return path
    }

    /// `dir` without its trailing slashes, so a folder given as `proofs/` names `proofs/ID.….khproof`, not `proofs//ID…`;
    /// the root folder "/" becomes "", which joins as "/ID…".
    static func joinable(_ dir: String) -> String {
        var folder = Substring(dir)
        while folder.hasSuffix("/") { folder = folder.dropLast() }
        return String(folder)
    }
}
