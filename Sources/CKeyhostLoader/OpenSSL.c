// libcrypto and libssl, loaded on first use (see CKeyhostLoader.h). Every function keyhost calls
// is listed here; a call to one that is not fails to link, because no module links OpenSSL itself.
#include "Loader.h"
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#define KH_STRINGIFY(x) #x
#define KH_SONAME(name, version) "lib" name ".so." KH_STRINGIFY(version)

static kh_library crypto = {KH_SONAME("crypto", OPENSSL_SHLIB_VERSION), "libssl3", NULL};
static kh_library ssl = {KH_SONAME("ssl", OPENSSL_SHLIB_VERSION), "libssl3", NULL};

// libcrypto
KH_FORWARD(crypto, const char *, OpenSSL_version, (int type), (type))
KH_FORWARD(crypto, int, RAND_bytes, (unsigned char *buf, int num), (buf, num))
KH_FORWARD_VOID(crypto, OPENSSL_cleanse, (void *ptr, size_t len), (ptr, len))
KH_FORWARD(crypto, int, CRYPTO_memcmp, (const void *a, const void *b, size_t len), (a, b, len))
KH_FORWARD_VOID(crypto, ERR_clear_error, (void), ())
KH_FORWARD(crypto, unsigned long, ERR_get_error, (void), ())
KH_FORWARD(crypto, unsigned long, ERR_peek_error, (void), ())
KH_FORWARD_VOID(crypto, ERR_error_string_n, (unsigned long e, char *buf, size_t len), (e, buf, len))

KH_FORWARD(crypto, EVP_MD *, EVP_MD_fetch, (OSSL_LIB_CTX *ctx, const char *algorithm, const char *properties), (ctx, algorithm, properties))
KH_FORWARD(crypto, int, EVP_Digest,
           (const void *data, size_t count, unsigned char *md, unsigned int *size, const EVP_MD *type, ENGINE *impl),
           (data, count, md, size, type, impl))
KH_FORWARD(crypto, int, PKCS5_PBKDF2_HMAC,
           (const char *pass, int passlen, const unsigned char *salt, int saltlen, int iter, const EVP_MD *digest, int keylen, unsigned char *out),
           (pass, passlen, salt, saltlen, iter, digest, keylen, out))

KH_FORWARD(crypto, EVP_MAC *, EVP_MAC_fetch, (OSSL_LIB_CTX *ctx, const char *algorithm, const char *properties), (ctx, algorithm, properties))
KH_FORWARD_VOID(crypto, EVP_MAC_free, (EVP_MAC *mac), (mac))
KH_FORWARD(crypto, EVP_MAC_CTX *, EVP_MAC_CTX_new, (EVP_MAC *mac), (mac))
KH_FORWARD(crypto, EVP_MAC_CTX *, EVP_MAC_CTX_dup, (const EVP_MAC_CTX *src), (src))
KH_FORWARD_VOID(crypto, EVP_MAC_CTX_free, (EVP_MAC_CTX *ctx), (ctx))
KH_FORWARD(crypto, int, EVP_MAC_CTX_set_params, (EVP_MAC_CTX *ctx, const OSSL_PARAM params[]), (ctx, params))
KH_FORWARD(crypto, int, EVP_MAC_init, (EVP_MAC_CTX *ctx, const unsigned char *key, size_t keylen, const OSSL_PARAM params[]),
           (ctx, key, keylen, params))
KH_FORWARD(crypto, int, EVP_MAC_update, (EVP_MAC_CTX *ctx, const unsigned char *data, size_t datalen), (ctx, data, datalen))
KH_FORWARD(crypto, int, EVP_MAC_final, (EVP_MAC_CTX *ctx, unsigned char *out, size_t *outl, size_t outsize), (ctx, out, outl, outsize))
KH_FORWARD(crypto, OSSL_PARAM, OSSL_PARAM_construct_utf8_string, (const char *key, char *buf, size_t bsize), (key, buf, bsize))
KH_FORWARD(crypto, OSSL_PARAM, OSSL_PARAM_construct_end, (void), ())

KH_FORWARD(crypto, EVP_CIPHER *, EVP_CIPHER_fetch, (OSSL_LIB_CTX *ctx, const char *algorithm, const char *properties), (ctx, algorithm, properties))
KH_FORWARD(crypto, const EVP_CIPHER *, EVP_aes_128_ccm, (void), ())
KH_FORWARD(crypto, EVP_CIPHER_CTX *, EVP_CIPHER_CTX_new, (void), ())
KH_FORWARD_VOID(crypto, EVP_CIPHER_CTX_free, (EVP_CIPHER_CTX *c), (c))
KH_FORWARD(crypto, int, EVP_CIPHER_CTX_ctrl, (EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr), (ctx, type, arg, ptr))
KH_FORWARD(crypto, int, EVP_CIPHER_CTX_set_padding, (EVP_CIPHER_CTX *c, int pad), (c, pad))
KH_FORWARD(crypto, int, EVP_CipherInit_ex2,
           (EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key, const unsigned char *iv, int enc, const OSSL_PARAM params[]),
           (ctx, cipher, key, iv, enc, params))
KH_FORWARD(crypto, int, EVP_CipherUpdate, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl),
           (ctx, out, outl, in, inl))
KH_FORWARD(crypto, int, EVP_CipherFinal_ex, (EVP_CIPHER_CTX *ctx, unsigned char *outm, int *outl), (ctx, outm, outl))
KH_FORWARD(crypto, int, EVP_EncryptInit_ex,
           (EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl, const unsigned char *key, const unsigned char *iv),
           (ctx, cipher, impl, key, iv))
KH_FORWARD(crypto, int, EVP_EncryptUpdate, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl),
           (ctx, out, outl, in, inl))
