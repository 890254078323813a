/*
 * AES-128-GCM through OpenSSL's EVP interface, for io.sluice.transport.crypto.OpenSslAesGcm.
 *
 * libcrypto is opened with dlopen at bind time rather than linked: the library then loads on a
 * host without OpenSSL, and bind() says what is missing so that the transport falls back to the
 * JDK's engine. Only functions whose names and signatures are the same in OpenSSL 1.1 and 3 are
 * used, so no OpenSSL header is needed to build this file.
 *
 * Buffers arrive as Java objects: a direct ByteBuffer (its address, no copy) or a byte[] (pinned
 * with GetPrimitiveArrayCritical, normally no copy either). Offsets are in bytes from the start of
 * the buffer's memory or of the array.
 */
#include <jni.h>
#include <stdint.h>
#include <string.h>

#include "libcrypto.h"

#define JNI_EXPORT __attribute__((visibility("default")))

typedef struct evp_cipher_ctx_st EVP_CIPHER_CTX;
typedef struct evp_cipher_st EVP_CIPHER;

/* openssl/evp.h: the same values in 1.1 and 3. */
#define EVP_CTRL_GCM_SET_IVLEN 0x9
#define EVP_CTRL_GCM_GET_TAG 0x10
#define EVP_CTRL_GCM_SET_TAG 0x11

#define TAG_LENGTH 16
#define KEY_LENGTH 16
#define NONCE_LENGTH 12
#define MAX_AAD 64

static struct {
  EVP_CIPHER_CTX *(*ctx_new)(void);
  void (*ctx_free)(EVP_CIPHER_CTX *);
  const EVP_CIPHER *(*aes_128_gcm)(void);
  int (*cipher_init)(EVP_CIPHER_CTX *, const EVP_CIPHER *, void *, const unsigned char *, const unsigned char *, int);
  int (*ctx_ctrl)(EVP_CIPHER_CTX *, int, int, void *);
  int (*cipher_update)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
  int (*cipher_final)(EVP_CIPHER_CTX *, unsigned char *, int *);
  const char *(*version)(int);
} evp;

/* AES-128-GCM, fetched once where OpenSSL 3 can (an implicit fetch on every init costs more). */
static const EVP_CIPHER *gcm;

static char version_text[128];

JNI_EXPORT jstring JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_bind(JNIEnv *env, jclass cls) {
  (void) cls;
  void *lib = sluice_open_libcrypto();
  if (lib == NULL) {
    return (*env)->NewStringUTF(env, SLUICE_NO_LIBCRYPTO);
  }
#define BIND(field, symbol) SLUICE_BIND(env, lib, &evp.field, symbol)
  BIND(ctx_new, "EVP_CIPHER_CTX_new");
  BIND(ctx_free, "EVP_CIPHER_CTX_free");
  BIND(aes_128_gcm, "EVP_aes_128_gcm");
  BIND(cipher_init, "EVP_CipherInit_ex");
  BIND(ctx_ctrl, "EVP_CIPHER_CTX_ctrl");
  BIND(cipher_update, "EVP_CipherUpdate");
  BIND(cipher_final, "EVP_CipherFinal_ex");
  BIND(version, "OpenSSL_version");
#undef BIND
  const EVP_CIPHER *(*fetch)(void *, const char *, const char *);
  *(void **) (&fetch) = dlsym(lib, "EVP_CIPHER_fetch");
  gcm = fetch != NULL ? fetch(NULL, "AES-128-GCM", NULL) : NULL;
  if (gcm == NULL) {
    gcm = evp.aes_128_gcm();
  }
  const char *v = evp.version(0);
  strncpy(version_text, v != NULL ? v : "OpenSSL", sizeof version_text - 1);
  return NULL;
}

JNI_EXPORT jstring JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_version(JNIEnv *env, jclass cls) {
  (void) cls;
  return (*env)->NewStringUTF(env, version_text);
}

/* A context keyed with key (16 bytes) for one direction; NULL if OpenSSL refuses. */
static EVP_CIPHER_CTX *new_context(JNIEnv *env, jbyteArray key, int enc) {
  if ((*env)->GetArrayLength(env, key) != KEY_LENGTH) {
    return NULL;
  }
  unsigned char k[KEY_LENGTH];
  (*env)->GetByteArrayRegion(env, key, 0, KEY_LENGTH, (jbyte *) k);
  EVP_CIPHER_CTX *ctx = evp.ctx_new();
  if (ctx != NULL
      && (evp.cipher_init(ctx, gcm, NULL, NULL, NULL, enc) != 1
          || evp.ctx_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, NONCE_LENGTH, NULL) != 1
          || evp.cipher_init(ctx, NULL, NULL, k, NULL, enc) != 1)) {
    evp.ctx_free(ctx);
    ctx = NULL;
  }
  memset(k, 0, sizeof k);
  return ctx;
}

