/*===- check.h - the C API tests' CHECK ------------------------------------===*
 *
 * CHECK(cond, fmt, ...) counts a passed or failed check in the including
 * file's `passed` / `failed` and prints a failure with its line and the
 * runtime's last error.
 *
 *===----------------------------------------------------------------------===*/
#ifndef KILN_TEST_E2E_CHECK_H
#define KILN_TEST_E2E_CHECK_H

#include "kiln/kiln.h"

#include <stdio.h>

#define CHECK(cond, ...)                                                       \
  do {                                                                         \
    if (cond) {                                                                \
      ++passed;                                                                \
    } else {                                                                   \
      ++failed;                                                                \
      printf("FAIL %s:%d: ", __FILE__, __LINE__);                              \
      printf(__VA_ARGS__);                                                     \
      printf(" (%s)\n", kiln_last_error());                                    \
    }                                                                          \
  } while (0)

#endif
