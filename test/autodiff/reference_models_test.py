"""The reference models' training steps: every op on their gradient paths has a rule.

reference_models_test.py KILN MODELS_DIR WORK_DIR   (python with the `kiln` module)
resnet18, mobilenet_v2 and squeezenet1_1 (cross-entropy) and the BERT-style encoder (mse
on its output), as exported into the build tree by models-compile-run,
compiled with `kiln compile --train` at batch 2 and run for 3 steps of
SGD with momentum on random data: each step's loss is finite, a gradient
reaches every parameter the step trains (its momentum buffer, the sum of
its gradients, is not all zero: in a deep model with random weights the
update itself can be below float32's resolution of the weight), the
session allocates nothing from the
heap after its first step, and the artifact's inference entry runs on the
trained parameters. (Each rule's numerics: autodiff-gradient-rules; whole
models against PyTorch: autodiff-training-steps.) Prints one line per
model and "N passed, N failed".
"""
import os
import subprocess
import sys

import numpy as np

import kiln

KILN, MODELS, WORK = sys.argv[1:4]
os.makedirs(WORK, exist_ok=True)
BATCH, STEPS = 2, 3
MODELS_TO_TRAIN = [("resnet18", "cross-entropy"), ("mobilenet_v2", "cross-entropy"),
                   ("squeezenet1_1", "cross-entropy"),
                   ("bert_encoder", "mse")]


def random_input(rng, dtype, dims):
    dims = tuple(BATCH if d is None else d for d in dims)
    if dtype == "int64":
        return rng.integers(0, 100, dims).astype(np.int64)
    return rng.standard_normal(dims).astype(np.float32)


passed = failed = 0
for name, loss in MODELS_TO_TRAIN:
    artifact = os.path.join(WORK, f"{name}-train.so")
    p = subprocess.run([KILN, "compile", os.path.join(MODELS, f"{name}.onnx"), "-o", artifact,
                        "--train", f"--loss={loss}", f"--train-batch={BATCH}",
                        "--optimizer=sgd(lr=0.01,momentum=0.9)"], capture_output=True, text=True)
    if p.returncode != 0:
        failed += 1
        print(f"FAIL {name}: kiln compile --train: {(p.stdout + p.stderr)[-600:]}")
        continue
    model = kiln.load(artifact)
    session = model.session(threads=2)
    rng = np.random.default_rng(0)
    feeds = {n: random_input(rng, dtype, dims) for n, dtype, dims in model.inputs}
    trained = [n for n, dtype, dims in model.parameters
               if not n.endswith((".momentum", "running_mean", "running_var"))]
    problems, losses, heap = [], [], []
    for step in range(STEPS):
        losses.append(float(session.run(feeds)["loss"]))
        heap.append(session.memory_stats()["heap_allocations"])
    if not all(np.isfinite(losses)):
        problems.append(f"losses {losses}")
    no_gradient = [n for n in trained if not np.any(session.parameter(n + ".momentum"))]
    if no_gradient:
        problems.append(f"no gradient reached {len(no_gradient)} of {len(trained)} parameters "
                        f"({no_gradient[:3]})")
    if heap[-1] != heap[0]:
        problems.append(f"heap allocations after the first step: {heap}")
    infer = session.inference()
    inputs = {n: random_input(rng, dtype, dims) for n, dtype, dims in infer.model.inputs}
    out = next(iter(infer.run(inputs).values()))
    if not np.all(np.isfinite(out)):
        problems.append("the inference entry gave non-finite outputs")
    if problems:
        failed += 1
        print(f"FAIL {name}: " + "; ".join(problems))
    else:
        passed += 1
        print(f"ok {name}: a gradient reaches all {len(trained)} parameters, losses "
              + ", ".join(f"{l:.4f}" for l in losses)
              + f"; heap blocks {heap[0]} after the first step, none after")
print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