JNI_EXPORT jlong JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_newContext(JNIEnv *env, jclass cls,
    jbyteArray key, jboolean encrypt) {
  (void) cls;
  return (jlong) (intptr_t) new_context(env, key, encrypt ? 1 : 0);
}

JNI_EXPORT void JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_freeContext(JNIEnv *env, jclass cls, jlong ctx) {
  (void) env;
  (void) cls;
  evp.ctx_free((EVP_CIPHER_CTX *) (intptr_t) ctx);
}

/* Sets the nonce (4 zero bytes | big-endian seq) and takes the associated data. */
static int start(JNIEnv *env, EVP_CIPHER_CTX *ctx, jlong seq, jbyteArray aad, jint aad_length) {
  unsigned char nonce[NONCE_LENGTH] = {0};
  for (int i = 0; i < 8; i++) {
    nonce[4 + i] = (unsigned char) ((uint64_t) seq >> (56 - 8 * i));
  }
  if (aad_length < 0 || aad_length > MAX_AAD) {
    return 0;
  }
  unsigned char a[MAX_AAD];
  (*env)->GetByteArrayRegion(env, aad, 0, aad_length, (jbyte *) a);
  int n;
  return evp.cipher_init(ctx, NULL, NULL, NULL, nonce, -1) == 1
      && (aad_length == 0 || evp.cipher_update(ctx, NULL, &n, a, aad_length) == 1);
}

JNI_EXPORT jboolean JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_start(JNIEnv *env, jclass cls, jlong ctx,
    jlong seq, jbyteArray aad, jint aad_length) {
  (void) cls;
  return start(env, (EVP_CIPHER_CTX *) (intptr_t) ctx, seq, aad, aad_length) ? JNI_TRUE : JNI_FALSE;
}

/*
 * The memory of two buffer objects, direct or byte[]. Every GetDirectBufferAddress comes before the
 * first GetPrimitiveArrayCritical: no other JNI call may sit inside a critical region.
 */
typedef struct {
  jobject in_obj, out_obj;
  unsigned char *in, *out;
  int in_pinned, out_pinned;
} pins;

static int pin(JNIEnv *env, pins *p, jobject in, jobject out) {
  p->in_obj = in;
  p->out_obj = out;
  p->in = (*env)->GetDirectBufferAddress(env, in);
  p->out = (*env)->GetDirectBufferAddress(env, out);
  p->in_pinned = p->in == NULL;
  p->out_pinned = p->out == NULL;
  if (p->in_pinned) {
    p->in = (*env)->GetPrimitiveArrayCritical(env, (jarray) in, NULL);
  }
  if (p->out_pinned) {
    p->out = (*env)->GetPrimitiveArrayCritical(env, (jarray) out, NULL);
  }
  return p->in != NULL && p->out != NULL;
}

static void unpin(JNIEnv *env, pins *p) {
  if (p->out_pinned && p->out != NULL) {
    (*env)->ReleasePrimitiveArrayCritical(env, (jarray) p->out_obj, p->out, 0);
  }
  if (p->in_pinned && p->in != NULL) {
    (*env)->ReleasePrimitiveArrayCritical(env, (jarray) p->in_obj, p->in, JNI_ABORT);
  }
}

/* Encrypts length bytes; returns the bytes written (GCM writes as many as it reads), or -1. */
JNI_EXPORT jint JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_update(JNIEnv *env, jclass cls, jlong ctx,
    jobject in, jint in_offset, jint length, jobject out, jint out_offset) {
  (void) cls;
  pins p;
  int n = -1;
  if (pin(env, &p, in, out)) {
    if (evp.cipher_update((EVP_CIPHER_CTX *) (intptr_t) ctx, p.out + out_offset, &n, p.in + in_offset, length) != 1) {
      n = -1;
    }
  }
  unpin(env, &p);
  return n;
}

