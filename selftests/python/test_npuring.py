# SPDX-License-Identifier: MIT
"""The Python binding (python/npuring) against the library of this build.

Run by selftests/python_test.sh, which sets NPURING_LIBRARY and
PYTHONPATH; prints KTAP like the C selftests.  Arguments select tests
whose names contain them; -l lists the tests.  Models and photos come from
$NPR_SHARED; tests that need them skip without.
"""
import asyncio
import ctypes
import errno
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import npuring
from npuring import uapi

SRC = os.environ.get("NPR_SRCTREE",
                     os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("NPR_SHARED", os.path.join(SRC, "..", "shared"))
ONNX = os.path.join(SHARED, "models", "onnx")
SQZ_ONNX = os.path.join(ONNX, "squeezenet1_1.onnx")
SQZ_IR = os.path.join(SHARED, "models", "ir", "squeezenet1.1", "FP16",
                      "squeezenet1.1.xml")
ADDER = os.path.join(SHARED, "models", "ir-stateful", "adder_v11.xml")
TINY_GPT = os.path.join(SHARED, "models", "llm", "tiny_gpt")
HEADER = os.path.join(SRC, "uapi", "npuring.h")


def need(*paths):
    for p in paths:
        if not os.path.exists(p):
            raise unittest.SkipTest("%s is missing (set NPR_SHARED)" % p)


def golden(name, batch):
    x = np.fromfile(os.path.join(ONNX, "%s.input_b%d.f32" % (name, batch)),
                    np.float32).reshape(batch, 3, 224, 224)
    y = np.fromfile(os.path.join(ONNX, "%s.output_b%d.f32" % (name, batch)),
                    np.float32).reshape(batch, 1000)
    return x, y


def rel_err(a, ref):
    return float(np.abs(a - ref).max() / np.abs(ref).max())


class Layout(unittest.TestCase):
    """Every mirrored struct and constant against uapi/npuring.h."""

    def test_sizes_match_static_asserts(self):
        text = open(HEADER).read()
        asserts = dict(re.findall(
            r"_Static_assert\(sizeof\(struct (\w+)\) == (\d+)", text))
        mirrored = {s.cname for s in uapi.STRUCTS}
        self.assertEqual(mirrored, set(asserts),
                         "structs mirrored vs asserted in the header")
        for s in uapi.STRUCTS:
            self.assertEqual(ctypes.sizeof(s), int(asserts[s.cname]),
                             s.cname)

    def test_offsets_and_constants_match_c(self):
        cc = os.environ.get("CC", "cc")
        if not shutil.which(cc):
            self.skipTest("no C compiler (%s) to build the probe" % cc)
        lines = ["#include <stdio.h>", "#include <stddef.h>",
                 '#include "uapi/npuring.h"', "int main(void) {"]
        for s in uapi.STRUCTS:
            lines.append('printf("%s . %%zu\\n", sizeof(struct %s));'
                         % (s.cname, s.cname))
            for f in s._fields_:
                lines.append('printf("%s %s %%zu\\n", offsetof(struct %s, %s));'
                             % (s.cname, f[0], s.cname, f[0]))
        for n in uapi.CONSTANTS:
            lines.append('printf("NPR_%s %%lld\\n", (long long)NPR_%s);'
                         % (n, n))
        lines.append("return 0; }")
        with tempfile.TemporaryDirectory() as d:
            c = os.path.join(d, "probe.c")
            exe = os.path.join(d, "probe")
            with open(c, "w") as f:
                f.write("\n".join(lines) + "\n")
            subprocess.run([cc, "-std=gnu11", "-I", SRC, "-o", exe, c],
                           check=True)
            out = subprocess.run([exe], check=True, capture_output=True,
                                 text=True).stdout
        want = {}
        for ln in out.splitlines():
            k1, k2, v = ln.rsplit(" ", 2) if not ln.startswith("NPR_") \
                else (ln.split()[0], "", ln.split()[1])
            want[(k1, k2)] = int(v)
        n = 0
        for s in uapi.STRUCTS:
            self.assertEqual(ctypes.sizeof(s), want[(s.cname, ".")], s.cname)
            for f in s._fields_:
                self.assertEqual(getattr(s, f[0]).offset,
                                 want[(s.cname, f[0])],
                                 "%s.%s" % (s.cname, f[0]))
                n += 1
        for name in uapi.CONSTANTS:
            self.assertEqual(getattr(uapi, name), want[("NPR_" + name, "")],
                             "NPR_" + name)
        self.assertGreater(n, 200)
        self.assertIn("IOCTL_MAKE_STATEFUL", uapi.CONSTANTS)


class Library(unittest.TestCase):
    def test_missing_library_is_an_import_error(self):
        env = dict(os.environ, NPURING_LIBRARY="/nonexistent/libnpuring.so.0")
        p = subprocess.run([sys.executable, "-c", "import npuring"], env=env,
                           capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("ImportError: npuring: cannot load", p.stderr)
        self.assertIn("NPURING_LIBRARY", p.stderr)

    def test_error_is_an_oserror_with_errno_and_message(self):
        with self.assertRaises(npuring.Error) as cm:
            npuring.Device("nosuch")
        e = cm.exception
        self.assertIsInstance(e, OSError)
        self.assertEqual(e.errno, errno.ENODEV)
        self.assertTrue(e.message)
        self.assertIn("ENODEV", str(e))

    def test_available_devices(self):
        devs = npuring.Core().available_devices
        self.assertIn("CPU", devs)
        self.assertIn("NULL", devs)


class Properties(unittest.TestCase):
    def setUp(self):
        self.dev = npuring.Device("cpu")

    def tearDown(self):
        self.dev.close()

    def test_typed_values(self):
        d = self.dev
        self.assertEqual(d.get_property("PERFORMANCE_HINT"), "LATENCY")
        self.assertIs(d.get_property("ENABLE_PROFILING"), False)
        self.assertEqual(d.get_property("NUM_STREAMS"), -1)
        self.assertIsInstance(d.get_property("FULL_DEVICE_NAME"), str)
        self.assertIn("FP32", d.get_property("OPTIMIZATION_CAPABILITIES"))
        rng = d.get_property("RANGE_FOR_ASYNC_INFER_REQUESTS")
        self.assertEqual(len(rng), 3)
        self.assertTrue(all(isinstance(v, int) for v in rng))
        names = d.supported_properties
        self.assertIn("CACHE_DIR", names)
        info = {p.name: p for p in d.properties}
        self.assertTrue(info["CACHE_DIR"].writable)
        self.assertFalse(info["FULL_DEVICE_NAME"].writable)
        self.assertEqual(info["NUM_STREAMS"].type, "int")

    def test_set_valid_values(self):
        d = self.dev
        d.set_property("PERFORMANCE_HINT", "THROUGHPUT")
        self.assertEqual(d.get_property("PERFORMANCE_HINT"), "THROUGHPUT")
        d.set_property({"ENABLE_PROFILING": True, "NUM_STREAMS": 2,
                        "INFERENCE_PRECISION_HINT": "f32"})
        self.assertIs(d.get_property("ENABLE_PROFILING"), True)
        self.assertEqual(d.get_property("NUM_STREAMS"), 2)
        d.set_property("ENABLE_PROFILING", "NO")
        self.assertIs(d.get_property("ENABLE_PROFILING"), False)

    def check_error(self, err, fn, *args):
        with self.assertRaises(npuring.Error) as cm:
            fn(*args)
        self.assertEqual(cm.exception.errno, err, str(cm.exception))
        self.assertTrue(cm.exception.message)
        return cm.exception.message

    def test_invalid_values(self):
        d = self.dev
        msg = self.check_error(errno.EINVAL, d.set_property,
                               "PERFORMANCE_HINT", "FAST")
        self.assertIn("FAST", msg)
        self.check_error(errno.ERANGE, d.set_property, "NUM_STREAMS", 0)
        self.check_error(errno.EPERM, d.set_property, "FULL_DEVICE_NAME",
                         "x")
        msg = self.check_error(errno.ENOPROTOOPT, d.get_property, "NO_SUCH")
        self.check_error(errno.EINVAL, d.set_property, "ENABLE_PROFILING",
                         "maybe")
        self.check_error(errno.EINVAL, d.set_property, "NUM_STREAMS", "two")
        self.check_error(errno.EINVAL, d.set_property, "CACHE_DIR", 3)
        self.assertEqual(d.get_property("PERFORMANCE_HINT"), "LATENCY")

    def test_compile_config(self):
        need(SQZ_ONNX)
        cm = self.dev.compile_model(SQZ_ONNX, {"PERFORMANCE_HINT":
                                               "THROUGHPUT"},
                                    shapes={"input": (1, 3, 224, 224)})
        self.assertEqual(cm.get_property("PERFORMANCE_HINT"), "THROUGHPUT")
        self.assertEqual(self.dev.get_property("PERFORMANCE_HINT"),
                         "LATENCY")
        self.check_error(errno.EPERM, cm.set_property, "NUM_STREAMS", 1)
        msg = self.check_error(errno.EINVAL, self.dev.compile_model,
                               SQZ_ONNX, {"PERFORMANCE_HINT": "FAST"})
        self.assertIn("THROUGHPUT", msg)

    def test_cache_dir(self):
        need(SQZ_ONNX)
        with tempfile.TemporaryDirectory() as tmp:
            core = npuring.Core()
            core.cache_dir = tmp
            self.assertEqual(core.get_property("CPU", "CACHE_DIR"), tmp)
            sh = {"input": (1, 3, 224, 224)}
            a = core.compile_model(SQZ_ONNX, "CPU", shapes=sh)
            self.assertIs(a.get_property("LOADED_FROM_CACHE"), False)
            core.close()
            self.assertTrue(os.listdir(tmp))
            with npuring.Device("cpu") as d:
                d.cache_dir = tmp
                self.assertEqual(d.cache_dir, tmp)
                b = d.compile_model(SQZ_ONNX, shapes=sh)
                self.assertIs(b.get_property("LOADED_FROM_CACHE"), True)


class Inference(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        need(SQZ_ONNX, SQZ_IR)
        cls.core = npuring.Core()
        cls.model = cls.core.read_model(SQZ_ONNX)
        cls.model.reshape((1, 3, 224, 224))
        cls.cm = cls.core.compile_model(cls.model, "CPU")
        cls.x1, cls.y1 = golden("squeezenet1_1", 1)
        cls.x4, cls.y4 = golden("squeezenet1_1", 4)

    @classmethod
    def tearDownClass(cls):
        cls.core.close()

    def test_ports(self):
        self.assertEqual(self.model.input().shape, (-1, 3, 224, 224))
        self.assertTrue(self.model.input().is_dynamic)
        p = self.cm.input()
        self.assertEqual((p.name, p.shape, p.dtype, p.element_type),
                         ("input", (1, 3, 224, 224), np.float32, "f32"))
        self.assertEqual(self.cm.output(0).get_any_name(), "output")
        self.assertGreater(self.cm.request_bytes, 0)

    def test_onnx_golden(self):
        out = self.cm.create_infer_request().infer({"input": self.x1})
        self.assertEqual(out["output"].shape, (1, 1000))
        self.assertEqual(out[0].dtype, np.float32)
        self.assertLessEqual(rel_err(out[0], self.y1), 1e-4)

    def test_batch_4_from_bytes(self):
        with open(SQZ_ONNX, "rb") as f:
            data = f.read()
        cm = self.core.compile_model(data, "CPU",
                                     shapes={0: (4, 3, 224, 224)})
        self.assertLessEqual(rel_err(cm(self.x4)[0], self.y4), 1e-4)

    def test_dynamic_batch(self):
        cm = self.core.compile_model(SQZ_ONNX, "CPU")
        self.assertEqual(cm.input().shape, (-1, 3, 224, 224))
        self.assertEqual(cm.output(0).shape, (-1, 1000))
        r = cm.create_infer_request()
        for x, y in ((self.x4, self.y4), (self.x1, self.y1)):
            out = r.infer({"input": x})["output"]
            self.assertEqual(out.shape, y.shape)
            self.assertLessEqual(rel_err(out, y), 1e-4)

    def test_ir_path_and_bytes_agree(self):
        with open(SQZ_IR, "rb") as f:
            xml = f.read()
        with open(SQZ_IR[:-4] + ".bin", "rb") as f:
            weights = f.read()
        a = self.core.compile_model(SQZ_IR)
        b = self.core.compile_model(self.core.read_model(xml, weights))
        self.assertEqual(a.input().dtype, np.float16)
        x = np.random.default_rng(1).uniform(0, 255, (1, 3, 227, 227))
        ya, yb = a(x)[0], b(x)[0]
        self.assertEqual(ya.shape, (1, 1000, 1, 1))
        self.assertTrue(np.array_equal(ya, yb))
        self.assertAlmostEqual(float(ya.astype(np.float64).sum()), 1.0,
                               delta=1e-2)

    def test_classify_example(self):
        need(os.path.join(SHARED, "images", "chelsea.png"))
        ex = os.path.join(SRC, "examples", "python", "classify.py")
        p = subprocess.run([sys.executable, ex, "-k", "3",
                            os.path.join(SHARED, "images", "chelsea.png")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        top = int(re.search(r"1\. class +(\d+)", p.stdout).group(1))
        # ImageNet 281..285: tabby, tiger cat, Persian, Siamese, Egyptian
        self.assertTrue(281 <= top <= 285, p.stdout)

    def test_zero_copy_input(self):
        req = self.cm.create_infer_request()
        x = np.ascontiguousarray(self.x1)
        req.set_tensor("input", x)
        bound = req.get_tensor("input", copy=False)
        self.assertEqual(bound.ctypes.data, x.ctypes.data)
        # a strided array is copied, then bound
        y = np.asfortranarray(self.x1)
        req.set_tensor(0, y)
        self.assertNotEqual(req.get_tensor(0, copy=False).ctypes.data,
                            y.ctypes.data)
        self.assertLessEqual(rel_err(req.infer()[0], self.y1), 1e-4)
        # a float64 array is converted
        out = req.infer(self.x1.astype(np.float64))
        self.assertLessEqual(rel_err(out[0], self.y1), 1e-4)
        view = req.get_tensor("output", copy=False)
        self.assertTrue(np.array_equal(view, out[0]))

    def test_start_async_and_wait(self):
        reqs = [self.cm.create_infer_request() for _ in range(4)]
        for i, r in enumerate(reqs):
            r.start_async(self.x4[i:i + 1])
        with self.assertRaises(npuring.Error) as cm:
            reqs[0].infer(self.x4[:1])
        self.assertEqual(cm.exception.errno, errno.EBUSY)
        for i in reversed(range(4)):
            self.assertTrue(reqs[i].wait())
            out = reqs[i].results()[0]
            self.assertLessEqual(rel_err(out, self.y4[i:i + 1]), 1e-4)
            self.assertGreater(reqs[i].latency, 0)

    def test_asyncio_several_in_flight(self):
        n = 4
        sync = [self.cm.create_infer_request().infer(self.x4[i:i + 1])[0]
                for i in range(n)]
        reqs = [self.cm.create_infer_request() for _ in range(n)]
        threads = []

        async def main():
            threads.append(threading.active_count())
            tasks = [asyncio.ensure_future(r.infer_async(self.x4[i:i + 1]))
                     for i, r in enumerate(reqs)]
            await asyncio.sleep(0)
            inflight = sum(1 for r in reqs if r._ud)
            outs = await asyncio.gather(*tasks)
            threads.append(threading.active_count())
            # a second round on the same requests
            outs2 = await asyncio.gather(
                *(r.infer_async(self.x4[i:i + 1])
                  for i, r in enumerate(reqs)))
            return inflight, outs, outs2

        inflight, outs, outs2 = asyncio.run(main())
        self.assertEqual(inflight, n)
        self.assertEqual(threads[0], threads[1], "no thread was started")
        for i in range(n):
            for o in (outs[i][0], outs2[i][0]):
                self.assertLessEqual(np.abs(o - sync[i]).max(),
                                     1e-6 * np.abs(sync[i]).max())
        self.assertIsNone(self.cm.device._loop, "the reader was removed")

    def test_asyncio_on_the_fallback_ring(self):
        env = dict(os.environ, NPR_RING_FALLBACK="1")
        code = ("import asyncio, numpy as np, npuring\n"
                "d = npuring.Device('cpu')\n"
                "cm = d.compile_model(%r, shapes={0: (1, 3, 224, 224)})\n"
                "x = np.fromfile(%r, np.float32).reshape(1, 3, 224, 224)\n"
                "rs = [cm.create_infer_request() for _ in range(3)]\n"
                "async def m():\n"
                "    return await asyncio.gather(*(r.infer_async(x)"
                " for r in rs))\n"
                "o = asyncio.run(m())\n"
                "print(npuring.ring_info(d)['path'],"
                " all(np.array_equal(a[0], o[0][0]) for a in o))\n"
                % (SQZ_ONNX, os.path.join(ONNX, "squeezenet1_1.input_b1.f32")))
        p = subprocess.run([sys.executable, "-c", code], env=env,
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.split(), ["fallback", "True"])

    def test_cancel_a_queued_job(self):
        # more resnet18 jobs than ring workers: the last one still waits
        # in the queue when it is cancelled
        path = os.path.join(ONNX, "resnet18.onnx")
        need(path)
        x, y = golden("resnet18", 1)
        with npuring.Device("cpu") as d:
            workers = npuring.ring_info(d)["workers"]
            if workers > 14:
                self.skipTest("%d ring workers: too many jobs to queue"
                              % workers)
            cm = d.compile_model(path, shapes={0: (1, 3, 224, 224)})
            reqs = [cm.create_infer_request() for _ in range(workers + 2)]
            for r in reqs:
                r.start_async(x)
            reqs[-1].cancel()
            for r in reqs[:-1]:
                self.assertTrue(r.wait())
                self.assertLessEqual(rel_err(r.results()[0], y), 1e-4)
            with self.assertRaises(npuring.Error) as cm2:
                reqs[-1].wait()
            self.assertEqual(cm2.exception.errno, errno.ECANCELED)
            self.assertIn("cancel", cm2.exception.message)
            # the request is usable again
            self.assertLessEqual(rel_err(reqs[-1].infer(x)[0], y), 1e-4)

    def test_export_import(self):
        blob = self.cm.export_model()
        self.assertEqual(blob[:8], b"NPRBLOB\0")
        a = self.core.import_model(blob, "CPU")
        self.assertEqual(a.input().shape, (1, 3, 224, 224))
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "sq.blob")
            self.cm.export_model(path)
            b = self.core.compile_model(path, "CPU")
        ref = self.cm(self.x1)[0]
        self.assertTrue(np.array_equal(a(self.x1)[0], ref))
        self.assertTrue(np.array_equal(b(self.x1)[0], ref))
        with self.assertRaises(npuring.Error) as cm:
            self.core.import_model(b"not a blob at all", "CPU")
        self.assertEqual(cm.exception.errno, errno.ENOEXEC)
        with self.assertRaises(npuring.Error) as cm:
            self.core.import_model(blob[:len(blob) // 2], "CPU")
        self.assertEqual(cm.exception.errno, errno.EBADMSG)

    def test_query_model(self):
        q = self.core.query_model(self.model, "CPU")
        self.assertIn("input", q)
        self.assertEqual(set(q.values()), {"CPU"})
        self.assertGreater(len(q), 50)

    def test_profiling(self):
        with self.assertRaises(npuring.Error) as cm:
            self.cm.create_infer_request().get_profiling_info()
        self.assertEqual(cm.exception.errno, errno.ENODATA)
        prof = self.core.compile_model(self.model, "CPU",
                                       {"ENABLE_PROFILING": True})
        req = prof.create_infer_request()
        self.assertEqual({p.status for p in req.profiling_info},
                         {"NOT_RUN", "OPTIMIZED_OUT"})
        req.infer(self.x1)
        recs = req.get_profiling_info()
        run = [r for r in recs if r.status == "EXECUTED"]
        self.assertTrue(run)
        self.assertIn("Convolution", {r.node_type for r in run})
        self.assertTrue(all(r.exec_type for r in run))
        self.assertGreater(sum(r.real_time_ns for r in run), 0)

    def test_error_paths(self):
        req = self.cm.create_infer_request()
        with self.assertRaises(npuring.Error) as cm:
            req.set_tensor("input", np.zeros((1, 3, 224, 225), np.float32))
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        self.assertIn("input", cm.exception.message)
        with self.assertRaises(npuring.Error) as cm:
            req.set_tensor("nosuch", self.x1)
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertIn("input", cm.exception.message)
        for key in ("output", self.cm.output()):
            with self.assertRaises(npuring.Error) as cm:
                req.set_tensor(key, np.zeros((1, 1000), np.float32))
            self.assertEqual(cm.exception.errno, errno.EOPNOTSUPP)
        self.assertEqual(req.get_tensor(self.cm.input()).shape,
                         (1, 3, 224, 224))
        with self.assertRaises(npuring.Error) as cm:
            self.core.read_model("/nonexistent/model.onnx")
        self.assertEqual(cm.exception.errno, errno.ENOENT)
        self.assertIn("model.onnx", cm.exception.message)
        with self.assertRaises(npuring.Error) as cm:
            self.core.read_model(b"<net>not closed")
        self.assertEqual(cm.exception.errno, errno.EINVAL)
        d = npuring.Device("cpu")
        cm2 = d.compile_model(self.model)
        d.close()
        with self.assertRaises(npuring.Error) as cm:
            cm2.create_infer_request()
        self.assertEqual(cm.exception.errno, errno.EBADF)


class State(unittest.TestCase):
    def test_adder(self):
        need(ADDER)
        with npuring.Device("cpu") as d:
            req = d.compile_model(ADDER).create_infer_request()
            st = req.query_state()
            self.assertEqual([(s.name, s.shape) for s in st],
                             [("variable0", (1, 1))])
            v = st[0]
            self.assertEqual(v.get_state()[0, 0], 0)
            one = np.ones((1, 1), np.float32)
            self.assertEqual(req.infer(one)[0][0, 0], 1)
            self.assertEqual(req.infer(one)[0][0, 0], 2)
            self.assertEqual(v.state[0, 0], 2)
            v.set_state(np.full((1, 1), 10, np.float32))
            self.assertEqual(req.infer(one)[0][0, 0], 11)
            v.reset()
            self.assertEqual(req.infer(one)[0][0, 0], 1)
            req.infer(one)
            req.reset_state()
            self.assertEqual(v.get_state()[0, 0], 0)
            with self.assertRaises(npuring.Error) as cm:
                v.set_state(np.zeros((1, 2), np.float32))
            self.assertEqual(cm.exception.errno, errno.EINVAL)
            other = d.compile_model(ADDER).create_infer_request()
            self.assertEqual(other.query_state()[0].get_state()[0, 0], 0)


class KvCache(unittest.TestCase):
    """A language model's KV cache as growing variables: the golden
    tokens of tiny_gpt (PyTorch's), truncate and decode again."""

    def decode(self, req, ids, n):
        out = []
        for _ in range(n):
            logits = req.infer({"input_ids": np.array([ids], np.int64)})[0]
            ids = [int(np.argmax(logits[0, -1]))]
            out.append(ids[0])
        return out

    def test_tiny_gpt_golden_tokens_and_truncate(self):
        need(TINY_GPT + ".onnx", TINY_GPT + ".json")
        with open(TINY_GPT + ".json") as f:
            gold = json.load(f)
        tokens = [int(t) for t in np.fromfile(TINY_GPT + ".tokens.i64",
                                                np.int64)]
        prompt, want = gold["prompt"], tokens[len(gold["prompt"]):]
        with npuring.Device("cpu") as d:
            m = d.read_model(TINY_GPT + ".onnx")
            m.make_stateful({"past_key_values.*": "present.*"},
                            pattern=True)
            self.assertEqual([p.name for p in m.inputs], ["input_ids"])
            req = d.compile_model(m).create_infer_request()
            st = req.query_state()
            self.assertEqual(len(st), 2 * gold["layers"])
            self.assertEqual(st[0].shape, (1, gold["heads"], -1,
                                           gold["head_dim"]))
            got = self.decode(req, prompt, 8)
            self.assertEqual(got, want[:8])
            # the prompt and 7 fed-back tokens are in the cache
            n = len(prompt) + 7
            self.assertEqual(st[0].get_state().shape[2], n)
            # roll the last 4 tokens back, then decode them again
            for v in st:
                v.truncate(n - 4)
            self.assertEqual(st[1].get_state().shape[2], n - 4)
            self.assertEqual(self.decode(req, [want[3]], 4), want[4:8])
            with self.assertRaises(npuring.Error) as cm:
                st[0].truncate(1000)
            self.assertEqual(cm.exception.errno, errno.EINVAL)
            req.reset_state()
            self.assertEqual(st[0].get_state().shape[2], 0)
            self.assertEqual(self.decode(req, prompt, 2), want[:2])


class Ktap(unittest.TextTestResult):
    """unittest results as KTAP lines."""

    def __init__(self, stream, descriptions, verbosity):
        super().__init__(stream, descriptions, verbosity)
        self.n = 0

    def _line(self, test, status, note=""):
        self.n += 1
        name = "%s.%s" % (type(test).__name__, test._testMethodName) \
            if hasattr(test, "_testMethodName") else str(test)
        print("%s %d %s%s" % (status, self.n, name, note), flush=True)

    def addSuccess(self, test):
        unittest.TestResult.addSuccess(self, test)
        self._line(test, "ok")

    def addSkip(self, test, reason):
        unittest.TestResult.addSkip(self, test, reason)
        # a skip in setUpClass stands for each test of that class
        m = re.match(r"setUpClass \(\w+\.(\w+)\)$", str(test))
        held = [t for t in self.cases
                if m and type(t).__name__ == m.group(1)]
        for t in held or [test]:
            self._line(t, "ok", " # SKIP " + reason)

    def _fail(self, test, err):
        for ln in self._exc_info_to_string(err, test).splitlines():
            print("# " + ln)
        self._line(test, "not ok")

    def addFailure(self, test, err):
        unittest.TestResult.addFailure(self, test, err)
        self._fail(test, err)

    def addError(self, test, err):
        unittest.TestResult.addError(self, test, err)
        self._fail(test, err)

    def printErrors(self):
        pass


def main():
    suite = unittest.defaultTestLoader.loadTestsFromModule(
        sys.modules[__name__])
    args = sys.argv[1:]
    listing = args[:1] == ["-l"]
    want = args[1:] if listing else args
    flat = []

    def walk(s):
        for t in s:
            if isinstance(t, unittest.TestSuite):
                walk(t)
            elif not want or any(w in t.id() for w in want):
                flat.append(t)
    walk(suite)
    if listing:
        for t in flat:
            print("%s.%s" % (type(t).__name__, t._testMethodName))
        return
    suite = unittest.TestSuite(flat)
    Ktap.cases = flat
    print("TAP version 13")
    print("1..%d" % suite.countTestCases(), flush=True)
    runner = unittest.TextTestRunner(resultclass=Ktap, verbosity=0,
                                     stream=open(os.devnull, "w"))
    res = runner.run(suite)
    print("# Totals: pass:%d fail:%d skip:%d" % (
        res.testsRun - len(res.failures) - len(res.errors) -
        len(res.skipped), len(res.failures) + len(res.errors),
        len(res.skipped)))
    sys.exit(0 if res.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
