/*===- onednn_load.c - loading oneDNN on first use --------------------------===*
 *
 * dlopen of libdnnl.so.2 (or the file KILN_ONEDNN_LIBRARY names) the first
 * time a model needs it, and every function of onednn_api.h resolved into
 * the table; a missing library or function is an error naming it.
 *
 *===----------------------------------------------------------------------===*/

#include "onednn.h"
#include "onednn_api.h"
#include "device.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

kiln_onednn_table kiln_onednn;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512];

static void load_onednn(void) {
  const char *file = getenv("KILN_ONEDNN_LIBRARY");
  if (!file || !*file)
    file = "libdnnl.so.2";
  void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    snprintf(load_error, sizeof load_error, "oneDNN (%s) cannot be loaded: %s", file, dlerror());
    return;
  }
#define KILN_ONEDNN_RESOLVE(name)                                                           \
  if (!load_error[0] &&                                                                     \
      !(kiln_onednn.p_##name = (__typeof__(kiln_onednn.p_##name))dlsym(library, #name)))     \
    snprintf(load_error, sizeof load_error, "oneDNN (%s) has no %s: a version other than 2.x?", \
             file, #name);
  KILN_ONEDNN_FUNCTIONS(KILN_ONEDNN_RESOLVE)
#undef KILN_ONEDNN_RESOLVE
}

kiln_status kiln_onednn_load(const char *what) {
  pthread_once(&load_once, load_onednn);
  if (load_error[0])
    return kiln_fail(KILN_ERROR_LOAD, "%s needs %s", what, load_error);
  return KILN_OK;
}
