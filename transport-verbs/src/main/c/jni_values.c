/* Small JNI value helpers shared by the entry points. */
#include "disni_abi.h"

jintArray sluice_int_array(JNIEnv *env, const jint *values, jsize count) {
    jintArray result = (*env)->NewIntArray(env, count);
    if (result != NULL) {
        (*env)->SetIntArrayRegion(env, result, 0, count, values);
    }
    return result;
}
