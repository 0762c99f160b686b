"""Serves a Kiln artifact with NVIDIA Triton Inference Server through PyTriton.

    python serve_kiln.py model.so [--name NAME] [--instances 2] [--threads 1]
                         [--adaptive-threads]
                         [--http-port 8000] [--grpc-port 8001] [--address 127.0.0.1]

The artifact must have a dynamic batch (kiln compile --dynamic-batch
--max-batch N): Triton's dynamic batcher gathers requests into batches of
up to N (the artifact's max_batch, or --max-batch when the artifact sets
none), and each model instance runs them in its own Kiln session (one
session per instance: a session serves one thread at a time). Inputs and
outputs keep the model's names and dtypes; dim 0 is the batch. HTTP and
gRPC as Triton serves them. Runs until interrupted.
"""
import argparse
import logging

import numpy as np
from pytriton.decorators import batch
from pytriton.model_config import DynamicBatcher, ModelConfig, Tensor
from pytriton.triton import Triton, TritonConfig

import kiln


def bind_model(triton, path, name, instances, threads, max_batch, queue_delay_us,
               adaptive_threads=False):
    model = kiln.load(path)
    for tensor_name, _, dims in model.inputs:
        if not dims or dims[0] is not None:
            raise SystemExit(f"{path}: input '{tensor_name}' has no dynamic batch dim "
                             "(compile with --dynamic-batch --max-batch N)")
    batch_limit = model.max_batch or max_batch
    if not batch_limit:
        raise SystemExit(f"{path} sets no --max-batch: pass --max-batch for Triton's batcher")

    def make_infer(session):
        @batch
        def infer(**inputs):
            return session.run(inputs)
        return infer

    def spec(entries):
        # Triton's shapes leave out the batch dim; -1 for other dynamic dims.
        return [Tensor(name=n, dtype=np.dtype(d), shape=tuple(-1 if x is None else x for x in dims[1:]))
                for n, d, dims in entries]

    def session():
        s = model.session(threads=threads)
        # Half the threads while another process holds a core (off by
        # default: a switch may change the last bits of a result).
        s.set_adaptive_threads(adaptive_threads)
        return s

    triton.bind(
        model_name=name,
        infer_func=[make_infer(session()) for _ in range(instances)],
        inputs=spec(model.inputs),
        outputs=spec(model.outputs),
        config=ModelConfig(max_batch_size=batch_limit,
                           batcher=DynamicBatcher(max_queue_delay_microseconds=queue_delay_us)),
        strict=True,
    )
    return batch_limit


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("--name", default="model")
    parser.add_argument("--instances", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1, help="threads per session")
    parser.add_argument("--adaptive-threads", action="store_true",
                        help="let a session of several threads run on half of them while that "
                             "is faster (cores shared with other processes)")
    parser.add_argument("--max-batch", type=int, default=0)
    parser.add_argument("--queue-delay-us", type=int, default=500)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--http-port", type=int, default=8000)
    parser.add_argument("--grpc-port", type=int, default=8001)
    parser.add_argument("--metrics-port", type=int, default=8002)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = TritonConfig(http_address=args.address, http_port=args.http_port,
                          grpc_address=args.address, grpc_port=args.grpc_port,
                          metrics_port=args.metrics_port, allow_metrics=False)
    with Triton(config=config) as triton:
        limit = bind_model(triton, args.model, args.name, args.instances, args.threads,
                           args.max_batch, args.queue_delay_us, args.adaptive_threads)
        print(f"serving {args.model} as '{args.name}' (batches up to {limit}, "
              f"{args.instances} sessions): http {args.address}:{args.http_port}, "
              f"grpc {args.address}:{args.grpc_port}", flush=True)
        triton.serve()


if __name__ == "__main__":
    main()
