#!/bin/sh
# conv_post_ops_test.sh KILN MODELS_DIR WORK_DIR
# resnet18 compiled the other ways the CPU backend offers: convolution
# epilogues generated after each oneDNN call (--conv-post-ops=0) and every
# convolution in channels-first buffers (--conv-layout=nchw), plain weights
# packed by the runtime (--prepack=0); the default
# (post-ops, channels-last between convolutions) is what compile_and_run.sh
# checks. Each matches torch at batch 1 and 8. Prints "N passed, N failed".
. "$(dirname "$0")/common.sh" # kiln, models, work from the arguments
model=resnet18
# The default: post-ops, and only the edges to generated code reorder.
"$kiln" inspect "$models/$model.so" --kernels > "$work/default.txt"
fused=$(grep -c "oneDNN conv+bias+residual+relu" "$work/default.txt")
reorders=$(grep -c "reorders" "$work/default.txt")
calls=$(grep -c "oneDNN conv" "$work/default.txt")
prepacked=$(sed -n 's/^weights: \([0-9]*\) prepacked.*/\1/p' "$work/default.txt")
if [ "$fused" -gt 0 ] && [ "$reorders" -gt 0 ] && [ "$reorders" -lt "$calls" ] &&
   [ "${prepacked:-0}" -gt 0 ]; then
  pass "default: $fused convolutions with the residual sum and relu as post-ops; $reorders of $calls reorder; $prepacked with prepacked weights"
else
  fail "default: $fused fused, $reorders of $calls convolutions reorder"; cat "$work/default.txt"
fi
# Limited to AVX2 (as on a processor without AVX-512), oneDNN 2.6 has no
# fast kernel for the stem convolution's 3 channels read channels-last; the
# runtime then lets oneDNN choose that convolution's layouts instead of
# running its reference kernel (about 100x slower: 586 ms of resnet18's
# 640). No convolution may run in a reference kernel, and the results hold.
mkdir -p "$work/avx2"
export DNNL_MAX_CPU_ISA=AVX2
if DNNL_VERBOSE=1 "$kiln" run "$models/$model.so" --input "input=$models/$model.input.npy" \
     > "$work/avx2/verbose.txt" 2>&1; then
  slow=$(grep -c "^onednn_verbose,exec,cpu,convolution,ref" "$work/avx2/verbose.txt")
  convs=$(grep -c "^onednn_verbose,exec,cpu,convolution," "$work/avx2/verbose.txt")
  [ "$convs" -gt 0 ] && [ "$slow" -eq 0 ] &&
    pass "AVX2: none of $convs convolutions in oneDNN's reference kernel" ||
    { fail "AVX2: $slow of $convs convolutions in oneDNN's reference kernel";
      grep "convolution,ref" "$work/avx2/verbose.txt" | head -3; }
else
  fail "AVX2: run"; tail -5 "$work/avx2/verbose.txt"
