/* checkpoint.c - fuzz the runtime's checkpoint reader (kiln_checkpoint_open).
 *
 * A checkpoint (kiln_session_save_state) is a file a service may be handed:
 * the input is written to a file in memory and opened; when accepted,
 * every tensor is read (names, dims, every byte of its data) so that a
 * sanitizer sees an out-of-bounds view. A refusal is fine; a crash, a hang
 * or a sanitizer report is a finding. */
#define _GNU_SOURCE
#include "kiln/kiln.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  int fd = memfd_create("kiln-fuzz-checkpoint", MFD_CLOEXEC);
  if (fd < 0)
    return 0;
  size_t written = 0;
  while (written < size) {
    ssize_t n = write(fd, data + written, size - written);
    if (n <= 0)
      break;
    written += (size_t)n;
  }
  char path[64];
  snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
  kiln_checkpoint *checkpoint = NULL;
  if (written == size && kiln_checkpoint_open(path, &checkpoint) == KILN_OK) {
    volatile uint8_t sink = 0;
    for (uint32_t i = 0; i < kiln_checkpoint_count(checkpoint); ++i) {
      const char *name;
      kiln_tensor t;
      if (kiln_checkpoint_tensor(checkpoint, i, &name, &t) != KILN_OK)
        continue;
      sink ^= (uint8_t)strlen(name);
      size_t bytes = kiln_dtype_size(t.dtype);
      for (int32_t d = 0; d < t.rank; ++d)
        bytes *= (size_t)t.dims[d];
      for (size_t b = 0; b < bytes; ++b)
        sink ^= ((const uint8_t *)t.data)[b];
    }
    (void)sink;
    kiln_checkpoint_free(checkpoint);
  }
  close(fd);
  return 0;
}
