// The physical limit for keyhost's key and signature figures: the same work as keyhost-bench,
// written directly against libsecp256k1 0.2.0 and OpenSSL 3.0 libcrypto, with every OpenSSL
// algorithm fetched once (implicit fetches cost about 2x per call).
//
//   gcc -O2 -o crypto_baseline crypto_baseline.c -lsecp256k1 -lcrypto
//   ./crypto_baseline [repetitions]
//
// Prints one line per figure: "<name> <median ns per operation> <checksum>", where the checksum
// (FNV-1a of every result, plus the last result) must equal keyhost-bench's for the same name.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <secp256k1.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static secp256k1_context *ctx;
static EVP_MD *md_sha256, *md_sha512, *md_ripemd160;
static EVP_MAC_CTX *hmac512_template;  // HMAC with SHA2-512 bound; dup'ed per message

static void die(const char *what) {
    fprintf(stderr, "crypto_baseline: %s failed\n", what);
    exit(1);
}

// CPU time of this thread: "per second on one core", and time spent preempted by other load is not counted.
static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// ---------------------------------------------------------------- checksums

static uint64_t fnv;
static void fnv_reset(void) { fnv = 0xcbf29ce484222325ULL; }
static void fnv_add(const void *data, size_t n) {
    const uint8_t *p = data;
    for (size_t i = 0; i < n; i++) { fnv ^= p[i]; fnv *= 0x100000001b3ULL; }
}

static void hex(const uint8_t *in, size_t n, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) { out[2 * i] = digits[in[i] >> 4]; out[2 * i + 1] = digits[in[i] & 15]; }
    out[2 * n] = 0;
}

// ---------------------------------------------------------------- hashes

static void digest(const EVP_MD *md, const void *in, size_t n, uint8_t *out) {
    if (!EVP_Digest(in, n, out, NULL, md, NULL)) die("EVP_Digest");
}

static void hash160(const uint8_t *in, size_t n, uint8_t out[20]) {
    uint8_t inner[32];
    digest(md_sha256, in, n, inner);
    digest(md_ripemd160, inner, 32, out);
}

static void hmac_sha512(const uint8_t *key, size_t keylen, const uint8_t *data, size_t n, uint8_t out[64]) {
    EVP_MAC_CTX *c = EVP_MAC_CTX_dup(hmac512_template);
    size_t len = 0;
    if (!c || !EVP_MAC_init(c, key, keylen, NULL) || !EVP_MAC_update(c, data, n) || !EVP_MAC_final(c, out, &len, 64))
        die("HMAC-SHA512");
    EVP_MAC_CTX_free(c);
}

// Keccak-256 (original padding, as Ethereum uses), unrolled like keyhost's Swift version.
#define ROTL(v, n) (((v) << (n)) | ((v) >> (64 - (n))))
static const uint64_t keccak_rc[24] = {
    0x0000000000000001ULL, 0x0000000000008082ULL, 0x800000000000808AULL, 0x8000000080008000ULL,
    0x000000000000808BULL, 0x0000000080000001ULL, 0x8000000080008081ULL, 0x8000000000008009ULL,
    0x000000000000008AULL, 0x0000000000000088ULL, 0x0000000080008009ULL, 0x000000008000000AULL,
    0x000000008000808BULL, 0x800000000000008BULL, 0x8000000000008089ULL, 0x8000000000008003ULL,
    0x8000000000008002ULL, 0x8000000000000080ULL, 0x000000000000800AULL, 0x800000008000000AULL,
    0x8000000080008081ULL, 0x8000000000008080ULL, 0x0000000080000001ULL, 0x8000000080008008ULL,
};

