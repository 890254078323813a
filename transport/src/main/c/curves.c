/*
 * X25519 (RFC 7748) and Ed25519 (RFC 8032) through OpenSSL's EVP_PKEY interface, for
 * io.sluice.transport.crypto.OpenSslCurves: the handshake's four public-key operations in native
 * code from the first connection, where the JDK's are interpreted Java until the JIT compiles them.
 *
 * As in aes_gcm.c, libcrypto is opened with dlopen when bound, and only functions whose names and
 * signatures are the same in OpenSSL 1.1.1 and 3 are used, so no OpenSSL header is needed. Keys
 * travel raw: a 32-byte X25519 scalar or Ed25519 seed, a 32-byte public key. Every call builds the
 * EVP_PKEY objects it needs and frees them before it returns; private key bytes copied out of the
 * Java heap are wiped with OPENSSL_cleanse.
 */
#include <jni.h>
#include <stddef.h>
#include <stdint.h>

#include "libcrypto.h"

#define JNI_EXPORT __attribute__((visibility("default")))

typedef struct evp_pkey_st EVP_PKEY;
typedef struct evp_pkey_ctx_st EVP_PKEY_CTX;
typedef struct evp_md_ctx_st EVP_MD_CTX;

/* openssl/obj_mac.h: NID_X25519 and NID_ED25519, the same in 1.1.1 and 3. */
#define PKEY_X25519 1034
#define PKEY_ED25519 1087

#define KEY_LENGTH 32
#define SIGNATURE_LENGTH 64

static struct {
  EVP_PKEY *(*new_raw_private)(int, void *, const unsigned char *, size_t);
  EVP_PKEY *(*new_raw_public)(int, void *, const unsigned char *, size_t);
  int (*get_raw_public)(const EVP_PKEY *, unsigned char *, size_t *);
  void (*pkey_free)(EVP_PKEY *);
  EVP_PKEY_CTX *(*ctx_new)(EVP_PKEY *, void *);
  void (*ctx_free)(EVP_PKEY_CTX *);
  int (*derive_init)(EVP_PKEY_CTX *);
  int (*derive_set_peer)(EVP_PKEY_CTX *, EVP_PKEY *);
  int (*derive)(EVP_PKEY_CTX *, unsigned char *, size_t *);
  EVP_MD_CTX *(*md_new)(void);
  void (*md_free)(EVP_MD_CTX *);
  int (*sign_init)(EVP_MD_CTX *, EVP_PKEY_CTX **, const void *, void *, EVP_PKEY *);
  int (*sign)(EVP_MD_CTX *, unsigned char *, size_t *, const unsigned char *, size_t);
  int (*verify_init)(EVP_MD_CTX *, EVP_PKEY_CTX **, const void *, void *, EVP_PKEY *);
  int (*verify)(EVP_MD_CTX *, const unsigned char *, size_t, const unsigned char *, size_t);
  void (*cleanse)(void *, size_t);
  void (*clear_errors)(void);
} pk;

JNI_EXPORT jstring JNICALL Java_io_sluice_transport_crypto_OpenSslCurves_bind(JNIEnv *env, jclass cls) {
  (void) cls;
  void *lib = sluice_open_libcrypto();
  if (lib == NULL) {
    return (*env)->NewStringUTF(env, SLUICE_NO_LIBCRYPTO);
  }
#define BIND(field, symbol) SLUICE_BIND(env, lib, &pk.field, symbol)
  BIND(new_raw_private, "EVP_PKEY_new_raw_private_key");
  BIND(new_raw_public, "EVP_PKEY_new_raw_public_key");
  BIND(get_raw_public, "EVP_PKEY_get_raw_public_key");
  BIND(pkey_free, "EVP_PKEY_free");
  BIND(ctx_new, "EVP_PKEY_CTX_new");
  BIND(ctx_free, "EVP_PKEY_CTX_free");
  BIND(derive_init, "EVP_PKEY_derive_init");
  BIND(derive_set_peer, "EVP_PKEY_derive_set_peer");
  BIND(derive, "EVP_PKEY_derive");
  BIND(md_new, "EVP_MD_CTX_new");
  BIND(md_free, "EVP_MD_CTX_free");
  BIND(sign_init, "EVP_DigestSignInit");
  BIND(sign, "EVP_DigestSign");
  BIND(verify_init, "EVP_DigestVerifyInit");
  BIND(verify, "EVP_DigestVerify");
  BIND(cleanse, "OPENSSL_cleanse");
  BIND(clear_errors, "ERR_clear_error");
#undef BIND
  return NULL;
}

