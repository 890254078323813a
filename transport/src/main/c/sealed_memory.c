/*
 * Sealed shared memory for io.sluice.transport.shm.SealedMemory: an arena region is a memfd whose
 * size is sealed (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL), so no process, the owner included,
 * can cut it short under a reader's mapping; writes stay allowed. Readers reopen it through
 * /proc/<owner pid>/fd/<n> and check its seals here before they map it.
 *
 * Every call returns a descriptor, a count or 0 on success and -errno on failure; errorText turns
 * the number into words. No state is kept.
 */
#include <errno.h>
#include <fcntl.h>
#include <jni.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define JNI_EXPORT __attribute__((visibility("default")))

/* The seals a region carries: its size can change no more, nor can its seals. */
#define REGION_SEALS (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)

JNI_EXPORT jint JNICALL Java_io_sluice_transport_shm_SealedMemory_create0(JNIEnv *env, jclass cls, jstring name,
                                                                        jlong length) {
  (void) cls;
  if (length < 0) {
    return -EINVAL;
  }
  const char *text = (*env)->GetStringUTFChars(env, name, NULL);
  if (text == NULL) {
    return -ENOMEM;
  }
  int fd = memfd_create(text, MFD_CLOEXEC | MFD_ALLOW_SEALING);
  int error = fd < 0 ? errno : 0;
  (*env)->ReleaseStringUTFChars(env, name, text);
  if (fd < 0) {
    return -error;
  }
  /* fallocate gives every page now: a memory limit reached here fails the allocation, where pages
     given on first touch would fault in the writer. */
  if (ftruncate(fd, (off_t) length) != 0 || (length > 0 && fallocate(fd, 0, 0, (off_t) length) != 0)
      || fcntl(fd, F_ADD_SEALS, REGION_SEALS) != 0) {
    error = errno;
    close(fd);
    return -error;
  }
  return fd;
}

/* Opens a path for reading, following links (a /proc/<pid>/fd/<n> entry is one); O_NONBLOCK so that
   a FIFO in its place cannot block the caller. The caller checks what it opened. */
JNI_EXPORT jint JNICALL Java_io_sluice_transport_shm_SealedMemory_openForReading0(JNIEnv *env, jclass cls,
                                                                                jstring path) {
  (void) cls;
  const char *text = (*env)->GetStringUTFChars(env, path, NULL);
  if (text == NULL) {
    return -ENOMEM;
  }
  int fd = open(text, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  int error = fd < 0 ? errno : 0;
  (*env)->ReleaseStringUTFChars(env, path, text);
  if (fd < 0) {
    return -error;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    error = errno;
    close(fd);
    return -error;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return -EINVAL;
  }
  return fd;
}

JNI_EXPORT jint JNICALL Java_io_sluice_transport_shm_SealedMemory_seals0(JNIEnv *env, jclass cls, jint fd) {
  (void) env;
  (void) cls;
  int seals = fcntl(fd, F_GET_SEALS);
  return seals < 0 ? -errno : seals;
}

JNI_EXPORT jint JNICALL Java_io_sluice_transport_shm_SealedMemory_close0(JNIEnv *env, jclass cls, jint fd) {
  (void) env;
  (void) cls;
  return close(fd) == 0 ? 0 : -errno;
}

JNI_EXPORT jstring JNICALL Java_io_sluice_transport_shm_SealedMemory_errorText(JNIEnv *env, jclass cls, jint error) {
  (void) cls;
  char text[128];
  return (*env)->NewStringUTF(env, strerror_r(error, text, sizeof text)); /* the GNU strerror_r */
}
