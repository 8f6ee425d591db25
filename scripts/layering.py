#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Check npuring's layering rules (Documentation/design.rst, "Layers").

Reads the #include "..." lines of every source file and the symbols of
every object file (nm -P), and turns both into edges between files: an
include is an edge to the header, a call or a use of a variable an edge
from the object's .c to the .c that defines the symbol.  Then checks:

  backends    nothing in lib/ names ref/, npu/ or the null backend
              (lib/null.c), except the backend registry (lib/backend.c)
  frontends   lib/graph, lib/ops, lib/passes, lib/ir, lib/onnx reach no
              device, handle or ioctl: nothing of lib/'s top level (but
              lib/error.c, which every layer reports through), lib/ring
              or lib/store
  ring        lib/ring does not call the ioctl entry point (lib/dev.c)
  commands    lib/model.c and lib/request.c do not call each other
  siblings    ref/ and npu/ do not call each other
  public      tools/ and examples/ use only lib/include/ and uapi/
  circles     no two files in different folders depend on each other,
              directly or through others
  size        no source file (lib, ref, npu, tools, examples, selftests)
              is longer than 1,500 lines
  prefix      every symbol the library defines for other files starts
              with npr_ (but the generated protobuf code's, and the
              software NPU's Level Zero entry points)
  environment the library (lib, ref, npu but the software NPU) reads
              its environment only through npr_env() (lib/sys.c): no
              other source calls getenv(), no other object links it;
              every name in npr_env()'s table is in
              Documentation/environment.rst

Usage: layering.py --src DIR --obj DIR [--ktap]

Without --ktap it prints one line per violation and exits 1 if there is
any.  With --ktap it prints one KTAP result per rule (for selftests/run.sh),
then three more for the checker itself: a copy of the tree with a
planted include of ref/ in lib/passes, one with a planted object in
lib/graph that calls a function of ref/, and one with a planted getenv()
in lib/, must each fail; it exits 0 only if every result is ok.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

SRC_DIRS = ("lib", "ref", "npu", "tools", "examples", "uapi")
FRONT = ("lib/graph", "lib/ops", "lib/passes", "lib/ir", "lib/onnx")
INC_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module(path):
    """The file an object was built from (lib/ops/nn.o: lib/ops/nn.c)."""
    return path[:-2] + ".c" if path.endswith(".o") else path


def folder(mod):
    return os.path.dirname(mod)


def under(mod, *prefixes):
    return any(mod == p or mod.startswith(p + "/") for p in prefixes)


class Tree:
    def __init__(self, src, obj):
        self.src = os.path.abspath(src)
        self.obj = os.path.abspath(obj)
        # (from module, to module) -> why, e.g. 'includes "ref/gemm.h"'
        self.edges = {}
        self.files = []
        self.objects = {}
        self.read_includes()
        self.read_symbols()
        self.exported = self.read_map()

    def add(self, a, b, why):
        if a != b:
            self.edges.setdefault((a, b), why)

    def read_includes(self):
        for top in SRC_DIRS:
            for dirpath, _, names in os.walk(os.path.join(self.src, top)):
                for n in sorted(names):
                    if n.endswith((".c", ".h")):
                        rel = os.path.relpath(os.path.join(dirpath, n),
                                              self.src)
                        self.files.append(rel)
        known = set(self.files)
        for f in self.files:
            with open(os.path.join(self.src, f), errors="replace") as fh:
                text = fh.read()
            for inc in INC_RE.findall(text):
                to = self.resolve(f, inc, known)
                if to:
                    self.add(module(f), module(to), 'includes "%s"' % inc)

    def resolve(self, f, inc, known):
        for base in (os.path.dirname(f), "", "lib", "lib/include"):
            p = os.path.normpath(os.path.join(base, inc))
            if p in known:
                return p
        if inc == "onnx.pb-c.h":
            return "lib/onnx/gen/onnx.pb-c.h"
        return None

    def read_symbols(self):
        defined = {}
        undefined = {}
        self.kinds = {}
        for top in SRC_DIRS:
            for dirpath, _, names in os.walk(os.path.join(self.obj, top),
                                             followlinks=True):
                for n in sorted(names):
                    if not n.endswith(".o"):
                        continue
                    p = os.path.join(dirpath, n)
                    rel = os.path.relpath(p, self.obj)
                    c = module(rel)
                    # an object left behind by a source since removed
                    # is not part of the build
                    if os.path.exists(os.path.join(self.src, c)) or \
                       os.path.exists(os.path.join(self.obj, c)):
                        self.objects[c] = p
        for mod, p in sorted(self.objects.items()):
            out = subprocess.run(["nm", "-P", p], capture_output=True,
                                 text=True).stdout
            for line in out.splitlines():
                parts = line.split()
                if len(parts) < 2:
                    continue
                sym, kind = parts[0], parts[1]
                if kind == "U":
                    undefined.setdefault(mod, set()).add(sym)
                elif kind in "TDBRVWG" and kind.isupper():
                    defined.setdefault(sym, mod)
                    self.kinds.setdefault(sym, kind)
        self.defined = defined
        for mod, syms in undefined.items():
            for s in sorted(syms):
                to = defined.get(s)
                if to:
                    verb = "calls %s()" if self.kinds[s] in "TW" else "uses %s"
                    self.add(mod, to, verb % s)
        self.undefined = undefined

    def read_map(self):
        names = set()
        p = os.path.join(self.src, "lib", "npuring.map")
        if os.path.exists(p):
            with open(p) as fh:
                for line in fh:
                    m = re.match(r"\s*([A-Za-z_]\w*);", line)
                    if m:
                        names.add(m.group(1))
        return names


def rule_backends(t):
    for (a, b), why in t.edges.items():
        if under(a, "lib") and a not in ("lib/backend.c", "lib/null.c") \
           and (under(b, "ref", "npu") or b == "lib/null.c"):
            yield "%s %s (%s): only lib/backend.c names a backend" % (a, why, b)


def rule_frontends(t):
    for (a, b), why in t.edges.items():
        if not under(a, *FRONT):
            continue
        core = (folder(b) == "lib" and not b.startswith("lib/error.")) or \
            under(b, "lib/ring", "lib/store")
        if core:
            yield "%s %s (%s): a graph layer reaches the device layer" % (
                a, why, b)


def rule_ring(t):
    for (a, b), why in t.edges.items():
        if under(a, "lib/ring") and (b == "lib/dev.c" or
                                     "npr_ioctl(" in why):
            yield "%s %s (%s): the ring calls the ioctl layer" % (a, why, b)


def rule_commands(t):
    pair = {"lib/model.c", "lib/model.h", "lib/request.c", "lib/request.h"}
    for (a, b), why in t.edges.items():
        if a in pair and b in pair and a[:-2] != b[:-2]:
            yield "%s %s (%s): command handlers call each other" % (a, why, b)


def rule_siblings(t):
    for (a, b), why in t.edges.items():
        if (under(a, "ref") and under(b, "npu")) or \
           (under(a, "npu") and under(b, "ref")):
            yield "%s %s (%s): ref/ and npu/ are siblings" % (a, why, b)


def rule_public(t):
    for (a, b), why in t.edges.items():
        if not under(a, "tools", "examples") or not why.startswith("incl"):
            continue
        if under(b, "lib/include", "uapi", folder(a)):
            continue
        yield "%s %s (%s): tools and examples use the public API only" % (
            a, why, b)
    for a, syms in t.undefined.items():
        if not under(a, "tools", "examples"):
            continue
        for s in sorted(syms):
            b = t.defined.get(s)
            if b and under(b, "lib", "ref", "npu") and s not in t.exported:
                yield "%s calls %s(), which lib/npuring.map does not " \
                      "export" % (a, s)


def sccs(nodes, succ):
    """Tarjan's strongly connected components, iteratively."""
    index, low, onstack, stack, out = {}, {}, set(), [], []
    counter = [0]
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(succ.get(root, ())))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        onstack.add(root)
        while work:
            v, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    onstack.add(w)
                    work.append((w, iter(succ.get(w, ()))))
                    advanced = True
                    break
                if w in onstack:
                    low[v] = min(low[v], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    onstack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def rule_circles(t):
    succ = {}
    nodes = set()
    for a, b in t.edges:
        if under(a, "selftests") or under(b, "selftests"):
            continue
        succ.setdefault(a, set()).add(b)
        nodes.update((a, b))
    for comp in sccs(sorted(nodes), {k: sorted(v) for k, v in succ.items()}):
        if len({folder(m) for m in comp}) < 2:
            continue
        inside = set(comp)
        links = ["%s %s (%s)" % (a, why, b)
                 for (a, b), why in sorted(t.edges.items())
                 if a in inside and b in inside and folder(a) != folder(b)]
        yield "a circle across folders: %s; %s" % (
            ", ".join(comp), "; ".join(links[:6]))


MAX_LINES = 1500


def rule_size(t):
    for top in SRC_DIRS + ("selftests",):
        for dirpath, _, names in os.walk(os.path.join(t.src, top)):
            if os.path.basename(dirpath) == "gen":
                continue  # generated code (lib/onnx/gen/ in an O=. build)
            for n in sorted(names):
                if not n.endswith((".c", ".h")):
                    continue
                p = os.path.join(dirpath, n)
                with open(p, errors="replace") as fh:
                    lines = sum(1 for _ in fh)
                if lines > MAX_LINES:
                    yield "%s has %d lines, over %d" % (
                        os.path.relpath(p, t.src), lines, MAX_LINES)


def rule_prefix(t):
    for mod, p in sorted(t.objects.items()):
        if not under(mod, "lib", "ref", "npu") or \
           under(mod, "lib/onnx/gen", "npu/vnpu"):
            continue
        out = subprocess.run(["nm", "-P", "--defined-only", p],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            # "__" names are the compiler's (ASan's __odr_asan.*)
            if len(parts) >= 2 and parts[1] in "TDBRVWG" and \
               parts[1].isupper() and not parts[0].startswith("npr_") \
               and not parts[0].startswith("__"):
                yield "%s defines %s without the npr_ prefix" % (mod,
                                                                 parts[0])


ENV_HOME = "lib/sys.c"
ENV_DOC = "Documentation/environment.rst"
GETENV_RE = re.compile(r"\b(?:secure_)?getenv\s*\(")
ENV_NAME_RE = re.compile(r'\[NPR_ENV_\w+\]\s*=\s*\{\s*"(\w+)"')


def env_sources(src):
    """The library's .c and .h files whose environment npr_env() reads."""
    for top in ("lib", "ref", "npu"):
        for dirpath, _, names in os.walk(os.path.join(src, top)):
            rel = os.path.relpath(dirpath, src)
            if under(rel, "npu/vnpu", "lib/onnx/gen"):
                continue
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.join(rel, n)


def rule_environment(t):
    for f in env_sources(t.src):
        if f == ENV_HOME:
            continue
        with open(os.path.join(t.src, f), errors="replace") as fh:
            for i, line in enumerate(fh, 1):
                if GETENV_RE.search(line):
                    yield "%s:%d reads the environment: use npr_env() " \
                          "(%s)" % (f, i, ENV_HOME)
    for mod, syms in sorted(t.undefined.items()):
        if mod == ENV_HOME or not under(mod, "lib", "ref", "npu") or \
           under(mod, "npu/vnpu", "lib/onnx/gen"):
            continue
        for s in sorted(syms & {"getenv", "secure_getenv"}):
            yield "%s calls %s(): use npr_env() (%s)" % (mod, s, ENV_HOME)
    with open(os.path.join(t.src, ENV_HOME)) as fh:
        table = fh.read()
    names = ENV_NAME_RE.findall(table)
    if not names:
        yield "%s: no npr_env() table found" % ENV_HOME
        return
    with open(os.path.join(t.src, "lib", "sys.h")) as fh:
        ids = set(re.findall(r"^\s*(NPR_ENV_\w+),", fh.read(), re.M))
    for i in sorted(ids - set(re.findall(r"\[(NPR_ENV_\w+)\]", table))):
        yield "%s has no entry for %s" % (ENV_HOME, i)
    doc = os.path.join(t.src, ENV_DOC)
    text = open(doc).read() if os.path.exists(doc) else ""
    for n in names:
        if "``%s``" % n not in text:
            yield "%s (%s) is not in %s" % (n, ENV_HOME, ENV_DOC)


RULES = [
    ("lib_names_no_backend_but_the_registry", rule_backends),
    ("graph_layers_reach_no_device", rule_frontends),
    ("ring_does_not_call_the_ioctl_layer", rule_ring),
    ("model_and_request_do_not_call_each_other", rule_commands),
    ("ref_and_npu_do_not_call_each_other", rule_siblings),
    ("tools_and_examples_use_the_public_api", rule_public),
    ("no_circle_across_folders", rule_circles),
    ("no_source_file_over_1500_lines", rule_size),
    ("library_symbols_carry_the_prefix", rule_prefix),
    ("environment_read_in_one_place", rule_environment),
]


def shadow(src, dst, exts):
    """@dst mirrors the files of @src ending in @exts, as symbolic links."""
    for top in SRC_DIRS:
        for dirpath, _, names in os.walk(os.path.join(src, top),
                                         followlinks=True):
            for n in names:
                if n.endswith(exts):
                    p = os.path.join(dirpath, n)
                    q = os.path.join(dst, os.path.relpath(p, src))
                    os.makedirs(os.path.dirname(q), exist_ok=True)
                    os.symlink(os.path.realpath(p), q)
    m = os.path.join(src, "lib", "npuring.map")
    if os.path.exists(m) and not os.path.exists(os.path.join(dst, "lib",
                                                             "npuring.map")):
        os.symlink(m, os.path.join(dst, "lib", "npuring.map"))


def planted_include(t):
    """A lib/passes file that includes a ref/ header must be caught."""
    victim = sorted(f for f in t.files
                    if f.startswith("lib/passes/") and f.endswith(".c"))[0]
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "src"), os.path.join(d, "obj")
        shadow(t.src, src, (".c", ".h"))
        shadow(t.obj, obj, (".o",))
        os.unlink(os.path.join(src, victim))
        with open(os.path.join(t.src, victim)) as fh:
            text = fh.read()
        with open(os.path.join(src, victim), "w") as fh:
            fh.write(text + '\n#include "ref/threads.h"\n')
        found = list(rule_backends(Tree(src, obj)))
    want = victim + ' includes "ref/threads.h"'
    return [] if any(v.startswith(want) for v in found) else \
        ["a planted include in %s was not reported" % victim]


def planted_call(t):
    """An object in lib/graph that calls into ref/ must be caught."""
    target = sorted(s for s, m in t.defined.items()
                    if under(m, "ref") and s.startswith("npr_") and
                    t.kinds.get(s) == "T")[0]
    cc = os.environ.get("CC") or "cc"
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "src"), os.path.join(d, "obj")
        shadow(t.src, src, (".c", ".h"))
        shadow(t.obj, obj, (".o",))
        c = os.path.join(src, "lib", "graph", "planted.c")
        with open(c, "w") as fh:
            fh.write("void %s(void);\nvoid planted(void) { %s(); }\n" %
                     (target, target))
        subprocess.run([cc, "-c", c, "-o",
                        os.path.join(obj, "lib", "graph", "planted.o")],
                       check=True)
        found = list(rule_backends(Tree(src, obj)))
    want = "lib/graph/planted.c calls %s()" % target
    return [] if any(v.startswith(want) for v in found) else \
        ["a planted call of %s() in lib/graph was not reported" % target]


