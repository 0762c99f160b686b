/*===- cublaslt_descriptor_test.c - Kiln's cuBLASLt plans against the real one ===*
 *
 * usage: cublaslt-descriptor-test [ARTIFACT.so...]
 *
 * The runtime describes each matmul call to cuBLASLt (runtime/src/devices/
 * cublaslt.c): a matmul descriptor (transposes, epilogue, bias pointer),
 * the layouts of A, B and D, and a preference (workspace, the pointers'
 * alignment). cuBLASLt creates and checks those without a GPU (each
 * attribute's value must have the size the library expects; only the
 * handle and the heuristic need one), so this runs the runtime's own code
 * against the installed cuBLASLt: every entry point the runtime resolves
 * exists; a synthetic call of every shape kind the compiler hands it
 * (rank 2 to 4, a matrix or a batched rhs, each operand read transposed
 * or not) with every epilogue (bias, residual, ReLU, tanh-GELU) is
 * accepted at batch 1 and 8 and pointers of 64 and 4 bytes' alignment;
 * and so is every matmul call of the CUDA artifacts named (the reference
 * models). The heuristic's choice and the numbers are checked on a GPU
 * (test/gpu/run.sh) and, on host memory, against the stand-in
 * (cuda-device-libraries); the constants and signatures the runtime
 * declares, against the toolkit's headers (vendor-abi). Skipped, saying
 * so, when cuBLASLt is not installed. Ends with `N passed, N failed`.
 *
 *===----------------------------------------------------------------------===*/
#include "cublaslt.h"
#include "cuda_session.h"
#include "library_checks.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Describes `call` at `batch` (its dims -1 there) with pointers of
 * `alignment` bytes; 1 if cuBLASLt accepts it. */
static int accepted(const kiln_library_call *call, int64_t batch, uint32_t alignment, char *why,
                    size_t why_bytes) {
  call_dims at;
  dims_at_batch(call, batch, &at);
  return kiln_cublaslt_describe(call, at.rows, alignment, KILN_CUDA_WORKSPACE_BYTES, why,
                                why_bytes) == 0;
}

static int accepted_at_batch_1(void *unused, const kiln_library_call *call, char *why,
                               size_t why_bytes) {
  (void)unused;
  return accepted(call, 1, 64, why, why_bytes);
}

int main(int argc, char **argv) {
  const char *chosen = getenv("KILN_CUBLASLT_LIBRARY");
  void *library = dlopen(chosen && *chosen ? chosen : "libcublasLt.so.13", RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    printf("SKIPPED: cuBLASLt is not installed here (%s)\n0 passed, 0 failed\n", dlerror());
    return 0;
  }
  /* A linear layer: x [n, 64] . W [64, 32] + b, ReLU; loading a model of
   * it makes the runtime load cuBLASLt and resolve its entry points. */
  int32_t ranks2[3] = {2, 2, 2};
  int64_t x[2] = {-1, 64}, w[2] = {64, 32}, y[2] = {-1, 32};
  const int64_t *linear_dims[3] = {x, w, y};
  kiln_library_call linear = {.kind = KILN_LIBRARY_MATMUL, .num_operands = 3,
                              .operand_ranks = ranks2, .operand_dims = linear_dims};
  linear.epilogue = (kiln_library_epilogue){1, 0, KILN_ACTIVATION_RELU, 0.0f, 0.0f};
  if (!check_runtime_loads(kiln_cublaslt_check, &linear,
                           "cuBLASLt loads and has every entry point the runtime resolves")) {
    printf("%d passed, %d failed\n", passed, failed);
    return 1;
  }

  /* Synthetic calls: lhs [b.., m, k] (or [.., k, m] read transposed), rhs
   * [k, n] or [b.., k, n] (or its last two swapped), out [b.., m, n]; m
   * 5, k 24, n 7 (odd: leading dims of any alignment). */
  static const int32_t activations[] = {KILN_ACTIVATION_NONE, KILN_ACTIVATION_RELU,
                                        KILN_ACTIVATION_GELU_TANH};
  static const uint32_t alignments[] = {64, 4};
  int tried = 0, ok = 0;
  char why[320], first[480] = "";
  for (int32_t rank = 2; rank <= 4; ++rank)
    for (int rhs_batched = 0; rhs_batched < 2; ++rhs_batched)
      for (int tl = 0; tl < 2; ++tl)
        for (int tr = 0; tr < 2; ++tr) {
          if (rank == 2 && rhs_batched)
            continue; /* the same call */
          if (tl && rank > 2 && !rhs_batched)
            continue; /* the compiler reads a batched lhs transposed only over a batch */
          int32_t ranks[3] = {rank, rhs_batched ? rank : 2, rank};
          int64_t lhs[4], rhs[4], out[4];
          int32_t lead = rank - 2;
          for (int32_t d = 0; d < lead; ++d)
            lhs[d] = rhs[d] = out[d] = d == 0 ? -1 : 3;
          int32_t r = rhs_batched ? lead : 0;
          lhs[lead] = tl ? 24 : 5, lhs[lead + 1] = tl ? 5 : 24;
          rhs[r] = tr ? 7 : 24, rhs[r + 1] = tr ? 24 : 7;
          out[lead] = 5, out[lead + 1] = 7;
          const int64_t *dims[3] = {lhs, rhs, out};
          int64_t params[2] = {tl, tr};
          for (size_t a = 0; a < sizeof activations / sizeof *activations; ++a)
            for (int bias = 0; bias < 2; ++bias)
              for (int residual = 0; residual < 2; ++residual)
                for (int64_t batch = 1; batch <= 8; batch += 7)
                  for (size_t al = 0; al < sizeof alignments / sizeof *alignments; ++al) {
                    kiln_library_call call = {.kind = KILN_LIBRARY_MATMUL, .num_operands = 3,
                                              .operand_ranks = ranks, .operand_dims = dims,
                                              .num_params = 2, .params = params};
                    call.epilogue =
                        (kiln_library_epilogue){bias, residual, activations[a], 0.0f, 0.0f};
                    ++tried;
                    if (accepted(&call, batch, alignments[al], why, sizeof why))
                      ++ok;
                    else if (!first[0])
                      snprintf(first, sizeof first,
                               "rank %d, rhs batched %d, transposed %d %d, activation %d, "
                               "bias %d, residual %d, batch %lld, alignment %u: %s",
                               rank, rhs_batched, tl, tr, activations[a], bias, residual,
                               (long long)batch, alignments[al], why);
                  }
        }
  char what[200];
  snprintf(what, sizeof what,
           "%d synthetic matmuls (ranks 2-4, transposes, every epilogue, batch 1 and 8, "
           "alignment 64 and 4) accepted",
           tried);
  check(tried > 0 && ok == tried, what, first);

  for (int i = 1; i < argc; ++i)
    check_artifact_calls(argv[i], KILN_LIBRARY_MATMUL, "matmul", accepted_at_batch_1, NULL);
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
