import Foundation
import Testing

/// `keyhost discover --card`'s card options through the binary.
@Suite struct DiscoverCardOptionTests {
    @Test func trustedCAKeysAreChecked() throws {
        let bad = try Keyhost.run(["discover", "--card", "virtual", "--trusted-ca", "02abcd", "--source", "index:/dev/null"])
        #expect(bad.status == 64)
        #expect(bad.stderr.contains("--trusted-ca needs a certificate authority's public key, 33 or 65 bytes in hex, got \"02abcd\""))
        let noCard = try Keyhost.run(["discover", "--xpub", "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8",
                                      "--trusted-ca", "0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798", "--source", "index:/dev/null"])
        #expect(noCard.status == 64)
        #expect(noCard.stderr.contains("--trusted-ca goes with --card"))
    }
}
