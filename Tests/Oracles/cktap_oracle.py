"""The maker's client (cktap, Coinkite) as the oracle for keyhost's tap-card crypto.

  xcvc CMD NONCE_HEX CARD_PUBKEY_HEX CVC EPHEMERAL_PRIV_HEX
      -> "SESSION_KEY_HEX XCVC_HEX EPUBKEY_HEX" from cktap.utils.calc_xcvc, with its ephemeral key fixed
  ident CARD_PUBKEY_HEX            -> cktap.utils.card_pubkey_to_ident
  certs CARD_NONCE CARD_PUBKEY MY_NONCE AUTH_SIG SLOT_PUBKEY|- CERT...
      -> the root key cktap.utils.verify_certs_ll's chain walk reaches (hex), after its signature check
  bip32 XPRV PATH...               -> per path "PUBKEY_HEX CHAIN_CODE_HEX" (bip-utils' BIP32, from a backup's master)
  verify PUBKEY_HEX DIGEST_HEX SIG64_HEX -> "valid" or "invalid" (coincurve, DER of r and s)
"""
import sys

import coincurve

import cktap.utils as utils
from cktap.compat import CT_sig_to_pubkey, sha256s


def main():
    mode = sys.argv[1]
    if mode == "xcvc":
        cmd, nonce, pub, cvc, priv = sys.argv[2:7]
        priv = bytes.fromhex(priv)
        utils.CT_pick_keypair = lambda: (priv, coincurve.PrivateKey(priv).public_key.format())
        key, args = utils.calc_xcvc(cmd, bytes.fromhex(nonce), bytes.fromhex(pub), cvc)
        print(key.hex(), args["xcvc"].hex(), args["epubkey"].hex())
    elif mode == "ident":
        print(utils.card_pubkey_to_ident(bytes.fromhex(sys.argv[2])))
    elif mode == "certs":
        card_nonce, card_pub, my_nonce, sig, slot = sys.argv[2:7]
        chain = [bytes.fromhex(c) for c in sys.argv[7:]]
        slot_pub = None if slot == "-" else bytes.fromhex(slot)
        try:
            utils.verify_certs_ll(bytes.fromhex(card_nonce), bytes.fromhex(card_pub), bytes.fromhex(my_nonce), chain,
                                  bytes.fromhex(sig), slot_pub)
        except RuntimeError as e:
            if "Coinkite" not in str(e):  # only the root check may fail: the twin's root is not Coinkite's
                raise
        key = bytes.fromhex(card_pub)
        for c in chain:
            key = CT_sig_to_pubkey(sha256s(key), c)
        print(key.hex())
    elif mode == "bip32":
        from bip_utils import Bip32Secp256k1
        root = Bip32Secp256k1.FromExtendedKey(sys.argv[2])
        for path in sys.argv[3:]:
            node = root.DerivePath(path)
            print(node.PublicKey().RawCompressed().ToHex(), node.ChainCode().ToHex())
    elif mode == "verify":
        from coincurve.ecdsa import cdata_to_der, deserialize_compact
        pub, digest, sig = (bytes.fromhex(a) for a in sys.argv[2:5])
        der = cdata_to_der(deserialize_compact(sig))
        print("valid" if coincurve.PublicKey(pub).verify(der, digest, hasher=None) else "invalid")
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
