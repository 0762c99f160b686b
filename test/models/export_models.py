#!/usr/bin/env python3
"""Exports the reference models Kiln is tested on, with random weights and
a fixed seed, using Debian's torch and torchvision (no downloads):

  resnet18, resnet50, mobilenet_v2, squeezenet1_1  (torchvision, 224x224)
  bert_encoder  a 2-layer BERT-style encoder: d_model 768, 12 heads,
                ffn 3072, GELU, sequence 128
  mlp           784-256-128-10 with ReLU
  resnet18_bn   resnet18 with random batch-norm statistics, exported with
                its BatchNormalization nodes kept (Kiln folds them)
  dense_bn      DenseNet's pattern at 32x32: batch norms (random statistics)
                before convolutions, on concatenations and pools, with
                ReLU, with nothing, with ReLU6 (Kiln runs them in oneDNN)

usage: export_models.py OUT_DIR [--opset 17] [--dynamic-batch] [names...]

Each model is written as OUT_DIR/<name>.onnx together with a sample input
and torch's output for it (<name>.input.npy, <name>.output.npy); with
--dynamic-batch (dim 0 of the input and output is `batch`) also a batch of
8 (<name>.input8.npy, <name>.output8.npy). Existing files are kept, so a
test set-up can call this every time.
"""
import argparse
import os
import sys

import numpy as np
import torch
import torch.nn as nn


class BertEncoder(nn.Module):
    def __init__(self, layers=2, d_model=768, heads=12, ffn=3072, vocab=1000, seq=128):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.position = nn.Parameter(torch.randn(1, seq, d_model) * 0.02)
        self.norm = nn.LayerNorm(d_model, eps=1e-12)
        layer = nn.TransformerEncoderLayer(d_model, heads, ffn, dropout=0.0,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers)

    def forward(self, ids):
        h = self.norm(self.embed(ids) + self.position)
        return self.encoder(h)


class DenseBn(nn.Module):
    """Each layer batch-normalises the concatenation so far, then ReLU,
    then a convolution (DenseNet); then a batch norm with no activation
    before a 1x1 convolution, and one after an average pool with ReLU6."""

    def __init__(self, c0=16, growth=8, layers=3):
        super().__init__()
        self.stem = nn.Conv2d(3, c0, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.layers = nn.ModuleList()
        c = c0
        for _ in range(layers):
            self.layers.append(nn.Sequential(nn.BatchNorm2d(c), nn.ReLU(),
                                             nn.Conv2d(c, growth, 3, padding=1, bias=False)))
            c += growth
        self.norm = nn.BatchNorm2d(c)
        self.conv = nn.Conv2d(c, 16, 1)
        self.pool2 = nn.AvgPool2d(2)
        self.norm6 = nn.BatchNorm2d(16)
        self.head = nn.Conv2d(16, 10, 1)

    def forward(self, x):
        features = [self.pool(self.stem(x))]
        for layer in self.layers:
            features.append(layer(torch.cat(features, 1)))
        y = self.conv(self.norm(torch.cat(features, 1)))
        y = torch.clamp(self.norm6(self.pool2(y)), 0.0, 6.0)
        return self.head(y).mean((2, 3))


def randomize_batch_norms(model):
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.num_features) * 0.1)
            m.running_var.copy_(torch.rand(m.num_features) + 0.5)
            m.weight.data.copy_(torch.rand(m.num_features) + 0.5)
            m.bias.data.copy_(torch.randn(m.num_features) * 0.1)
    return model


def build(name):
    import torchvision.models as tvm
    if name == "resnet18":
        return tvm.resnet18(), torch.randn(1, 3, 224, 224)
    if name == "resnet50":
        return tvm.resnet50(), torch.randn(1, 3, 224, 224)
    if name == "mobilenet_v2":
        return tvm.mobilenet_v2(), torch.randn(1, 3, 224, 224)
    if name == "squeezenet1_1":
        return tvm.squeezenet1_1(), torch.randn(1, 3, 224, 224)
    if name == "resnet18_bn":
        return randomize_batch_norms(tvm.resnet18()), torch.randn(1, 3, 224, 224)
    if name == "dense_bn":
        return randomize_batch_norms(DenseBn()), torch.randn(1, 3, 32, 32)
    if name == "bert_encoder":
        return BertEncoder(), torch.randint(0, 1000, (1, 128))
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 128),
                             nn.ReLU(), nn.Linear(128, 10)), torch.randn(1, 784)
    raise SystemExit(f"unknown model {name}")


ALL = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1", "bert_encoder", "mlp",
       "resnet18_bn", "dense_bn"]
# Exported as they are in eval mode, without torch folding batch norms.
KEEP_BATCH_NORM = {"resnet18_bn", "dense_bn"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("names", nargs="*", default=ALL)
    ap.add_argument("--opset", type=int, default=17)
    ap.add_argument("--dynamic-batch", action="store_true")
    args = ap.parse_intermixed_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.names:
        path = os.path.join(args.out, name + ".onnx")
        # Kept only when complete: a static export has no batch-8 files.
        wanted = [path] + [os.path.join(args.out, name + suffix) for suffix in
                           [".input.npy", ".output.npy"] +
                           ([".input8.npy", ".output8.npy"] if args.dynamic_batch else [])]
        if all(os.path.exists(f) for f in wanted):
            continue
        torch.manual_seed(0)
        model, example = build(name)
        model.eval()
        with torch.no_grad():
            reference = model(example)
        dynamic = {"input": {0: "batch"}, "output": {0: "batch"}} if args.dynamic_batch else None
        tmp = f"{path}.{os.getpid()}.tmp"
        torch.onnx.export(model, (example,), tmp, opset_version=args.opset,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes=dynamic, do_constant_folding=True,
                          training=(torch.onnx.TrainingMode.PRESERVE if name in KEEP_BATCH_NORM
                                    else torch.onnx.TrainingMode.EVAL))
        np.save(os.path.join(args.out, name + ".input.npy"), example.numpy())
        np.save(os.path.join(args.out, name + ".output.npy"), reference.numpy())
        if args.dynamic_batch:
            # A second batch size for the same artifact: 8 samples.
            torch.manual_seed(1)
            if example.dtype == torch.int64:
                batch = torch.randint(0, 1000, (8,) + tuple(example.shape[1:]))
            else:
                batch = torch.randn((8,) + tuple(example.shape[1:]))
            with torch.no_grad():
                np.save(os.path.join(args.out, name + ".input8.npy"), batch.numpy())
                np.save(os.path.join(args.out, name + ".output8.npy"), model(batch).numpy())
        os.replace(tmp, path)
        print(f"exported {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
