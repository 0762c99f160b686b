/*===- vendor_load.h - opening a vendor library with dlopen ------------------===*
 *
 * What the CUDA device's libraries share (the driver, cuBLASLt, cuDNN):
 * open the file an environment variable names or the first of the usual
 * names that loads, then resolve a table of entry points, with an error
 * that names the library and what is missing.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_RUNTIME_DEVICES_VENDOR_LOAD_H
#define KILN_RUNTIME_DEVICES_VENDOR_LOAD_H

#include <stddef.h>

/* Opens `what` (for messages: "cuBLASLt"): the file `$variable` names if it
 * is set, else the first of `names` that loads. On success returns the
 * handle and sets `*file` to the file opened; else NULL with `error` set
 * ("cuBLASLt (libcublasLt.so.13) cannot be loaded: <dlerror>; <hint>"). */
void *kiln_vendor_open(const char *what, const char *variable, const char *const *names,
                       size_t num_names, const char *hint, const char **file, char *error,
                       size_t error_bytes);

/* Resolves `symbols[i]` into slot i of `table` (a struct of `count`
 * function pointers, in that order); 0, or -1 with `error` naming the
 * first one missing. */
int kiln_vendor_resolve(void *handle, const char *what, const char *file,
                        const char *const *symbols, void *table, size_t count, char *error,
                        size_t error_bytes);

#endif
