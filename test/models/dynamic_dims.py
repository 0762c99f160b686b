"""dynamic_dims.py IN.onnx OUT.onnx D0,D1,...

Writes IN with its first graph input's dims replaced: a number stays that
size, a name becomes a dim known only at run time (its dim_param). The
model's recorded intermediate shapes are dropped (they named the old
sizes). For tests of models over image sizes known only at run time.
"""
import sys

import onnx


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    model = onnx.load(sys.argv[1])
    dims = sys.argv[3].split(",")
    shape = model.graph.input[0].type.tensor_type.shape
    if len(shape.dim) != len(dims):
        sys.exit(f"{sys.argv[1]}: input 0 has rank {len(shape.dim)}, not {len(dims)}")
    for dim, given in zip(shape.dim, dims):
        if given.isdigit():
            dim.dim_value = int(given)
        else:
            dim.dim_param = given
    del model.graph.value_info[:]
    onnx.save(model, sys.argv[2])


if __name__ == "__main__":
    main()
