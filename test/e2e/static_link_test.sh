#!/bin/sh
# static_link_test.sh KILN MODEL.onnx RUNTIME_INCLUDE RUNTIME_LIB_DIR WORK
# Compiles a model to a static library (.a) and an object (.o), links the
# .a into a C program with the model's generated header and runs it.
set -e
kiln=$1; model=$2; include=$3; libdir=$4; work=$5
mkdir -p "$work"
"$kiln" compile "$model" -o "$work/model.a" > /dev/null
"$kiln" compile "$model" -o "$work/model.o" > /dev/null
nm "$work/model.o" | grep -q "D kiln_model_descriptor"
cat > "$work/main.c" <<'C'
#include "kiln/kiln.h"
#include "model.h"
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  kiln_model *m;
  if (kiln_model_from_abi(&kiln_model_descriptor, &m) != KILN_OK) {
    printf("FAIL: %s\n", kiln_last_error());
    return 1;
  }
  const kiln_model_tensor *d = kiln_model_input(m, 0);
  kiln_tensor in = {0};
  in.dtype = d->dtype;
  in.rank = d->rank;
  size_t n = 1;
  for (int i = 0; i < d->rank; ++i) {
    in.dims[i] = d->dims[i] < 0 ? 1 : d->dims[i];
    n *= (size_t)in.dims[i];
  }
  in.data = calloc(n, kiln_dtype_size(d->dtype));
  kiln_session *s;
  if (kiln_session_create(m, &s) != KILN_OK || kiln_session_run(s, &in, 1) != KILN_OK) {
    printf("FAIL: %s\n", kiln_last_error());
    return 1;
  }
  kiln_tensor out;
  kiln_session_output(s, 0, &out);
  printf("PASS: the statically linked model ran (output rank %d)\n", out.rank);
  kiln_session_free(s);
  kiln_model_free(m);
  free(in.data);
  return 0;
}
C
cc "$work/main.c" -I "$include" -I "$work" "$work/model.a" -L "$libdir" -lkiln_runtime -lm \
  -Wl,-rpath,"$libdir" -o "$work/main"
"$work/main"
