/*===- vendor_load.c - opening a vendor library with dlopen ------------------===*/
#include "vendor_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *kiln_vendor_open(const char *what, const char *variable, const char *const *names,
                       size_t num_names, const char *hint, const char **file, char *error,
                       size_t error_bytes) {
  const char *chosen = variable ? getenv(variable) : NULL;
  void *handle = NULL;
  const char *tried = num_names ? names[0] : "";
  if (chosen && *chosen) {
    tried = chosen;
    handle = dlopen(chosen, RTLD_NOW | RTLD_LOCAL);
  } else {
    for (size_t i = 0; i < num_names && !handle; ++i)
      handle = dlopen(tried = names[i], RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      tried = names[0];
  }
  if (!handle) {
    snprintf(error, error_bytes, "%s (%s) cannot be loaded: %s%s%s", what, tried, dlerror(),
             hint ? "; " : "", hint ? hint : "");
    return NULL;
  }
  *file = tried;
  return handle;
}

int kiln_vendor_resolve(void *handle, const char *what, const char *file,
                        const char *const *symbols, void *table, size_t count, char *error,
                        size_t error_bytes) {
  for (size_t i = 0; i < count; ++i) {
    void *entry = dlsym(handle, symbols[i]);
    if (!entry) {
      snprintf(error, error_bytes, "%s (%s) has no %s", what, file, symbols[i]);
      return -1;
    }
    /* A function pointer a slot (POSIX: dlsym's result converts). */
    memcpy((char *)table + i * sizeof(void (*)(void)), &entry, sizeof entry);
  }
  return 0;
}