KH_FORWARD(crypto, int, EVP_EncryptFinal_ex, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl), (ctx, out, outl))
KH_FORWARD(crypto, int, EVP_DecryptInit_ex,
           (EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl, const unsigned char *key, const unsigned char *iv),
           (ctx, cipher, impl, key, iv))
KH_FORWARD(crypto, int, EVP_DecryptUpdate, (EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int inl),
           (ctx, out, outl, in, inl))

KH_FORWARD(crypto, BIO *, BIO_new, (const BIO_METHOD *type), (type))
KH_FORWARD(crypto, int, BIO_get_new_index, (void), ())
KH_FORWARD(crypto, BIO_METHOD *, BIO_meth_new, (int type, const char *name), (type, name))
KH_FORWARD(crypto, int, BIO_meth_set_write, (BIO_METHOD *biom, int (*write)(BIO *, const char *, int)), (biom, write))
KH_FORWARD(crypto, int, BIO_meth_set_read, (BIO_METHOD *biom, int (*read)(BIO *, char *, int)), (biom, read))
KH_FORWARD(crypto, int, BIO_meth_set_ctrl, (BIO_METHOD *biom, long (*ctrl)(BIO *, int, long, void *)), (biom, ctrl))
KH_FORWARD(crypto, void *, BIO_get_data, (BIO *a), (a))
KH_FORWARD_VOID(crypto, BIO_set_data, (BIO *a, void *ptr), (a, ptr))
KH_FORWARD_VOID(crypto, BIO_set_init, (BIO *a, int init), (a, init))
KH_FORWARD_VOID(crypto, BIO_set_flags, (BIO *b, int flags), (b, flags))
KH_FORWARD_VOID(crypto, BIO_clear_flags, (BIO *b, int flags), (b, flags))
KH_FORWARD(crypto, int, X509_VERIFY_PARAM_set1_ip_asc, (X509_VERIFY_PARAM *param, const char *ipasc), (param, ipasc))
KH_FORWARD(crypto, const char *, X509_verify_cert_error_string, (long n), (n))
// Certificate pinning (the Electrum usage source): PEM files, DER bytes, the trust store.
KH_FORWARD(crypto, BIO *, BIO_new_mem_buf, (const void *buf, int len), (buf, len))
KH_FORWARD(crypto, int, BIO_free, (BIO *a), (a))
KH_FORWARD(crypto, X509 *, PEM_read_bio_X509, (BIO *bp, X509 **x, pem_password_cb *cb, void *u), (bp, x, cb, u))
KH_FORWARD_VOID(crypto, X509_free, (X509 *a), (a))
KH_FORWARD(crypto, int, i2d_X509, (const X509 *a, unsigned char **out), (a, out))
KH_FORWARD(crypto, X509 *, d2i_X509, (X509 **a, const unsigned char **in, long len), (a, in, len))
KH_FORWARD(crypto, int, X509_STORE_add_cert, (X509_STORE *xs, X509 *x), (xs, x))

// libssl (its own dependency on libcrypto resolves to the copy loaded above)
KH_FORWARD(ssl, const SSL_METHOD *, TLS_client_method, (void), ())
KH_FORWARD(ssl, SSL_CTX *, SSL_CTX_new, (const SSL_METHOD *meth), (meth))
KH_FORWARD_VOID(ssl, SSL_CTX_free, (SSL_CTX *ctx), (ctx))
KH_FORWARD(ssl, int, SSL_CTX_set_default_verify_paths, (SSL_CTX *ctx), (ctx))
KH_FORWARD(ssl, int, SSL_CTX_load_verify_locations, (SSL_CTX *ctx, const char *CAfile, const char *CApath), (ctx, CAfile, CApath))
KH_FORWARD(ssl, uint64_t, SSL_CTX_set_options, (SSL_CTX *ctx, uint64_t op), (ctx, op))
KH_FORWARD_VOID(ssl, SSL_CTX_set_verify, (SSL_CTX *ctx, int mode, SSL_verify_cb callback), (ctx, mode, callback))
KH_FORWARD(ssl, SSL *, SSL_new, (SSL_CTX *ctx), (ctx))
KH_FORWARD_VOID(ssl, SSL_free, (SSL *s), (s))
KH_FORWARD_VOID(ssl, SSL_set_bio, (SSL *s, BIO *rbio, BIO *wbio), (s, rbio, wbio))
KH_FORWARD(ssl, long, SSL_ctrl, (SSL *s, int cmd, long larg, void *parg), (s, cmd, larg, parg))
KH_FORWARD(ssl, X509_VERIFY_PARAM *, SSL_get0_param, (SSL *s), (s))
KH_FORWARD(ssl, int, SSL_set1_host, (SSL *s, const char *hostname), (s, hostname))
KH_FORWARD_VOID(ssl, SSL_set_hostflags, (SSL *s, unsigned int flags), (s, flags))
KH_FORWARD(ssl, int, SSL_connect, (SSL *s), (s))
KH_FORWARD(ssl, int, SSL_read, (SSL *s, void *buf, int num), (s, buf, num))
KH_FORWARD(ssl, int, SSL_write, (SSL *s, const void *buf, int num), (s, buf, num))
KH_FORWARD(ssl, int, SSL_get_error, (const SSL *s, int ret_code), (s, ret_code))
KH_FORWARD(ssl, long, SSL_get_verify_result, (const SSL *s), (s))
KH_FORWARD(ssl, X509 *, SSL_get1_peer_certificate, (const SSL *s), (s))
KH_FORWARD(ssl, X509_STORE *, SSL_CTX_get_cert_store, (const SSL_CTX *ctx), (ctx))