static void keccak_f(uint64_t s[25]) {
    uint64_t a00 = s[0], a01 = s[1], a02 = s[2], a03 = s[3], a04 = s[4], a05 = s[5], a06 = s[6], a07 = s[7],
             a08 = s[8], a09 = s[9], a10 = s[10], a11 = s[11], a12 = s[12], a13 = s[13], a14 = s[14], a15 = s[15],
             a16 = s[16], a17 = s[17], a18 = s[18], a19 = s[19], a20 = s[20], a21 = s[21], a22 = s[22], a23 = s[23],
             a24 = s[24];
    for (int round = 0; round < 24; round++) {
        uint64_t c0 = a00 ^ a05 ^ a10 ^ a15 ^ a20, c1 = a01 ^ a06 ^ a11 ^ a16 ^ a21, c2 = a02 ^ a07 ^ a12 ^ a17 ^ a22,
                 c3 = a03 ^ a08 ^ a13 ^ a18 ^ a23, c4 = a04 ^ a09 ^ a14 ^ a19 ^ a24;
        uint64_t d0 = c4 ^ ROTL(c1, 1), d1 = c0 ^ ROTL(c2, 1), d2 = c1 ^ ROTL(c3, 1), d3 = c2 ^ ROTL(c4, 1),
                 d4 = c3 ^ ROTL(c0, 1);
        uint64_t b00 = a00 ^ d0, b10 = ROTL(a01 ^ d1, 1), b20 = ROTL(a02 ^ d2, 62), b05 = ROTL(a03 ^ d3, 28),
                 b15 = ROTL(a04 ^ d4, 27), b16 = ROTL(a05 ^ d0, 36), b01 = ROTL(a06 ^ d1, 44), b11 = ROTL(a07 ^ d2, 6),
                 b21 = ROTL(a08 ^ d3, 55), b06 = ROTL(a09 ^ d4, 20), b07 = ROTL(a10 ^ d0, 3), b17 = ROTL(a11 ^ d1, 10),
                 b02 = ROTL(a12 ^ d2, 43), b12 = ROTL(a13 ^ d3, 25), b22 = ROTL(a14 ^ d4, 39), b23 = ROTL(a15 ^ d0, 41),
                 b08 = ROTL(a16 ^ d1, 45), b18 = ROTL(a17 ^ d2, 15), b03 = ROTL(a18 ^ d3, 21), b13 = ROTL(a19 ^ d4, 8),
                 b14 = ROTL(a20 ^ d0, 18), b24 = ROTL(a21 ^ d1, 2), b09 = ROTL(a22 ^ d2, 61), b19 = ROTL(a23 ^ d3, 56),
                 b04 = ROTL(a24 ^ d4, 14);
        a00 = b00 ^ (~b01 & b02); a01 = b01 ^ (~b02 & b03); a02 = b02 ^ (~b03 & b04); a03 = b03 ^ (~b04 & b00);
        a04 = b04 ^ (~b00 & b01); a05 = b05 ^ (~b06 & b07); a06 = b06 ^ (~b07 & b08); a07 = b07 ^ (~b08 & b09);
        a08 = b08 ^ (~b09 & b05); a09 = b09 ^ (~b05 & b06); a10 = b10 ^ (~b11 & b12); a11 = b11 ^ (~b12 & b13);
        a12 = b12 ^ (~b13 & b14); a13 = b13 ^ (~b14 & b10); a14 = b14 ^ (~b10 & b11); a15 = b15 ^ (~b16 & b17);
        a16 = b16 ^ (~b17 & b18); a17 = b17 ^ (~b18 & b19); a18 = b18 ^ (~b19 & b15); a19 = b19 ^ (~b15 & b16);
        a20 = b20 ^ (~b21 & b22); a21 = b21 ^ (~b22 & b23); a22 = b22 ^ (~b23 & b24); a23 = b23 ^ (~b24 & b20);
        a24 = b24 ^ (~b20 & b21);
        a00 ^= keccak_rc[round];
    }
    s[0] = a00; s[1] = a01; s[2] = a02; s[3] = a03; s[4] = a04; s[5] = a05; s[6] = a06; s[7] = a07; s[8] = a08;
    s[9] = a09; s[10] = a10; s[11] = a11; s[12] = a12; s[13] = a13; s[14] = a14; s[15] = a15; s[16] = a16;
    s[17] = a17; s[18] = a18; s[19] = a19; s[20] = a20; s[21] = a21; s[22] = a22; s[23] = a23; s[24] = a24;
}

// Inputs here are shorter than one 136-byte block (x86-64 is little-endian, as the lanes are).
static void keccak256_short(const uint8_t *in, size_t n, uint8_t out[32]) {
    uint64_t s[25] = {0};
    uint8_t block[136] = {0};
    memcpy(block, in, n);
    block[n] ^= 0x01;
    block[135] ^= 0x80;
    for (int i = 0; i < 17; i++) { uint64_t w; memcpy(&w, block + 8 * i, 8); s[i] ^= w; }
    keccak_f(s);
    memcpy(out, s, 32);
}

// ---------------------------------------------------------------- encodings

static const char bech32_charset[] = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

static uint32_t bech32_step(uint32_t pre) {
    uint8_t b = pre >> 25;
    return ((pre & 0x1ffffff) << 5) ^ (-((b >> 0) & 1) & 0x3b6a57b2UL) ^ (-((b >> 1) & 1) & 0x26508e6dUL) ^
           (-((b >> 2) & 1) & 0x1ea119faUL) ^ (-((b >> 3) & 1) & 0x3d4233ddUL) ^ (-((b >> 4) & 1) & 0x2a1462b3UL);
}

