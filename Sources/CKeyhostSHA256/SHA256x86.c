// SHA-256 compression with the x86 SHA extensions (SHA-NI). The state is kept as the two halves the
// sha256rnds2 instruction works on (ABEF and CDGH); each group of four rounds adds four message words
// and four round constants, and sha256msg1/msg2 extend the message schedule four words at a time.
#include "SHA256Internal.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>

int kh_sha256_cpu_has_sha_ni(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    int ssse3 = (c >> 9) & 1, sse41 = (c >> 19) & 1;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    int sha = (b >> 29) & 1;
    return ssse3 && sse41 && sha;
}

__attribute__((target("sha,sse4.1,ssse3")))
void kh_sha256_compress_sha_ni(uint32_t state[8], const uint8_t *data, size_t blocks) {
    const __m128i byteswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
    __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
    __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
    __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
    __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
    __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
    __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);

    while (blocks--) {
        __m128i abef_before = abef, cdgh_before = cdgh;
        __m128i w[4];
        for (int group = 0; group < 16; group++) {
            __m128i words;
            if (group < 4) {
                words = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * group)), byteswap);
            } else {
                // w[t] = σ1(w[t-2]) + w[t-7] + σ0(w[t-15]) + w[t-16], four at a time.
                __m128i oldest = w[group & 3], next = w[(group + 1) & 3];
                __m128i older = w[(group + 2) & 3], newest = w[(group + 3) & 3];
                words = _mm_sha256msg1_epu32(oldest, next);
                words = _mm_add_epi32(words, _mm_alignr_epi8(newest, older, 4));
                words = _mm_sha256msg2_epu32(words, newest);
            }
            w[group & 3] = words;
            __m128i k = _mm_add_epi32(words, _mm_loadu_si128((const __m128i *)&kh_sha256_k[4 * group]));
            // Two rounds each: after two rounds the old ABEF is the new CDGH, so the two variables
            // trade roles after the first call and trade back after the second.
            cdgh = _mm_sha256rnds2_epu32(cdgh, abef, k);
            abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(k, 0x0E));
        }
        abef = _mm_add_epi32(abef, abef_before);
        cdgh = _mm_add_epi32(cdgh, cdgh_before);
        data += 64;
    }

    __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
    __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
    _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
    _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}

#else

int kh_sha256_cpu_has_sha_ni(void) { return 0; }
void kh_sha256_compress_sha_ni(uint32_t state[8], const uint8_t *data, size_t blocks) {
    (void)state; (void)data; (void)blocks;
    __builtin_trap();  // never called: kh_sha256_cpu_has_sha_ni() is 0 here
}

#endif