/* Copies a Java array of exactly n bytes into out; 0 if its length is not n. */
static int take(JNIEnv *env, jbyteArray array, unsigned char *out, jsize n) {
  if (array == NULL || (*env)->GetArrayLength(env, array) != n) {
    return 0;
  }
  (*env)->GetByteArrayRegion(env, array, 0, n, (jbyte *) out);
  return 1;
}

/* A failed OpenSSL call leaves entries on this thread's error queue; nothing reads them. */
static void forget_errors(void) {
  pk.clear_errors();
}

/* The raw public key of a private one of type (X25519 scalar or Ed25519 seed) into out; 1 if done. */
static jboolean public_of(JNIEnv *env, int type, jbyteArray private_key, jbyteArray out) {
  unsigned char priv[KEY_LENGTH];
  if (!take(env, private_key, priv, KEY_LENGTH) || (*env)->GetArrayLength(env, out) != KEY_LENGTH) {
    return JNI_FALSE;
  }
  EVP_PKEY *key = pk.new_raw_private(type, NULL, priv, KEY_LENGTH);
  pk.cleanse(priv, sizeof priv);
  unsigned char pub[KEY_LENGTH];
  size_t length = sizeof pub;
  int ok = key != NULL && pk.get_raw_public(key, pub, &length) == 1 && length == KEY_LENGTH;
  pk.pkey_free(key);
  if (!ok) {
    forget_errors();
    return JNI_FALSE;
  }
  (*env)->SetByteArrayRegion(env, out, 0, KEY_LENGTH, (const jbyte *) pub);
  return JNI_TRUE;
}

JNI_EXPORT jboolean JNICALL Java_io_sluice_transport_crypto_OpenSslCurves_x25519Public(JNIEnv *env, jclass cls,
    jbyteArray scalar, jbyteArray out) {
  (void) cls;
  return public_of(env, PKEY_X25519, scalar, out);
}

JNI_EXPORT jboolean JNICALL Java_io_sluice_transport_crypto_OpenSslCurves_ed25519Public(JNIEnv *env, jclass cls,
    jbyteArray seed, jbyteArray out) {
  (void) cls;
  return public_of(env, PKEY_ED25519, seed, out);
}

/*
 * X25519(scalar, peer) into out. 1: done; 0: OpenSSL refused the derivation, which for a key of
 * the right length means a result of all zeros (a point of small order); -1: bad lengths or no
 * memory.
 */
JNI_EXPORT jint JNICALL Java_io_sluice_transport_crypto_OpenSslCurves_x25519(JNIEnv *env, jclass cls,
    jbyteArray scalar, jbyteArray peer, jbyteArray out) {
  (void) cls;
  unsigned char priv[KEY_LENGTH];
  unsigned char u[KEY_LENGTH];
  if (!take(env, peer, u, KEY_LENGTH) || (*env)->GetArrayLength(env, out) != KEY_LENGTH
      || !take(env, scalar, priv, KEY_LENGTH)) {
    return -1;
  }
  EVP_PKEY *own = pk.new_raw_private(PKEY_X25519, NULL, priv, KEY_LENGTH);
  pk.cleanse(priv, sizeof priv);
  EVP_PKEY *other = pk.new_raw_public(PKEY_X25519, NULL, u, KEY_LENGTH);
  EVP_PKEY_CTX *ctx = own != NULL ? pk.ctx_new(own, NULL) : NULL;
  jint result = -1;
  if (ctx != NULL && other != NULL && pk.derive_init(ctx) == 1) {
    unsigned char shared[KEY_LENGTH];
    size_t length = sizeof shared;
    if (pk.derive_set_peer(ctx, other) == 1 && pk.derive(ctx, shared, &length) == 1 && length == KEY_LENGTH) {
      (*env)->SetByteArrayRegion(env, out, 0, KEY_LENGTH, (const jbyte *) shared);
      result = 1;
    } else {
      result = 0;
    }
    pk.cleanse(shared, sizeof shared);
  }
  pk.ctx_free(ctx);
  pk.pkey_free(other);
  pk.pkey_free(own);
  if (result != 1) {
    forget_errors();
  }
  return result;
}