// P2WPKH (segwit v0, Bech32) address of a 20-byte key hash; returns the length written.
static size_t p2wpkh_address(const char *hrp, const uint8_t program[20], char *out) {
    uint8_t data[33];  // version + 32 five-bit groups
    size_t n = 0;
    data[n++] = 0;
    uint32_t acc = 0;
    int bits = 0;
    for (int i = 0; i < 20; i++) {
        acc = (acc << 8) | program[i];
        bits += 8;
        while (bits >= 5) { bits -= 5; data[n++] = (acc >> bits) & 31; }
    }
    if (bits) data[n++] = (acc << (5 - bits)) & 31;
    size_t hrplen = strlen(hrp), o = 0;
    uint32_t chk = 1;
    for (size_t i = 0; i < hrplen; i++) chk = bech32_step(chk) ^ (hrp[i] >> 5);
    chk = bech32_step(chk);
    for (size_t i = 0; i < hrplen; i++) { chk = bech32_step(chk) ^ (hrp[i] & 31); out[o++] = hrp[i]; }
    out[o++] = '1';
    for (size_t i = 0; i < n; i++) { chk = bech32_step(chk) ^ data[i]; out[o++] = bech32_charset[data[i]]; }
    for (int i = 0; i < 6; i++) chk = bech32_step(chk);
    chk ^= 1;  // Bech32 (not Bech32m) for witness version 0
    for (int i = 0; i < 6; i++) out[o++] = bech32_charset[(chk >> (5 * (5 - i))) & 31];
    out[o] = 0;
    return o;
}

// EIP-55 address of a public key: "0x" + 40 hex digits, checksummed by case.
static size_t eip55_address(const secp256k1_pubkey *key, char *out) {
    uint8_t point[65], hash[32], check[32];
    size_t len = 65;
    if (!secp256k1_ec_pubkey_serialize(ctx, point, &len, key, SECP256K1_EC_UNCOMPRESSED)) die("serialize");
    keccak256_short(point + 1, 64, hash);
    char lower[41];
    hex(hash + 12, 20, lower);
    keccak256_short((const uint8_t *)lower, 40, check);
    out[0] = '0';
    out[1] = 'x';
    for (int i = 0; i < 40; i++) {
        uint8_t nibble = (check[i / 2] >> (i % 2 ? 0 : 4)) & 15;
        out[2 + i] = (lower[i] >= 'a' && nibble >= 8) ? lower[i] - 32 : lower[i];
    }
    out[42] = 0;
    return 42;
}

// ---------------------------------------------------------------- BIP32

typedef struct {
    uint8_t chain[32];
    uint8_t seckey[32];  // valid when has_secret
    int has_secret;
    secp256k1_pubkey pub;
    uint8_t ser[33];  // compressed public key
} node_t;

static void node_finish(node_t *n) {
    size_t len = 33;
    if (n->has_secret && !secp256k1_ec_pubkey_create(ctx, &n->pub, n->seckey)) die("pubkey_create");
    if (!secp256k1_ec_pubkey_serialize(ctx, n->ser, &len, &n->pub, SECP256K1_EC_COMPRESSED)) die("serialize");
}

static void master(const uint8_t *seed, size_t n, node_t *out) {
    uint8_t i[64];
    hmac_sha512((const uint8_t *)"Bitcoin seed", 12, seed, n, i);
    memcpy(out->seckey, i, 32);
    memcpy(out->chain, i + 32, 32);
    out->has_secret = 1;
    if (!secp256k1_ec_seckey_verify(ctx, out->seckey)) die("master key");
    node_finish(out);
}

static void private_child(const node_t *parent, uint32_t index, node_t *out) {
    uint8_t data[37], i[64];
    if (index & 0x80000000u) { data[0] = 0; memcpy(data + 1, parent->seckey, 32); }
    else memcpy(data, parent->ser, 33);
    data[33] = index >> 24; data[34] = index >> 16; data[35] = index >> 8; data[36] = index;
    hmac_sha512(parent->chain, 32, data, 37, i);
    memcpy(out->seckey, parent->seckey, 32);
    if (!secp256k1_ec_seckey_tweak_add(ctx, out->seckey, i)) die("seckey_tweak_add");
    memcpy(out->chain, i + 32, 32);
    out->has_secret = 1;
    node_finish(out);
}