fi
run_batches "$kiln" "$models/$model.so" "$models" "$model" "$work/avx2"
unset DNNL_MAX_CPU_ISA
# Winograd's algorithm (runtime/src/devices/onednn_primitives.c): resnet18's
# 7 3x3 stride-1 convolutions of at most 128 channels on images of 14x14 or
# more run by it at batch 8 where oneDNN has the kernel (AVX-512), their
# weights prepacked for the direct kernel unpacked first; none at batch 1,
# which keeps the prepacked weights as they are, and none with
# KILN_ONEDNN_WINOGRAD=0.
# The numbers of both batches: run_batches above (AVX2) and
# models-compile-run (the host's ISA); --prepack=0 below packs them from
# plain weights.
for case in 1 8 8-refused; do
  suffix=$([ "$case" = 1 ] && echo "" || echo 8)
  allow=$([ "$case" = 8-refused ] && echo 0 || echo 1)
  KILN_ONEDNN_WINOGRAD=$allow DNNL_VERBOSE=1 "$kiln" run "$models/$model.so" \
    --input "input=$models/$model.input$suffix.npy" > "$work/winograd$case.txt" 2>&1 ||
    { fail "Winograd: run at batch $case"; continue; }
  wino=$(grep -c "^onednn_verbose,exec,cpu,convolution,[a-z_0-9]*wino" "$work/winograd$case.txt")
  isa=$(sed -n 's/^onednn_verbose,info,cpu,isa://p' "$work/winograd$case.txt")
  want=0
  case $isa in *AVX-512*) [ "$case" = 8 ] && want=7 ;; esac
  what="batch $case (KILN_ONEDNN_WINOGRAD=$allow; $isa)"
  if [ "$wino" = "$want" ]; then
    pass "Winograd at $what: $wino convolutions"
  else
    fail "Winograd at $what: $wino convolutions, want $want"
  fi
  # kiln bench --per-kernel names the implementation that ran each call
  # (kiln_session_library_call_info): the same convolutions by Winograd's.
  batch=$([ "$case" = 1 ] && echo 1 || echo 8)
  KILN_ONEDNN_WINOGRAD=$allow "$kiln" bench "$models/$model.so" --batch $batch --runs 1 \
    --per-kernel=100 > "$work/bench$case.txt" 2>&1 || { fail "bench at batch $case"; continue; }
  listed=$(grep -c "oneDNN conv.*\[jit_[a-z_0-9]*wino" "$work/bench$case.txt")
  named=$(grep -c "oneDNN conv.*\[[a-z_0-9]*:[a-z_0-9]*\]" "$work/bench$case.txt")
  if [ "$listed" = "$want" ] && [ "$named" = 20 ]; then
    pass "kiln bench --per-kernel at $what: 20 convolutions named, $listed by Winograd"
  else
    fail "kiln bench --per-kernel at $what: $named of 20 convolutions named," \
      "$listed by Winograd, want $want"
    cat "$work/bench$case.txt"
  fi
  case $isa in
  *AVX-512*) ;;
  *) echo "(the host has no AVX-512: oneDNN has no Winograd kernel, none may run)" ;;
  esac
done
for flags in --conv-post-ops=0 --conv-layout=nchw --prepack=0; do
  name=$(echo "$flags" | tr -c 'a-z0-9\n' '_')
  mkdir -p "$work/$name"
  if "$kiln" compile "$models/$model.onnx" -o "$work/$name/$model.so" $flags > "$work/$name/compile.txt" 2>&1; then
    "$kiln" inspect "$work/$name/$model.so" --kernels > "$work/$name/kernels.txt"
    case $flags in
    --conv-post-ops=0)
      generated=$(grep -c "oneDNN conv [(<]" "$work/$name/kernels.txt")
      [ "$generated" -gt 0 ] && pass "$flags: $generated bare convolutions" ||
        { fail "$flags: the epilogues stayed in oneDNN"; cat "$work/$name/kernels.txt"; } ;;
    --prepack=0)
      # Plain weights: other bytes than the default's prepacked ones.
      if cmp -s "$models/$model.so" "$work/$name/$model.so" ||
         ! grep -q "^weights: 0 prepacked" "$work/$name/kernels.txt"; then
        fail "$flags: weights still prepacked"; grep "^weights" "$work/$name/kernels.txt"
      else
        pass "$flags: plain weights, packed when the session is created"
      fi ;;
    --conv-layout=nchw)
      reorders=$(grep -c "reorders" "$work/$name/kernels.txt")
      [ "$reorders" -eq 0 ] && pass "$flags: no layout assigned" ||
        { fail "$flags: $reorders calls have a layout"; cat "$work/$name/kernels.txt"; } ;;
    esac
    run_batches "$kiln" "$work/$name/$model.so" "$models" "$model" "$work/$name"
  else
    fail "$flags: compile"; cat "$work/$name/compile.txt"
  fi
done
summary
