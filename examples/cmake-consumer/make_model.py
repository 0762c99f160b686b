"""Makes this example's model and images (run once; the outputs are in git).

Trains a 64-32-10 MLP with NumPy on scikit-learn's digits data (8x8
images, values 0..16; the first 1,500 for training), exports it as ONNX
(opset 17, dynamic batch: image [N,1,8,8] -> probs [N,10]) and writes the
first 20 held-out images as PGM files named <label>_<index>.pgm, with
expected.txt: each image's true label and the model's prediction.

  python3 -m venv /tmp/v && /tmp/v/bin/pip install scikit-learn onnx numpy
  /tmp/v/bin/python make_model.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from sklearn.datasets import load_digits

here = os.path.dirname(os.path.abspath(__file__))
digits = load_digits()
x = digits.images.reshape(-1, 64).astype(np.float32) / 16.0
y = digits.target
train_x, train_y, test_x, test_y = x[:1500], y[:1500], x[1500:], y[1500:]

rng = np.random.default_rng(0)
w1 = (rng.standard_normal((64, 32)) * np.sqrt(2 / 64)).astype(np.float32)
b1 = np.zeros(32, np.float32)
w2 = (rng.standard_normal((32, 10)) * np.sqrt(2 / 32)).astype(np.float32)
b2 = np.zeros(10, np.float32)


def forward(a):
    h = np.maximum(a @ w1 + b1, 0)
    z = h @ w2 + b2
    e = np.exp(z - z.max(1, keepdims=True))
    return h, e / e.sum(1, keepdims=True)


for epoch in range(60):
    order = rng.permutation(len(train_x))
    for i in range(0, len(order), 32):
        idx = order[i:i + 32]
        a, t = train_x[idx], train_y[idx]
        h, p = forward(a)
        g = p.copy()
        g[np.arange(len(t)), t] -= 1
        g /= len(t)
        gw2, gb2 = h.T @ g, g.sum(0)
        gh = (g @ w2.T) * (h > 0)
        gw1, gb1 = a.T @ gh, gh.sum(0)
        for param, grad in ((w1, gw1), (b1, gb1), (w2, gw2), (b2, gb2)):
            param -= 0.1 * grad
accuracy = (forward(test_x)[1].argmax(1) == test_y).mean()
print(f"held-out accuracy: {accuracy:.3f} on {len(test_y)} images")

nodes = [
    helper.make_node("Flatten", ["image"], ["flat"], axis=1, name="flatten"),
    helper.make_node("Div", ["flat", "sixteen"], ["scaled"], name="scale"),
    helper.make_node("MatMul", ["scaled", "w1"], ["mm1"], name="fc1"),
    helper.make_node("Add", ["mm1", "b1"], ["pre1"], name="fc1_bias"),
    helper.make_node("Relu", ["pre1"], ["hidden"], name="relu1"),
    helper.make_node("MatMul", ["hidden", "w2"], ["mm2"], name="fc2"),
    helper.make_node("Add", ["mm2", "b2"], ["logits"], name="fc2_bias"),
    helper.make_node("Softmax", ["logits"], ["probs"], axis=-1, name="softmax"),
]
inits = [numpy_helper.from_array(np.array(16.0, np.float32), "sixteen"),
         numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b1, "b1"),
         numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b2, "b2")]
graph = helper.make_graph(
    nodes, "digits",
    [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 1, 8, 8])],
    [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                          producer_name="kiln-example")
model.ir_version = 8
onnx.checker.check_model(model)
onnx.save(model, os.path.join(here, "digits.onnx"))

os.makedirs(os.path.join(here, "images"), exist_ok=True)
predicted = forward(test_x[:20])[1].argmax(1)
lines = []
for i in range(20):
    name = f"{test_y[i]}_{1500 + i:04d}.pgm"
    pixels = digits.images[1500 + i].astype(int)
    with open(os.path.join(here, "images", name), "w") as f:
        f.write("P2\n8 8\n16\n")
        for row in pixels:
            f.write(" ".join(str(v) for v in row) + "\n")
    lines.append(f"images/{name} {test_y[i]} {predicted[i]}")
with open(os.path.join(here, "expected.txt"), "w") as f:
    f.write("# image, true label, the model's prediction (NumPy, make_model.py)\n")
    f.write("\n".join(lines) + "\n")
