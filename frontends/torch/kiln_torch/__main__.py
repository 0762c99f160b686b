"""python3 -m kiln_torch compile FILE.py:FUNCTION --example-shape 1x3x224x224 -o model.so
   python3 -m kiln_torch export FILE.py:FUNCTION --example-shape 1x3x224x224 -o model.mlir
                                [--external-weights]
   python3 -m kiln_torch ops"""

import argparse
import importlib.util
import sys

from . import KilnTorchError, compile as compile_module, export as export_module, supported_ops


def _load(spec):
    path, _, name = spec.rpartition(":")
    if not path or not name:
        raise KilnTorchError(f"expected FILE.py:FUNCTION, got {spec!r}")
    loader = importlib.util.spec_from_file_location("kiln_torch_user_module", path)
    if loader is None:
        raise KilnTorchError(f"cannot load {path}")
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    if not hasattr(module, name):
        raise KilnTorchError(f"{path} has no {name}")
    return getattr(module, name)()


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m kiln_torch")
    commands = parser.add_subparsers(dest="command", required=True)
    c = commands.add_parser("compile", help="trace a module and compile it")
    e = commands.add_parser("export", help="trace a module and write kiln IR (.mlir, .mlirbc)")
    for p in (c, e):
        p.add_argument("factory", help="FILE.py:FUNCTION returning the nn.Module")
        p.add_argument("--example-shape", action="append", required=True,
                       help="an example input's shape, e.g. 1x3x224x224 (float32; once per input)")
        p.add_argument("-o", "--output", required=True)
        p.add_argument("--static-batch", action="store_true",
                       help="keep the example's batch fixed")
        p.add_argument("--allow-training-mode", action="store_true")
    c.add_argument("--target", default="cpu")
    c.add_argument("--max-batch", type=int)
    e.add_argument("--external-weights", action="store_true",
                   help="the weights raw in NAME.weights beside NAME.mlir, not hex at its end")
    commands.add_parser("ops", help="list the aten ops Kiln converts")
    args = parser.parse_args(argv)
    try:
        if args.command == "ops":
            names = supported_ops()
            for name in names:
                if name.startswith("aten."):
                    print(name)
            print("# also: tuple items (getitem) and symbolic size arithmetic: " +
                  ", ".join(n for n in names if not n.startswith("aten.") and n != "getitem"))
            return 0
        import torch
        module = _load(args.factory)
        examples = [torch.randn(*[int(d) for d in shape.split("x")])
                    for shape in args.example_shape]
        if args.command == "export":
            path = export_module(module, examples, args.output,
                                 dynamic_batch=not args.static_batch,
                                 allow_training_mode=args.allow_training_mode,
                                 external_weights=args.external_weights)
            print(f"wrote {path}")
            return 0
        options = {"max_batch": args.max_batch} if args.max_batch else {}
        out = compile_module(module, examples, args.output, target=args.target,
                             dynamic_batch=not args.static_batch,
                             allow_training_mode=args.allow_training_mode, **options)
        sys.stdout.write(out)
        return 0
    except KilnTorchError as error:
        print(f"kiln_torch: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
