/*===- cuda_descriptor_test.c - a CUDA artifact's device code, validated -----===*
 *
 * usage: cuda-descriptor-test MODEL.so (a CUDA artifact with kernels and PTX)
 *
 * Copies the artifact's descriptor and breaks its GPU code one way at a
 * time: each copy must be refused by kiln_model_from_abi with a message
 * (the runtime checks it when the model is loaded, before any driver sees
 * it; docs/Security.md). No driver is needed. Ends with "N passed, N
 * failed".
 *
 *===----------------------------------------------------------------------===*/
#include "check.h"
#include "kiln/kiln.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: cuda-descriptor-test MODEL.so\n");
    return 2;
  }
  const char *model_path = argv[1];
  void *library = dlopen(model_path, RTLD_NOW | RTLD_LOCAL);
  const kiln_model_v1 *original = library ? dlsym(library, "kiln_model_descriptor") : NULL;
  CHECK(original && original->gpu && original->gpu->num_kernels, "a CUDA artifact with kernels");
  if (!original || !original->gpu || !original->gpu->num_kernels) {
    printf("cuda-descriptor-test: %d passed, %d failed\n", passed, failed);
    return 1;
  }
  const kiln_gpu_code *gpu = original->gpu;
  kiln_model_v1 abi = *original;
  kiln_gpu_code code = *gpu;
  abi.gpu = &code;
  kiln_model *model = NULL;
  CHECK(kiln_model_from_abi(&abi, &model) == KILN_OK, "the copied descriptor loads as it is");
  kiln_model_free(model);
  model = NULL;

  /* Its PTX with the NUL the driver reads up to overwritten. */
  kiln_gpu_binary binaries[8];
  uint32_t ptx = gpu->num_binaries;
  for (uint32_t i = 0; i < gpu->num_binaries && i < 8; ++i) {
    binaries[i] = gpu->binaries[i];
    if (binaries[i].format == KILN_GPU_PTX)
      ptx = i;
  }
  CHECK(ptx < gpu->num_binaries && ptx < 8, "the artifact carries PTX");
  if (ptx < gpu->num_binaries && ptx < 8) {
    char *text = malloc(binaries[ptx].size);
    memcpy(text, binaries[ptx].data, binaries[ptx].size);
    text[binaries[ptx].size - 1] = ' ';
    binaries[ptx].data = text;
    code.binaries = binaries;
    CHECK(kiln_model_from_abi(&abi, &model) != KILN_OK &&
              strstr(kiln_last_error(), "PTX without its terminating NUL"),
          "PTX without its NUL is refused");
    kiln_model_free(model);
    model = NULL;
    code.binaries = gpu->binaries;
    free(text);
  }
  /* A kernel without a name. */
  const char **names = calloc(gpu->num_kernels, sizeof *names);
  memcpy(names, gpu->kernels, gpu->num_kernels * sizeof *names);
  names[gpu->num_kernels - 1] = NULL;
  code.kernels = names;
  CHECK(kiln_model_from_abi(&abi, &model) != KILN_OK &&
            strstr(kiln_last_error(), "has no name"),
        "a kernel without a name is refused");
  kiln_model_free(model);
  free(names);
  printf("cuda-descriptor-test: %d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
