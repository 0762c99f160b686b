#!/usr/bin/env python3
"""Writes the node test cases of the installed onnx package (PyPI's 1.23 in
the venv scripts/onnx-venv.sh makes) in the layout of ONNX's backend test
data: OUT/node/<case>/model.onnx and test_data_set_N/{input,output}_J.pb.
The wheels do not ship the node data; ONNX's own case generators (each
computes its expected outputs with NumPy) and ONNX's own writer make it.

Also writes OUT/excluded.txt: the cases that need what the issue's goal
leaves out (training ops, sequences, strings, optional or map types), one
`node/<case> <why>` per line, and OUT/VERSION (the onnx version). Does
nothing when OUT/VERSION already names the installed version.
"""
import argparse
import os
import shutil
import sys
import warnings

import onnx
import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
from onnx import TensorProto
from onnx.backend.test import cmd_tools

SEQUENCE_OPS = {"SequenceAt", "SequenceConstruct", "SequenceEmpty", "SequenceErase",
                "SequenceInsert", "SequenceLength", "SequenceMap", "SplitToSequence",
                "ConcatFromSequence"}
OPTIONAL_OPS = {"Optional", "OptionalGetElement", "OptionalHasElement"}
STRING_OPS = {"StringNormalizer", "StringConcat", "StringSplit", "RegexFullMatch"}
TRAINING_DOMAINS = {"ai.onnx.preview.training"}


def value_kinds(type_proto):
    """Kinds of non-tensor or string content in a TypeProto."""
    which = type_proto.WhichOneof("value")
    if which == "tensor_type":
        return {"strings"} if type_proto.tensor_type.elem_type == TensorProto.STRING else set()
    if which == "sequence_type":
        return {"sequences"}
    if which == "optional_type":
        return {"optional types"}
    if which == "map_type":
        return {"maps"}
    return set()


def graph_kinds(graph):
    kinds = set()
    for v in list(graph.input) + list(graph.output) + list(graph.value_info):
        kinds |= value_kinds(v.type)
    for node in graph.node:
        if node.domain in TRAINING_DOMAINS:
            kinds.add("training ops")
        if node.op_type in SEQUENCE_OPS:
            kinds.add("sequences")
        if node.op_type in OPTIONAL_OPS:
            kinds.add("optional types")
        if node.op_type in STRING_OPS:
            kinds.add("strings")
        for attr in node.attribute:
            for g in ([attr.g] if attr.HasField("g") else []) + list(attr.graphs):
                kinds |= graph_kinds(g)
    return kinds


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    args = ap.parse_args()
    stamp = os.path.join(args.out, "VERSION")
    if os.path.exists(stamp) and open(stamp).read().strip() == onnx.__version__:
        print(f"ONNX {onnx.__version__} suite already at {args.out}")
        return 0
    if os.path.exists(args.out):
        shutil.rmtree(args.out)
    # The generators divide by zero on purpose (infinities in the data).
    warnings.simplefilter("ignore")
    cases = node_cases.collect_testcases()
    # ONNX's writer (cmd_tools.generate_data) writes the cases that
    # model_cases.collect_testcases returns: hand it the node cases.
    model_cases.collect_testcases = lambda: cases
    cmd_tools.generate_data(argparse.Namespace(output=args.out))
    with open(os.path.join(args.out, "excluded.txt"), "w") as f:
        f.write(f"# Cases of ONNX {onnx.__version__}'s node suite that need training ops, "
                "sequences, strings, optional or map types\n")
        for case in sorted(cases, key=lambda c: c.name):
            kinds = graph_kinds(case.model.graph)
            if kinds:
                f.write(f"node/{case.name} {','.join(sorted(kinds)).replace(' ', '_')}\n")
    with open(stamp, "w") as f:
        f.write(onnx.__version__ + "\n")
    print(f"wrote {len(cases)} cases of ONNX {onnx.__version__}'s node suite to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
