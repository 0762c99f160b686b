#!/usr/bin/env python3
"""Turns an ONNX model in ONNX's text syntax into a binary model file, so
that lit tests keep their models readable in the test file itself.

usage: onnx-assemble.py INPUT.onnxtxt OUTPUT.onnx [--no-check]

Lines starting with `#` (lit's RUN and CHECK lines) are comments to ONNX's
parser. Without --no-check the model must pass onnx.checker, so a test
cannot rely on a model that ONNX itself rejects by accident; bad-input tests
pass --no-check on purpose.
"""
import sys

import onnx
import onnx.parser


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    text = open(args[0]).read()
    model = onnx.parser.parse_model(text)
    if "--no-check" not in sys.argv:
        onnx.checker.check_model(model)
    onnx.save(model, args[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
