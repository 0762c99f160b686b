/* huge_pages_test.c MODEL.so BATCH
 * The runtime's large host buffers (the pool's blocks for a batch's
 * activations, weights packed at session creation) ask the kernel for
 * transparent huge pages (madvise: VmFlags "hg" in /proc/self/smaps),
 * unless KILN_HUGE_PAGES=0. Runs MODEL once at BATCH (inputs.h's) and counts
 * the mappings so advised: at least one by default, none with
 * KILN_HUGE_PAGES=0. Whether the kernel then backs them with huge pages
 * (AnonHugePages) depends on its memory and settings: printed, not
 * checked. A kernel without transparent huge pages skips, saying so.
 * Prints "N passed, N failed". */
#include "check.h"
#include "inputs.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;

/* Mappings of this process advised for huge pages, their size and the
 * huge pages backing them, in KiB. */
static void advised(int *mappings, long *size_kb, long *huge_kb) {
  *mappings = 0, *size_kb = 0, *huge_kb = 0;
  FILE *f = fopen("/proc/self/smaps", "r");
  if (!f)
    return;
  char line[512];
  long size = 0, huge = 0;
  while (fgets(line, sizeof line, f)) {
    if (sscanf(line, "Size: %ld kB", &size) == 1 ||
        sscanf(line, "AnonHugePages: %ld kB", &huge) == 1)
      continue;
    if (strncmp(line, "VmFlags:", 8) == 0 && strstr(line, " hg")) {
      ++*mappings;
      *size_kb += size;
      *huge_kb += huge;
    }
  }
  fclose(f);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s MODEL.so BATCH\n", argv[0]);
    return 2;
  }
  if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
    printf("SKIP: this kernel has no transparent huge pages "
           "(/sys/kernel/mm/transparent_hugepage)\n0 passed, 0 failed\n");
    return 0;
  }
  const char *env = getenv("KILN_HUGE_PAGES");
  int wanted = !(env && strcmp(env, "0") == 0);
  kiln_model *model = NULL;
  kiln_session *session = NULL;
  CHECK(kiln_model_load(argv[1], &model) == KILN_OK, "loading %s", argv[1]);
  if (model && kiln_session_create(model, &session) != KILN_OK)
    CHECK(0, "creating a session");
  if (session) {
    kiln_tensor inputs[MAX_TEST_INPUTS], out;
    uint32_t n = make_inputs(model, atol(argv[2]), inputs);
    CHECK(n > 0 && kiln_session_run(session, inputs, n) == KILN_OK &&
              kiln_session_output(session, 0, &out) == KILN_OK,
          "running at batch %s", argv[2]);
    int mappings;
    long size_kb, huge_kb;
    advised(&mappings, &size_kb, &huge_kb);
    printf("KILN_HUGE_PAGES %s: %d mappings advised for huge pages, %ld KiB, %ld KiB of them on "
           "huge pages\n",
           env ? env : "(unset)", mappings, size_kb, huge_kb);
    if (wanted)
      CHECK(mappings >= 1, "the session's large buffers are advised for huge pages");
    else
      CHECK(mappings == 0, "KILN_HUGE_PAGES=0: no mapping is advised for huge pages");
    free_inputs(inputs, n);
    kiln_session_free(session);
  }
  kiln_model_free(model);
  printf("%d passed, %d failed\n", passed, failed);
  return failed != 0;
}
