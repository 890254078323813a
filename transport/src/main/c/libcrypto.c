/* See libcrypto.h. */
#include "libcrypto.h"

#include <stddef.h>

void *sluice_open_libcrypto(void) {
  static const char *names[] = {"libcrypto.so.3", "libcrypto.so.1.1", "libcrypto.so"};
  void *lib = NULL;
  for (size_t i = 0; i < sizeof names / sizeof names[0] && lib == NULL; i++) {
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
  }
  return lib;
}