// The public child: K = IL*G + K_par (pubkey_create + combine, 14% faster than tweak_add in 0.2.0),
// with its chain code and compressed serialization, as a complete child node needs.
static void public_child(const node_t *parent, uint32_t index, node_t *out) {
    uint8_t data[37], i[64];
    memcpy(data, parent->ser, 33);
    data[33] = index >> 24; data[34] = index >> 16; data[35] = index >> 8; data[36] = index;
    hmac_sha512(parent->chain, 32, data, 37, i);
    secp256k1_pubkey tweak;
    if (!secp256k1_ec_pubkey_create(ctx, &tweak, i)) die("pubkey_create(IL)");
    const secp256k1_pubkey *points[2] = {&parent->pub, &tweak};
    if (!secp256k1_ec_pubkey_combine(ctx, &out->pub, points, 2)) die("combine");
    memcpy(out->chain, i + 32, 32);
    out->has_secret = 0;
    size_t len = 33;
    if (!secp256k1_ec_pubkey_serialize(ctx, out->ser, &len, &out->pub, SECP256K1_EC_COMPRESSED)) die("serialize");
}

static void derive_path(const node_t *root, const uint32_t *path, int n, node_t *out) {
    node_t cur = *root, next;
    for (int k = 0; k < n; k++) { private_child(&cur, path[k], &next); cur = next; }
    memset(&cur.seckey, 0, 32);
    cur.has_secret = 0;  // neutered: children below are derived publicly
    *out = cur;
}

// ---------------------------------------------------------------- figures

static int reps = 7;
#define H 0x80000000u

typedef void (*work_fn)(int n, char *last);

static void report(const char *name, work_fn fn, int n) {
    double ns[64];
    char last[256] = "";
    for (int r = 0; r < reps; r++) {
        fnv_reset();
        double t0 = now_ns();
        fn(n, last);
        ns[r] = (now_ns() - t0) / n;
    }
    printf("%s %.1f %016llx:%s\n", name, median(ns, reps), (unsigned long long)fnv, last);
    fflush(stdout);
}

static const uint8_t seed64[64] = {
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31,
    32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63,
};
static node_t btc_chain, eth_chain;  // m/84'/0'/0'/0 and m/44'/60'/0'/0, neutered

static void derive_p2wpkh(int n, char *last) {
    node_t child;
    uint8_t h[20];
    for (int i = 0; i < n; i++) {
        public_child(&btc_chain, (uint32_t)i, &child);
        hash160(child.ser, 33, h);
        size_t len = p2wpkh_address("bc", h, last);
        fnv_add(last, len);
    }
}

static void derive_eip55(int n, char *last) {
    node_t child;
    for (int i = 0; i < n; i++) {
        public_child(&eth_chain, (uint32_t)i, &child);
        size_t len = eip55_address(&child.pub, last);
        fnv_add(last, len);
    }
}

enum { NMSG = 4000 };
static uint8_t digests[NMSG][32];
static uint8_t seckey[32];
static secp256k1_pubkey pubkey;
static secp256k1_keypair keypair;
static secp256k1_xonly_pubkey xonly;
static secp256k1_ecdsa_signature ecdsa_sigs[NMSG];
static uint8_t schnorr_sigs[NMSG][64];
static const uint8_t aux_zero[32];

static void ecdsa_sign(int n, char *last) {
    uint8_t compact[64];
    for (int i = 0; i < n; i++) {
        if (!secp256k1_ecdsa_sign(ctx, &ecdsa_sigs[i], digests[i], seckey, NULL, NULL)) die("ecdsa_sign");
        if (!secp256k1_ecdsa_signature_serialize_compact(ctx, compact, &ecdsa_sigs[i])) die("serialize_compact");
        fnv_add(compact, 64);
    }
    hex(compact, 64, last);
}

static void ecdsa_verify(int n, char *last) {
    int valid = 0;
    for (int i = 0; i < n; i++) valid += secp256k1_ecdsa_verify(ctx, &ecdsa_sigs[i], digests[i], &pubkey);
    fnv_add(&valid, sizeof valid);
    sprintf(last, "%d", valid);
}

static void schnorr_sign(int n, char *last) {
    for (int i = 0; i < n; i++) {
        if (!secp256k1_schnorrsig_sign32(ctx, schnorr_sigs[i], digests[i], &keypair, aux_zero)) die("schnorrsig_sign32");
        fnv_add(schnorr_sigs[i], 64);
    }
    hex(schnorr_sigs[n - 1], 64, last);
}

