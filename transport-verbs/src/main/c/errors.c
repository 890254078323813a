/* IOException helpers for the JNI entry points. */
#include <stdio.h>
#include <string.h>

#include "disni_abi.h"

void sluice_throw_io_msg(JNIEnv *env, const char *message) {
    if ((*env)->ExceptionCheck(env)) {
        return; /* keep the first failure */
    }
    jclass cls = (*env)->FindClass(env, "java/io/IOException");
    if (cls != NULL) {
        (*env)->ThrowNew(env, cls, message);
    }
}

void sluice_throw_io(JNIEnv *env, const char *what, int err) {
    char message[256];
    char reason[128];
    /* GNU strerror_r may return a static string instead of filling the buffer. */
    const char *text = strerror_r(err, reason, sizeof reason);
    snprintf(message, sizeof message, "%s failed: %s (errno %d)", what, text, err);
    sluice_throw_io_msg(env, message);
}
