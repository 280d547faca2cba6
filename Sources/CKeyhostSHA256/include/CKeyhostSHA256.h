// SHA-256 without libcrypto: token runs, their workers and the ledger hash every chain, and loading and
// initialising libcrypto for that cost each process more than all its hashing (see docs/startup-and-size.md).
#ifndef CKEYHOST_SHA256_H
#define CKEYHOST_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t state[8];
    uint64_t length;      // bytes hashed so far
    uint8_t buffer[64];   // the unfinished block; `length % 64` bytes of it are used
} kh_sha256_ctx;

void kh_sha256_init(kh_sha256_ctx *ctx);
void kh_sha256_update(kh_sha256_ctx *ctx, const void *data, size_t count);
/// Writes the digest and wipes the context (it may have held secret input).
void kh_sha256_final(kh_sha256_ctx *ctx, uint8_t out[32]);
void kh_sha256(const void *data, size_t count, uint8_t out[32]);

/// 1 when this CPU has the SHA extensions keyhost uses (x86-64 SHA-NI with SSE4.1).
int kh_sha256_hardware_available(void);
/// For tests: 0 forces the portable code, 1 restores the automatic choice. Returns the previous setting.
int kh_sha256_allow_hardware(int allow);

#endif
