/*
 * OpenSSL's libcrypto, opened at run time for the JNI code of libsluice-crypto.so (aes_gcm.c,
 * curves.c): the library then loads on a host without OpenSSL, and each binding says what is
 * missing so that the transport falls back to the JDK's implementation.
 */
#ifndef SLUICE_LIBCRYPTO_H
#define SLUICE_LIBCRYPTO_H

#include <dlfcn.h>
#include <jni.h>

/* libcrypto 3, else 1.1, else the unversioned name; NULL if none opens. */
void *sluice_open_libcrypto(void);

/* What sluice_open_libcrypto tried, for a binding's refusal. */
#define SLUICE_NO_LIBCRYPTO "no libcrypto (tried libcrypto.so.3, libcrypto.so.1.1, libcrypto.so)"

/*
 * Looks up symbol in lib into *target (a function pointer); on failure returns, from the JNI
 * function it is used in, a Java string naming the missing symbol.
 */
#define SLUICE_BIND(env, lib, target, symbol)                                          \
  do {                                                                                 \
    *(void **) (target) = dlsym((lib), (symbol));                                      \
    if (*(void **) (target) == NULL) {                                                 \
      return (*(env))->NewStringUTF((env), "libcrypto lacks " symbol);                \
    }                                                                                  \
  } while (0)

#endif
