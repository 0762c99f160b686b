"""`make train-demo`: a small CNN trained on scikit-learn's digits by a step Kiln compiled.

train_digits.py KILN WORK_DIR      (python with the `kiln` module, torch, onnx, sklearn)
The CNN (conv-relu-pool x2, linear; PyTorch's initialisation, seed 0) is
exported to ONNX with a batch of 50 and compiled by `kiln compile --train
--optimizer=adam(lr=0.003)`; 25 epochs over 1,500 images (a fixed shuffled
split; the order shuffled each epoch) run the compiled step, printing the loss curve. The trained
parameters go back into the ONNX model (kiln.export_weights), which `kiln
compile` compiles for inference to classify the 297 held-out images.
Exits 1 below 95% accuracy.
"""
import os
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits

import kiln

KILN, WORK = sys.argv[1:3]
os.makedirs(WORK, exist_ok=True)
BATCH, EPOCHS = 50, 25

digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)[:, None]  # [1797, 1, 8, 8]
labels = digits.target.astype(np.int64)
# A fixed shuffled split (as sklearn's train_test_split): 1,500 to train on,
# 297 held out.
split = np.random.default_rng(0).permutation(len(images))
train_x, train_y = images[split[:1500]], labels[split[:1500]]
test_x, test_y = images[split[1500:]], labels[split[1500:]]

torch.manual_seed(0)
model = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(32 * 2 * 2, 10))
onnx_path = os.path.join(WORK, "cnn.onnx")
torch.onnx.export(model, torch.zeros(BATCH, 1, 8, 8), onnx_path, input_names=["image"],
                  output_names=["logits"], opset_version=17, do_constant_folding=False)
step_path = os.path.join(WORK, "cnn-train.so")
subprocess.run([KILN, "compile", onnx_path, "-o", step_path, "--quiet", "--train",
                "--loss=cross-entropy", "--optimizer=adam(lr=0.003)"], check=True)
step_model = kiln.load(step_path)
print(f"training step: {len(step_model.parameters)} session-owned tensors "
      f"({', '.join(n for n, _, _ in step_model.parameters[:4])}, ...)")
session = step_model.session(threads=2)

rng = np.random.default_rng(0)
start = time.perf_counter()
steps = 0
for epoch in range(EPOCHS):
    order = rng.permutation(len(train_x))
    losses = []
    for i in range(0, len(order) - BATCH + 1, BATCH):
        idx = order[i:i + BATCH]
        out = session.run({"image": train_x[idx], "target": train_y[idx]})
        losses.append(float(out["loss"]))
        steps += 1
    bar = "#" * int(40 * min(np.mean(losses), 2.5) / 2.5)
    print(f"epoch {epoch + 1:2d}  loss {np.mean(losses):.4f}  {bar}", flush=True)
elapsed = time.perf_counter() - start
print(f"{steps} steps in {elapsed:.2f} s ({1e3 * elapsed / steps:.2f} ms per step of {BATCH})")

trained = os.path.join(WORK, "cnn-trained.onnx")
kiln.export_weights(session, onnx_path, trained)
infer_path = os.path.join(WORK, "cnn-trained.so")
subprocess.run([KILN, "compile", trained, "-o", infer_path, "--quiet"], check=True)
infer = kiln.load(infer_path).session(threads=2)
correct = 0
for i in range(0, len(test_x), BATCH):
    batch = test_x[i:i + BATCH]
    n = len(batch)
    if n < BATCH:  # the exported batch is fixed: pad the last one
        batch = np.concatenate([batch, np.zeros((BATCH - n, 1, 8, 8), np.float32)])
    predicted = infer.run({"image": batch})["logits"].argmax(1)[:n]
    correct += int((predicted == test_y[i:i + n]).sum())
accuracy = correct / len(test_x)
print(f"held-out accuracy: {correct}/{len(test_x)} = {100 * accuracy:.1f}% (goal >= 95%)")
sys.exit(0 if accuracy >= 0.95 else 1)
