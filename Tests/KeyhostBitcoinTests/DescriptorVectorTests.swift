import Foundation
import KeyhostCrypto
import Testing
@testable import KeyhostBitcoin

/// The test vectors of BIP380 (checksums, key expressions), BIP381–383 and BIP386 (scripts) and BIP389 (multipath),
/// kept in Vectors/descriptors.json as the BIPs write them (its "source" says from where).
@Suite("BIP380-386, BIP389 descriptor vectors")
struct DescriptorVectorTests {
    struct File: Decodable {
        struct Text: Decodable { let name: String; let text: String }
        struct Key: Decodable { let name: String; let key: String }
        struct Checksums: Decodable { let valid: [Text]; let invalid: [Text] }
        struct Keys: Decodable { let valid: [Key]; let invalid: [Key] }
        struct Scripts: Decodable { let bip: Int; let descriptor: String; let scripts: [String] }
        struct Invalid: Decodable { let name: String; let descriptor: String }
        struct Multipath: Decodable { let descriptor: String; let expands_to: [String] }
        let checksum: Checksums
        let keys: Keys
        let scripts: [Scripts]
        let invalid: [Invalid]
        let multipath: [Multipath]
        let multipath_invalid: [Invalid]
    }

    static let file: File? = try? JSONDecoder().decode(File.self, from: Vectors.data("descriptors.json"))

    private func vectors() throws -> File { try #require(Self.file, "Vectors/descriptors.json does not decode") }

    @Test("BIP380 checksums: valid ones verify and are recomputed, broken ones are refused")
    func checksums() throws {
        let file = try vectors()
        #expect(file.checksum.valid.count == 2 && file.checksum.invalid.count == 6)
        #expect(try DescriptorChecksum.split("raw(deadbeef)#89f8spxm").checksum == "89f8spxm")
        #expect(try DescriptorChecksum.compute("raw(deadbeef)") == "89f8spxm")
        #expect(try DescriptorChecksum.split("raw(deadbeef)").checksum == nil)
        for vector in file.checksum.invalid {
            #expect(throws: DescriptorError.self, "\(vector.name)") { _ = try DescriptorChecksum.split(vector.text) }
        }
        // The non-ASCII character is reported at its character position, not its byte offset.
        let error = try #require(throws: DescriptorError.self) { _ = try DescriptorChecksum.split("raw(Ü)#00000000") }
        #expect(error.position == 4 && error.kind == .invalid)
    }

    @Test("BIP380 key expressions: the valid ones parse (inside pk()), the invalid ones are refused")
    func keyExpressions() throws {
        let file = try vectors()
        #expect(file.keys.valid.count == 21 && file.keys.invalid.count == 16)
        for vector in file.keys.valid {
            let parsed = try OutputDescriptor.parse("pk(\(vector.key))", allowPrivateKeys: true)
            #expect(parsed.keys.count == 1, "\(vector.name)")
        }
        for vector in file.keys.invalid {
            #expect(throws: DescriptorError.self, "\(vector.name): \(vector.key)") { _ = try OutputDescriptor.parse("pk(\(vector.key))", allowPrivateKeys: true) }
        }
    }

    @Test("BIP381-383, BIP386: each descriptor gives the scripts listed for children 0, 1, 2")
    func scripts() throws {
        let file = try vectors()
        var checked = 0
        for vector in file.scripts {
            if vector.bip == 386 && vector.descriptor.contains(",") {
                // Script trees: valid BIP386, refused clearly as unsupported.
                let error = try #require(throws: DescriptorError.self) { _ = try OutputDescriptor.parse(vector.descriptor, allowPrivateKeys: true) }
                #expect(error.kind == .unsupported, "\(vector.descriptor)")
                continue
            }
            let descriptor = try OutputDescriptor.parse(vector.descriptor, allowPrivateKeys: true)
            #expect(descriptor.isRange == (vector.scripts.count > 1), "\(vector.descriptor)")
            for (index, expected) in vector.scripts.enumerated() {
                #expect(hex(try descriptor.scriptPubKey(index: UInt32(index))) == expected, "BIP\(vector.bip) \(vector.descriptor) at \(index)")
                checked += 1
            }
            // The printed form parses back to the same scripts (it is public, so xprv-derived hardened steps cannot be re-derived).
            if !vector.descriptor.contains("prv") && !vector.descriptor.contains("(L") && !vector.descriptor.contains("(K") && !vector.descriptor.contains("(5") {
                let again = try OutputDescriptor.parse(descriptor.description)
                #expect(hex(try again.scriptPubKey(index: 0)) == vector.scripts[0])
            }
        }
        #expect(checked >= 45)
    }

    @Test("BIP381-383, BIP386: every invalid descriptor is refused")
    func invalid() throws {
        let file = try vectors()
        #expect(file.invalid.count == 23)
        for vector in file.invalid {
            #expect(throws: DescriptorError.self, "\(vector.name): \(vector.descriptor)") { _ = try OutputDescriptor.parse(vector.descriptor, allowPrivateKeys: true) }
        }
    }

    @Test("BIP389: a multipath descriptor expands into the listed descriptors, with the same scripts")
    func multipath() throws {
        let file = try vectors()
        #expect(file.multipath.count == 6)
        for vector in file.multipath {
            let descriptor = try OutputDescriptor.parse(vector.descriptor, allowPrivateKeys: true)
            let expanded = descriptor.multipath()
            #expect(descriptor.multipathCount == vector.expands_to.count && expanded.count == vector.expands_to.count, "\(vector.descriptor)")
            for (mine, text) in zip(expanded, vector.expands_to) {
                let theirs = try OutputDescriptor.parse(text, allowPrivateKeys: true)
                if !text.contains("prv") { #expect(mine.body == text, "\(vector.descriptor)") }
                for index in 0..<(mine.isRange ? 3 : 1) {
                    #expect(try mine.scriptPubKey(index: UInt32(index)) == theirs.scriptPubKey(index: UInt32(index)), "\(text) at \(index)")
                }
            }
            // A multipath descriptor is several descriptors: it is not derived as one.
            let error = try #require(throws: DescriptorError.self) { _ = try descriptor.scriptPubKey(index: 0) }
            #expect(error.kind == .derivation)
        }
        for vector in file.multipath_invalid {
            #expect(throws: DescriptorError.self, "\(vector.name): \(vector.descriptor)") { _ = try OutputDescriptor.parse(vector.descriptor, allowPrivateKeys: true) }
        }
    }
}