def planted_getenv(t):
    """A getenv() in lib/ outside lib/sys.c must be caught."""
    victim = "lib/tensor.c"
    with tempfile.TemporaryDirectory() as d:
        src, obj = os.path.join(d, "src"), os.path.join(d, "obj")
        shadow(t.src, src, (".c", ".h"))
        shadow(t.obj, obj, (".o",))
        for f in (ENV_HOME, victim):
            os.unlink(os.path.join(src, f))
            with open(os.path.join(t.src, f)) as fh:
                text = fh.read()
            if f == victim:
                text += '\nconst char *planted(void) ' \
                        '{ return getenv("NPR_PLANTED"); }\n'
            with open(os.path.join(src, f), "w") as fh:
                fh.write(text)
        os.makedirs(os.path.join(src, "Documentation"), exist_ok=True)
        if os.path.exists(os.path.join(t.src, ENV_DOC)):
            os.symlink(os.path.join(t.src, ENV_DOC),
                       os.path.join(src, ENV_DOC))
        found = list(rule_environment(Tree(src, obj)))
    want = victim + ":"
    return [] if any(v.startswith(want) and "npr_env()" in v
                     for v in found) else \
        ["a planted getenv() in %s was not reported" % victim]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--obj", required=True)
    ap.add_argument("--ktap", action="store_true")
    args = ap.parse_args()
    t = Tree(args.src, args.obj)
    if not t.objects:
        print("layering: no object files under %s: build first" % args.obj,
              file=sys.stderr)
        return 2
    bad = 0
    rules = list(RULES)
    if args.ktap:
        rules += [("catches_a_planted_include", planted_include),
                  ("catches_a_planted_call", planted_call),
                  ("catches_a_planted_getenv", planted_getenv)]
        print("TAP version 13")
        print("1..%d" % len(rules))
    for i, (name, rule) in enumerate(rules, 1):
        found = sorted(set(rule(t)))
        bad += len(found)
        for v in found:
            print(("# " if args.ktap else "") + "layering: " + v)
        if args.ktap:
            print("%s %d layering.%s" % ("not ok" if found else "ok", i,
                                         name))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