/* Ends a sealed record: writes what is left of the ciphertext, then the tag; returns the bytes written, or -1. */
JNI_EXPORT jint JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_finishSeal(JNIEnv *env, jclass cls, jlong ctx,
    jobject out, jint out_offset) {
  (void) cls;
  EVP_CIPHER_CTX *c = (EVP_CIPHER_CTX *) (intptr_t) ctx;
  unsigned char *o = (*env)->GetDirectBufferAddress(env, out);
  int pinned = o == NULL;
  if (pinned) {
    o = (*env)->GetPrimitiveArrayCritical(env, (jarray) out, NULL);
    if (o == NULL) {
      return -1;
    }
  }
  int n = 0;
  int written = -1;
  if (evp.cipher_final(c, o + out_offset, &n) == 1
      && evp.ctx_ctrl(c, EVP_CTRL_GCM_GET_TAG, TAG_LENGTH, o + out_offset + n) == 1) {
    written = n + TAG_LENGTH;
  }
  if (pinned) {
    (*env)->ReleasePrimitiveArrayCritical(env, (jarray) out, o, 0);
  }
  return written;
}

/*
 * Adds length bytes at in + in_offset to the associated data of the GMAC (AES-GCM over no plain
 * text) that ctx is computing: an EVP update with no output, GHASHed where the bytes lie.
 */
JNI_EXPORT jboolean JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_addAad(JNIEnv *env, jclass cls, jlong ctx,
    jobject in, jint in_offset, jint length) {
  (void) cls;
  unsigned char *i = (*env)->GetDirectBufferAddress(env, in);
  int pinned = i == NULL;
  if (pinned) {
    i = (*env)->GetPrimitiveArrayCritical(env, (jarray) in, NULL);
    if (i == NULL) {
      return JNI_FALSE;
    }
  }
  int n = 0;
  int ok = evp.cipher_update((EVP_CIPHER_CTX *) (intptr_t) ctx, NULL, &n, i + in_offset, length) == 1;
  if (pinned) {
    (*env)->ReleasePrimitiveArrayCritical(env, (jarray) in, i, JNI_ABORT);
  }
  return ok ? JNI_TRUE : JNI_FALSE;
}

/*
 * Ends the GMAC that an opening ctx is computing and compares its tag with tag (16 bytes; OpenSSL
 * compares in constant time). Returns 1 when they match, 0 when they do not, -1 when OpenSSL
 * fails otherwise.
 */
JNI_EXPORT jint JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_checkTag(JNIEnv *env, jclass cls, jlong ctx,
    jbyteArray tag) {
  (void) cls;
  EVP_CIPHER_CTX *c = (EVP_CIPHER_CTX *) (intptr_t) ctx;
  if ((*env)->GetArrayLength(env, tag) != TAG_LENGTH) {
    return -1;
  }
  unsigned char t[TAG_LENGTH];
  (*env)->GetByteArrayRegion(env, tag, 0, TAG_LENGTH, (jbyte *) t);
  if (evp.ctx_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG_LENGTH, t) != 1) {
    return -1;
  }
  unsigned char none[TAG_LENGTH]; /* no plain text comes out; room in case a version writes */
  int n = 0;
  return evp.cipher_final(c, none, &n) == 1 ? 1 : 0;
}

/*
 * Opens one record under key, in a context of its own that this call frees: length bytes of
 * ciphertext at in + in_offset, its tag right after. The plain
 * text goes to out + out_offset; if the tag does not check out, those bytes are zeroed before
 * this returns, so no unauthenticated plain text outlives the call. Returns 1 when the tag
 * checks out, 0 when it does not, -1 when OpenSSL fails otherwise.
 */
JNI_EXPORT jint JNICALL Java_io_sluice_transport_crypto_OpenSslAesGcm_open(JNIEnv *env, jclass cls,
    jbyteArray key, jlong seq, jbyteArray aad, jint aad_length, jobject in, jint in_offset, jint length,
    jobject out, jint out_offset) {
  (void) cls;
  EVP_CIPHER_CTX *c = new_context(env, key, 0);
  if (c == NULL) {
    return -1;
  }
  if (!start(env, c, seq, aad, aad_length)) {
    evp.ctx_free(c);
    return -1;
  }
  pins p;
  int result = -1;
  if (pin(env, &p, in, out)) {
    unsigned char *plain = p.out + out_offset;
    unsigned char tag[TAG_LENGTH];
    memcpy(tag, p.in + in_offset + length, TAG_LENGTH);
    int n = 0;
    int tail = 0;
    if ((length == 0 || evp.cipher_update(c, plain, &n, p.in + in_offset, length) == 1)
        && evp.ctx_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG_LENGTH, tag) == 1) {
      result = evp.cipher_final(c, plain + n, &tail) == 1 ? 1 : 0;
    }
    if (result != 1) {
      memset(plain, 0, (size_t) length);
    }
  }
  unpin(env, &p);
  evp.ctx_free(c);
  return result;
}