JNI_EXPORT jboolean JNICALL Java_io_sluice_transport_crypto_OpenSslCurves_ed25519Sign(JNIEnv *env, jclass cls,
    jbyteArray seed, jbyteArray message, jbyteArray out) {
  (void) cls;
  unsigned char priv[KEY_LENGTH];
  if (message == NULL || (*env)->GetArrayLength(env, out) != SIGNATURE_LENGTH || !take(env, seed, priv, KEY_LENGTH)) {
    return JNI_FALSE;
  }
  EVP_PKEY *key = pk.new_raw_private(PKEY_ED25519, NULL, priv, KEY_LENGTH);
  pk.cleanse(priv, sizeof priv);
  EVP_MD_CTX *ctx = key != NULL ? pk.md_new() : NULL;
  jsize n = (*env)->GetArrayLength(env, message);
  unsigned char signature[SIGNATURE_LENGTH];
  size_t length = sizeof signature;
  int ok = 0;
  if (ctx != NULL && pk.sign_init(ctx, NULL, NULL, NULL, key) == 1) {
    unsigned char *m = (*env)->GetPrimitiveArrayCritical(env, message, NULL);
    if (m != NULL) {
      ok = pk.sign(ctx, signature, &length, m, (size_t) n) == 1 && length == SIGNATURE_LENGTH;
      (*env)->ReleasePrimitiveArrayCritical(env, message, m, JNI_ABORT);
    }
  }
  pk.md_free(ctx);
  pk.pkey_free(key);
  if (!ok) {
    forget_errors();
    return JNI_FALSE;
  }
  (*env)->SetByteArrayRegion(env, out, 0, SIGNATURE_LENGTH, (const jbyte *) signature);
  return JNI_TRUE;
}

/* 1: the signature verifies; 0: it does not, or the key is no Ed25519 point; -1: no memory. */
JNI_EXPORT jint JNICALL Java_io_sluice_transport_crypto_OpenSslCurves_ed25519Check(JNIEnv *env, jclass cls,
    jbyteArray public_key, jbyteArray message, jbyteArray signature) {
  (void) cls;
  unsigned char pub[KEY_LENGTH];
  unsigned char sig[SIGNATURE_LENGTH];
  if (message == NULL || !take(env, public_key, pub, KEY_LENGTH) || !take(env, signature, sig, SIGNATURE_LENGTH)) {
    return 0;
  }
  EVP_PKEY *key = pk.new_raw_public(PKEY_ED25519, NULL, pub, KEY_LENGTH);
  if (key == NULL) {
    forget_errors();
    return 0;
  }
  EVP_MD_CTX *ctx = pk.md_new();
  jsize n = (*env)->GetArrayLength(env, message);
  jint result = -1;
  if (ctx != NULL && pk.verify_init(ctx, NULL, NULL, NULL, key) == 1) {
    unsigned char *m = (*env)->GetPrimitiveArrayCritical(env, message, NULL);
    if (m != NULL) {
      result = pk.verify(ctx, sig, SIGNATURE_LENGTH, m, (size_t) n) == 1 ? 1 : 0;
      (*env)->ReleasePrimitiveArrayCritical(env, message, m, JNI_ABORT);
    }
  }
  pk.md_free(ctx);
  pk.pkey_free(key);
  if (result != 1) {
    forget_errors();
  }
  return result;
}
