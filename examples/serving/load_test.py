"""Load test of serve_kiln.py on loopback: throughput, latency, and every answer checked.

    python load_test.py model.so [--requests 2000] [--clients 8] [--protocol http|grpc|both]

Starts serve_kiln.py on free ports, waits for the model, then sends
REQUESTS single-sample requests from CLIENTS concurrent clients (each its
own connection) over HTTP and gRPC in turn; Triton's dynamic batcher
gathers them. Every answer is compared with the same input run directly
in a Kiln session (the served model must give what the model gives:
within 1e-5 relative, as batching changes nothing but the batch dim).
Prints, per protocol, requests/s and p50/p99 latency, and "N passed,
N failed".
"""
import argparse
import os
import socket
import subprocess
import sys
import threading
import time
import warnings

import numpy as np
from pytriton.client import ModelClient

import kiln

here = os.path.dirname(os.path.abspath(__file__))
# tritonclient.grpc takes no timeout but for inference; PyTriton says so.
warnings.filterwarnings("ignore", message=".*doesn't support timeout.*")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port, server, log, timeout_s):
    """Until the server accepts connections on `port`: PyTriton's
    wait_for_model gives up at the first refused connection, which Triton
    answers while it starts (slowly the first time on a machine, or
    beside other work). Raises if the server exits or the time runs out."""
    deadline = time.time() + timeout_s
    while True:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited ({server.returncode}) before it listened:\n"
                               + "".join(log[-40:]))
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.time() > deadline:
                raise RuntimeError(f"the server did not listen on port {port} in {timeout_s} s:\n"
                                   + "".join(log[-40:]))
            time.sleep(0.25)


def wait_for_model(port, server, log, timeout_s):
    """Until the model is ready on `port`: the port accepting a connection
    is not enough, as a refused connection after it (Triton still starting
    behind PyTriton's front, seen once on a fresh machine) ends PyTriton's
    wait at once; each such refusal is waited out while the server runs."""
    deadline = time.time() + timeout_s
    while True:
        wait_for_port(port, server, log, max(deadline - time.time(), 1))
        try:
            with ModelClient(f"http://127.0.0.1:{port}", "kiln_model",
                             init_timeout_s=max(deadline - time.time(), 1)) as c:
                c.wait_for_model(timeout_s=max(deadline - time.time(), 1))
            return
        except OSError as error:  # refused or reset: the server is not up yet
            if server.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"the model was not ready on port {port} ({error}):\n"
                                   + "".join(log[-40:])) from error
            time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("model")
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--protocol", default="both", choices=["http", "grpc", "both"])
    parser.add_argument("--instances", type=int, default=2)
    args = parser.parse_args()

    model = kiln.load(args.model)
    reference = model.session(threads=1)
    (in_name, in_dtype, in_dims), = model.inputs
    rng = np.random.default_rng(0)
    samples = [rng.random(in_dims[1:], dtype=np.float32).astype(in_dtype) * 16
               for _ in range(args.requests)]
    expected = [reference.run({in_name: s[None]}) for s in samples]

    http, grpc, metrics = free_port(), free_port(), free_port()
    server = subprocess.Popen(
        [sys.executable, os.path.join(here, "serve_kiln.py"), args.model, "--name", "kiln_model",
         "--instances", str(args.instances), "--http-port", str(http), "--grpc-port", str(grpc),
         "--metrics-port", str(metrics)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log = []
    threading.Thread(target=lambda: log.extend(server.stdout), daemon=True).start()
    passed = failed = 0
    try:
        start = time.time()
        wait_for_model(http, server, log, 120)
        print(f"server ready in {time.time() - start:.1f} s")
        protocols = ["http", "grpc"] if args.protocol == "both" else [args.protocol]
        for protocol in protocols:
            url = f"http://127.0.0.1:{http}" if protocol == "http" else f"grpc://127.0.0.1:{grpc}"
            latencies = [0.0] * args.requests
            wrong = []
            next_index = [0]
            lock = threading.Lock()

            def client():
                with ModelClient(url, "kiln_model", init_timeout_s=60) as c:
                    while True:
                        with lock:
                            i = next_index[0]
                            next_index[0] += 1
                        if i >= args.requests:
                            return
                        t0 = time.perf_counter()
                        got = c.infer_sample(**{in_name: samples[i]})
                        latencies[i] = time.perf_counter() - t0
                        for name, want in expected[i].items():
                            want = want[0]
                            err = np.abs(got[name] - want).max() / max(np.abs(want).max(), 1e-30)
                            if got[name].shape != want.shape or err > 1e-5:
                                wrong.append((i, name, float(err)))

            t0 = time.perf_counter()
            threads = [threading.Thread(target=client) for _ in range(args.clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            elapsed = time.perf_counter() - t0
            lat = np.array(latencies) * 1e3
            print(f"{protocol}: {args.requests} requests from {args.clients} clients in {elapsed:.2f} s: "
                  f"{args.requests / elapsed:.0f} requests/s, latency p50 {np.percentile(lat, 50):.2f} ms, "
                  f"p99 {np.percentile(lat, 99):.2f} ms")
            if wrong:
                failed += 1
                print(f"FAIL: {protocol}: {len(wrong)} answers differ from the model run directly, "
                      f"first {wrong[0]}")
            else:
                passed += 1
                print(f"ok: {protocol}: all {args.requests} answers match the model run directly")
    except Exception:
        print("the server's last lines:\n" + "".join(log[-40:]))
        raise
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
    if failed:
        print("".join(log[-40:]))
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
