#ifndef CKEYHOST_SHA256_INTERNAL_H
#define CKEYHOST_SHA256_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern const uint32_t kh_sha256_k[64];

/// 1 when the CPU has SHA-NI, SSSE3 and SSE4.1; always 0 off x86-64.
int kh_sha256_cpu_has_sha_ni(void);
/// The SHA-NI compression function; only called when kh_sha256_cpu_has_sha_ni() said 1.
void kh_sha256_compress_sha_ni(uint32_t state[8], const uint8_t *data, size_t blocks);

/// explicit_bzero: a plain memset of memory about to die may be optimised away.
static inline void kh_sha256_wipe(void *p, size_t n) { explicit_bzero(p, n); }

#endif