// What a stateless sign(key, message) call must do: build the keypair (one more G multiplication) each time.
static void schnorr_sign_with_keypair(int n, char *last) {
    for (int i = 0; i < n; i++) {
        secp256k1_keypair kp;
        if (!secp256k1_keypair_create(ctx, &kp, seckey)) die("keypair_create");
        if (!secp256k1_schnorrsig_sign32(ctx, schnorr_sigs[i], digests[i], &kp, aux_zero)) die("schnorrsig_sign32");
        fnv_add(schnorr_sigs[i], 64);
    }
    hex(schnorr_sigs[n - 1], 64, last);
}

static void schnorr_verify(int n, char *last) {
    int valid = 0;
    for (int i = 0; i < n; i++) valid += secp256k1_schnorrsig_verify(ctx, schnorr_sigs[i], digests[i], 32, &xonly);
    fnv_add(&valid, sizeof valid);
    sprintf(last, "%d", valid);
}

static const char *phrase = "abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon abandon about";

static void bip39_seed(int n, char *last) {
    uint8_t seed[64];
    for (int i = 0; i < n; i++) {
        if (!PKCS5_PBKDF2_HMAC(phrase, (int)strlen(phrase), (const uint8_t *)"mnemonicTREZOR", 14, 2048, md_sha512, 64, seed))
            die("PBKDF2");
        fnv_add(seed, 64);
    }
    hex(seed, 64, last);
}

int main(int argc, char **argv) {
    if (argc > 1) reps = atoi(argv[1]);
    if (reps < 1 || reps > 64) reps = 7;
    const char *only = argc > 2 ? argv[2] : NULL;  // run one figure by name

    ctx = secp256k1_context_create(SECP256K1_CONTEXT_NONE);
    uint8_t rnd[32];
    for (int i = 0; i < 32; i++) rnd[i] = (uint8_t)(i * 7 + 1);  // blinding only; does not change results
    if (!ctx || !secp256k1_context_randomize(ctx, rnd)) die("secp256k1 context");
    md_sha256 = EVP_MD_fetch(NULL, "SHA2-256", NULL);
    md_sha512 = EVP_MD_fetch(NULL, "SHA2-512", NULL);
    md_ripemd160 = EVP_MD_fetch(NULL, "RIPEMD-160", NULL);
    EVP_MAC *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (!md_sha256 || !md_sha512 || !md_ripemd160 || !mac) die("EVP fetch");
    hmac512_template = EVP_MAC_CTX_new(mac);
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, "SHA2-512", 0), OSSL_PARAM_construct_end()};
    if (!hmac512_template || !EVP_MAC_CTX_set_params(hmac512_template, params)) die("HMAC template");

    node_t root;
    master(seed64, 64, &root);
    derive_path(&root, (uint32_t[]){84 | H, 0 | H, 0 | H, 0}, 4, &btc_chain);
    derive_path(&root, (uint32_t[]){44 | H, 60 | H, 0 | H, 0}, 4, &eth_chain);

    for (uint32_t i = 0; i < NMSG; i++) {
        uint8_t le[4] = {i, i >> 8, i >> 16, i >> 24};
        digest(md_sha256, le, 4, digests[i]);
    }
    for (int i = 0; i < 32; i++) seckey[i] = (uint8_t)(i + 1);
    if (!secp256k1_ec_pubkey_create(ctx, &pubkey, seckey) || !secp256k1_keypair_create(ctx, &keypair, seckey) ||
        !secp256k1_keypair_xonly_pub(ctx, &xonly, NULL, &keypair))
        die("keys");

    struct { const char *name; work_fn fn; int n; } figures[] = {
        {"derive_p2wpkh", derive_p2wpkh, 4000},
        {"derive_eip55", derive_eip55, 4000},
        {"ecdsa_sign", ecdsa_sign, NMSG},
        {"ecdsa_verify", ecdsa_verify, NMSG},
        {"schnorr_sign", schnorr_sign, NMSG},
        {"schnorr_sign_keypair", schnorr_sign_with_keypair, NMSG},
        {"schnorr_verify", schnorr_verify, NMSG},
        {"bip39_seed", bip39_seed, 100},
    };
    for (size_t f = 0; f < sizeof figures / sizeof figures[0]; f++) {
        if (only && strcmp(only, figures[f].name) != 0) continue;
        // ecdsa_verify / schnorr_verify check the signatures the sign figures just produced.
        if (only && !strcmp(only, "ecdsa_verify")) ecdsa_sign(NMSG, (char[256]){0});
        if (only && !strcmp(only, "schnorr_verify")) schnorr_sign(NMSG, (char[256]){0});
        report(figures[f].name, figures[f].fn, figures[f].n);
    }
    return 0;
}
