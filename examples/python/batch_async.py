#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Classify many photos with several inferences in flight, from asyncio.

    batch_async.py [-m MODEL] [-d DEV] [-n REQUESTS] [-r REPEAT] [DIR|PNG...]

Each of REQUESTS coroutines owns an InferRequest and takes photos from a
queue; ``await request.infer_async(x)`` submits the inference to the
device's ring and resumes when the ring's descriptor, watched by the event
loop (loop.add_reader), reports its completion: no thread waits.  Prints
one line per photo (its top class) in input order, then the throughput.
Preprocessing and the defaults (squeezenet1.1, ../shared/images) are
classify.py's.
"""
import argparse
import asyncio
import os
import sys
import time

import numpy as np

import npuring
from classify import DEFAULT_MODEL, SHARED, preprocess, read_png


async def run(compiled, tensors, nreq):
    queue = asyncio.Queue()
    for i, x in enumerate(tensors):
        queue.put_nowait((i, x))
    results = [None] * len(tensors)

    async def worker():
        with compiled.create_infer_request() as req:
            while not queue.empty():
                i, x = queue.get_nowait()
                out = await req.infer_async(x)
                results[i] = out[0].reshape(-1)

    await asyncio.gather(*(worker() for _ in range(nreq)))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inputs", nargs="*",
                    default=[os.path.join(SHARED, "images")])
    ap.add_argument("-m", "--model", default=DEFAULT_MODEL)
    ap.add_argument("-d", "--device", default="CPU")
    ap.add_argument("-n", "--requests", type=int, default=4)
    ap.add_argument("-r", "--repeat", type=int, default=4,
                    help="run each photo this many times")
    args = ap.parse_args()

    files = []
    for p in args.inputs:
        if os.path.isdir(p):
            files += sorted(os.path.join(p, f) for f in os.listdir(p)
                            if f.endswith(".png"))
        else:
            files.append(p)
    core = npuring.Core()
    onnx = args.model.endswith(".onnx")
    model = core.read_model(args.model)
    if onnx and model.input().is_dynamic:
        model.reshape((1, 3, 224, 224))
    compiled = core.compile_model(model, args.device,
                                  config={"PERFORMANCE_HINT": "THROUGHPUT"})
    port = compiled.input()
    photos = [preprocess(read_png(f), port, onnx) for f in files]
    tensors = photos * args.repeat
    t0 = time.monotonic()
    results = asyncio.run(run(compiled, tensors, args.requests))
    dt = time.monotonic() - t0
    for i, f in enumerate(files):
        top = int(np.argmax(results[i]))
        same = all(np.array_equal(results[i], results[i + k * len(files)])
                   for k in range(args.repeat))
        print("%s: class %d%s" % (os.path.basename(f), top,
                                  "" if same else " (repeats differ!)"))
    ring = npuring.ring_info(compiled.device)
    print("%d inferences, %d in flight, %s ring: %.1f per second" %
          (len(tensors), args.requests, ring["path"], len(tensors) / dt))
    core.close()


if __name__ == "__main__":
    try:
        main()
    except (npuring.Error, OSError, ValueError) as e:
        print("batch_async.py: %s" % e, file=sys.stderr)
        sys.exit(1)
