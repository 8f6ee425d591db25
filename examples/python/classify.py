#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Classify a photo with npuring from Python and print the top classes.

    classify.py [-m MODEL] [-d DEVICE] [-k N] [--labels FILE] [IMAGE.png]

MODEL is an ImageNet classifier: an IR .xml from Open Model Zoo (input
BGR, 0..255, as squeezenet1.1 takes it) or an ONNX torchvision export
(RGB scaled to 0..1 and normalised with ImageNet's mean and deviation).
The defaults are squeezenet1.1 and chelsea.png from the shared test data
($NPR_SHARED, else ../shared beside the source tree).  With --labels, a
file of class names, one a line, names the classes.

Needs numpy; reads PNG with Pillow (python3-pil) when it is installed,
else with the small decoder below (8-bit, non-interlaced PNG).
"""
import argparse
import os
import struct
import sys
import zlib

import numpy as np

import npuring

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.environ.get("NPR_SHARED",
                        os.path.join(HERE, "..", "..", "..", "shared"))
DEFAULT_MODEL = os.path.join(SHARED, "models", "ir", "squeezenet1.1",
                             "FP16", "squeezenet1.1.xml")
DEFAULT_IMAGE = os.path.join(SHARED, "images", "chelsea.png")


def _unfilter(raw, height, stride, bpp):
    """Undo PNG's per-row filters; returns a (height, stride) uint8 array."""
    out = np.zeros((height, stride), np.uint8)
    prev = np.zeros(stride, np.int32)
    pos = 0
    for y in range(height):
        ftype = raw[pos]
        row = np.frombuffer(raw, np.uint8, stride, pos + 1).astype(np.int32)
        pos += stride + 1
        if ftype == 0:
            cur = row
        elif ftype == 1:	# Sub: a running sum per channel
            cur = np.cumsum(row.reshape(-1, bpp), axis=0).reshape(-1) & 255
        elif ftype == 2:	# Up
            cur = (row + prev) & 255
        elif ftype in (3, 4):	# Average, Paeth: byte by byte
            r = row.tolist()
            p = prev.tolist()
            c = [0] * stride
            for x in range(stride):
                a = c[x - bpp] if x >= bpp else 0
                b = p[x]
                if ftype == 3:
                    c[x] = (r[x] + ((a + b) >> 1)) & 255
                    continue
                cc = p[x - bpp] if x >= bpp else 0
                pa, pb, pc = abs(b - cc), abs(a - cc), abs(a + b - 2 * cc)
                pred = a if pa <= pb and pa <= pc else b if pb <= pc else cc
                c[x] = (r[x] + pred) & 255
            cur = np.array(c, np.int32)
        else:
            raise ValueError("PNG: bad filter type %d" % ftype)
        out[y] = cur
        prev = cur
    return out


def read_png(path):
    """An 8-bit PNG as an (H, W, 3) uint8 RGB array."""
    try:
        from PIL import Image
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB"))
    except ImportError:
        pass
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("%s: not a PNG file" % path)
    pos, idat, hdr = 8, [], None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
    w, h, depth, ctype, _, _, interlace = hdr
    chans = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or chans is None or interlace:
        raise ValueError("%s: only 8-bit non-interlaced gray/RGB(A) PNG "
                         "without Pillow (install python3-pil)" % path)
    pix = _unfilter(zlib.decompress(b"".join(idat)), h, w * chans, chans)
    pix = pix.reshape(h, w, chans)
    if chans < 3:
        return np.repeat(pix[:, :, :1], 3, axis=2)
    return pix[:, :, :3]


def resize(img, height, width):
    """Bilinear resize of an (H, W, C) array (half-pixel centres)."""
    src = img.astype(np.float32)
    h, w = src.shape[:2]

    def axis(n_out, n_in):
        x = (np.arange(n_out) + 0.5) * n_in / n_out - 0.5
        x = np.clip(x, 0, n_in - 1)
        lo = np.floor(x).astype(int)
        hi = np.minimum(lo + 1, n_in - 1)
        return lo, hi, (x - lo).astype(np.float32)

    y0, y1, fy = axis(height, h)
    x0, x1, fx = axis(width, w)
    top = src[y0][:, x0] * (1 - fx)[:, None] + src[y0][:, x1] * fx[:, None]
    bot = src[y1][:, x0] * (1 - fx)[:, None] + src[y1][:, x1] * fx[:, None]
    return top * (1 - fy)[:, None, None] + bot * fy[:, None, None]


def preprocess(rgb, port, onnx):
    """The photo as the model's input tensor (1, 3, H, W)."""
    _, _, height, width = port.shape
    x = resize(rgb, height, width)
    if onnx:		# torchvision
        x = (x / 255.0 - [0.485, 0.456, 0.406]) / [0.229, 0.224, 0.225]
    else:		# Open Model Zoo: BGR, 0..255
        x = x[:, :, ::-1]
    return x.transpose(2, 0, 1)[None].astype(port.dtype)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("image", nargs="?", default=DEFAULT_IMAGE)
    ap.add_argument("-m", "--model", default=DEFAULT_MODEL)
    ap.add_argument("-d", "--device", default="CPU")
    ap.add_argument("-k", "--top", type=int, default=5)
    ap.add_argument("--labels", help="class names, one a line")
    args = ap.parse_args()

    core = npuring.Core()
    onnx = args.model.endswith(".onnx")
    model = core.read_model(args.model)
    port = model.input()
    if onnx and port.is_dynamic:
        model.reshape((1, 3, 224, 224))
    compiled = core.compile_model(model, args.device)
    port = compiled.input()
    x = preprocess(read_png(args.image), port, onnx)
    scores = compiled(x)[0].astype(np.float64).reshape(-1)
    if abs(scores.sum() - 1) > 1e-2 or scores.min() < 0:
        scores = np.exp(scores - scores.max())
        scores /= scores.sum()
    labels = None
    if args.labels:
        with open(args.labels) as f:
            labels = [ln.strip() for ln in f]
    print("%s on %s (%s):" % (os.path.basename(args.model),
                             os.path.basename(args.image), args.device))
    for rank, c in enumerate(np.argsort(-scores)[:args.top], 1):
        name = labels[c] if labels and c < len(labels) else ""
        print("%d. class %4d  p %.4f  %s" % (rank, c, scores[c], name))
    core.close()


if __name__ == "__main__":
    try:
        main()
    except (npuring.Error, OSError, ValueError) as e:
        print("classify.py: %s" % e, file=sys.stderr)
        sys.exit(1)
