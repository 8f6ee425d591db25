# SPDX-License-Identifier: MIT
"""Infer requests: tensors, sync and async inference through the ring,
asyncio, state and profiling."""
import asyncio
import collections
import ctypes
import errno
import time

import numpy as np

from . import uapi
from ._core import Port, dtype_of, find_port
from ._lib import Error, fail, ioctl, job_error, try_ioctl

ProfilingInfo = collections.namedtuple(
    "ProfilingInfo", "node_name node_type exec_type status real_time_ns")
ProfilingInfo.__doc__ = """One node of a profile (NPR_IOCTL_PROFILE): its
name in the original model, op type, the kernel that ran ("" if none),
status ("EXECUTED", "OPTIMIZED_OUT" or "NOT_RUN") and wall-clock time in
the last inference in ns."""

_PROF_STATUS = {uapi.PROF_NOT_RUN: "NOT_RUN",
                uapi.PROF_EXECUTED: "EXECUTED",
                uapi.PROF_OPTIMIZED_OUT: "OPTIMIZED_OUT"}

_REAP_BATCH = 32


class Results(dict):
    """Output arrays by output name; also indexed by position or Port."""

    def __init__(self, ports, arrays):
        super().__init__(zip((p.name for p in ports), arrays))
        self._names = [p.name for p in ports]

    def __getitem__(self, key):
        if isinstance(key, Port):
            key = key.name
        elif isinstance(key, int):
            key = self._names[key]
        return super().__getitem__(key)

    def to_tuple(self):
        return tuple(self[n] for n in self._names)


# ---- the device's ring ------------------------------------------------------

def _ring(dev):
    if dev._ring is None:
        a = uapi.ring_setup()
        ioctl(dev.fd, uapi.IOCTL_RING_SETUP, a)
        dev._ring = a
    return dev._ring


def ring_info(dev):
    """The device's completion path: {"fd", "path" ("io_uring" or
    "fallback"), "workers", "cq_entries"}; sets the ring up."""
    r = _ring(dev)
    return {"fd": r.ring_fd, "workers": r.workers,
            "cq_entries": r.cq_entries,
            "path": "io_uring" if r.path == uapi.RING_PATH_URING
            else "fallback"}


def _submit_sqe(dev, s):
    a = uapi.submit(sqes=ctypes.addressof(s), count=1)
    while True:
        ret = try_ioctl(dev.fd, uapi.IOCTL_SUBMIT, a)
        if ret == -errno.EBUSY:
            # every completion slot is taken: make room
            _reap(dev, 1, None)
            continue
        if ret < 0:
            fail(ret)
        return


def _submit(dev, req, fut=None, loop=None):
    _ring(dev)
    ud = dev._next_ud
    dev._next_ud += 1
    s = uapi.sqe(opcode=uapi.OP_INFER, handle=req.handle, user_data=ud)
    _submit_sqe(dev, s)
    req._ud = ud
    req._future = fut
    req._failure = None
    dev._jobs[ud] = req
    if fut is not None:
        _watch(dev, loop)


def _reap(dev, minimum, timeout):
    """Reap what is there (@minimum 0) or wait for @minimum completions at
    most @timeout seconds (None: forever); dispatch them."""
    cq = (uapi.cqe * _REAP_BATCH)()
    tmo = 0 if timeout is None else max(int(timeout * 1e9), 1)
    a = uapi.reap(cqes=ctypes.addressof(cq), max=_REAP_BATCH, min=minimum,
                  timeout_ns=tmo)
    ret = try_ioctl(dev.fd, uapi.IOCTL_REAP, a)
    if ret < 0 and ret != -errno.ETIME:
        fail(ret)
    for i in range(a.count):
        _complete(dev, cq[i])
    return a.count


def _complete(dev, c):
    req = dev._jobs.pop(c.user_data, None)
    if req is None:
        return		# a CANCEL job's own completion
    req._ud = 0
    req.latency_ns = c.finished_ns - c.started_ns
    err = None
    if c.res < 0:
        err = Error(-c.res, job_error(dev.fd, c.user_data, c.res))
    fut, req._future = req._future, None
    if fut is None:
        req._failure = err
        return
    dev._watched -= 1
    if not fut.done():
        if err is not None:
            fut.set_exception(err)
        else:
            fut.set_result(None)
    if not dev._watched:
        _unwatch(dev)


def _on_readable(dev):
    try:
        while _reap(dev, 0, None) == _REAP_BATCH:
            pass
    except Error as e:
        for req in list(dev._jobs.values()):
            if req._future is not None and not req._future.done():
                req._future.set_exception(e)


def _watch(dev, loop):
    if dev._loop is not loop:
        if dev._loop is not None:
            if dev._watched:
                raise Error(errno.EBUSY, "the device's ring is watched by another event loop")
            _unwatch(dev)
        loop.add_reader(dev._ring.ring_fd, _on_readable, dev)
        dev._loop = loop
    dev._watched += 1


def _unwatch(dev):
    if dev._loop is not None:
        if not dev._loop.is_closed():
            dev._loop.remove_reader(dev._ring.ring_fd)
        dev._loop = None


def _close_jobs(dev):
    """Device.close(): jobs in flight get no completion."""
    if dev._ring is not None:
        _unwatch(dev)
    for req in dev._jobs.values():
        req._ud = 0
        fut, req._future = req._future, None
        if fut is not None and not fut.done():
            fut.set_exception(Error(errno.EBADF, "the device was closed"))
    dev._jobs.clear()
    dev._watched = 0


# ---- requests ---------------------------------------------------------------

class VariableState:
    """One variable (ReadValue/Assign) of a request of a stateful model."""

    def __init__(self, req, index, name, elem_type, shape):
        self._req = req
        self.index = index
        self.name = name
        self.elem_type = elem_type
        self.shape = shape

    def get_name(self):
        return self.name

    def _current_shape(self):
        """The shape now: a growing variable's length is the current one."""
        if all(d >= 0 for d in self.shape):
            return self.shape
        a = uapi.state_arg(req=self._req.handle, index=self.index)
        ret = try_ioctl(self._req.device.fd, uapi.IOCTL_STATE_GET, a)
        if ret < 0 and ret != -errno.EMSGSIZE:
            fail(ret)
        return tuple(a.dims[:a.rank])

    def get_state(self):
        """The current value, as a new array."""
        dt = dtype_of(self.elem_type)
        arr = np.empty(self._current_shape(), dt)
        a = uapi.state_arg(req=self._req.handle, index=self.index,
                           data=arr.ctypes.data, bytes=arr.nbytes)
        ioctl(self._req.device.fd, uapi.IOCTL_STATE_GET, a)
        return arr.reshape(tuple(a.dims[:a.rank]))

    def truncate(self, length):
        """Keep the first @length positions of a growing variable (a KV
        cache: rolling back rejected tokens); at most its current length."""
        axes = [i for i, d in enumerate(self.shape) if d < 0]
        if len(axes) != 1:
            raise Error(errno.EINVAL, "variable %s does not grow: it has no length to truncate"
                        % self.name)
        shape = list(self._current_shape())
        shape[axes[0]] = int(length)
        a = uapi.state_arg(req=self._req.handle, index=self.index,
                           flags=uapi.STATE_TRUNCATE,
                           elem_type=self.elem_type, rank=len(shape))
        _put_dims(a.dims, shape)
        ioctl(self._req.device.fd, uapi.IOCTL_STATE_SET, a)

    def set_state(self, value):
        """Replace the value the next inference reads."""
        arr = np.ascontiguousarray(value, dtype=dtype_of(self.elem_type))
        a = uapi.state_arg(req=self._req.handle, index=self.index,
                           elem_type=self.elem_type, rank=arr.ndim,
                           data=arr.ctypes.data, bytes=arr.nbytes)
        _put_dims(a.dims, arr.shape)
        ioctl(self._req.device.fd, uapi.IOCTL_STATE_SET, a)

    state = property(get_state, set_state)

    def reset(self):
        """Back to the initial value."""
        a = uapi.state_arg(req=self._req.handle, index=self.index)
        ioctl(self._req.device.fd, uapi.IOCTL_STATE_RESET, a)

    def __repr__(self):
        return "<VariableState %s %s>" % (self.name, list(self.shape))


def _put_dims(dims, shape):
    if len(shape) > uapi.MAX_RANK:
        raise Error(errno.EINVAL, "rank %d: at most %d dimensions" %
                    (len(shape), uapi.MAX_RANK))
    for i, d in enumerate(shape):
        dims[i] = d


class InferRequest:
    """A request of a compiled model: its own input and output buffers.

    Inputs set with set_tensor() (or passed to infer()) are bound without
    a copy when the array is C-contiguous, aligned and of the port's dtype;
    any other array is first converted by numpy into a private copy.  The
    request keeps a reference to the bound array: changing it changes the
    next inference's input.  Outputs are copied out of the request's
    buffers (one copy) unless copy=False asks for a view of them, valid
    until the next inference or close()."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.device = compiled.device
        self.handle = 0
        a = uapi.req_create(exec=compiled.handle)
        ioctl(self.device.fd, uapi.IOCTL_REQ_CREATE, a)
        self.handle = a.req
        self._held = {}
        self._ud = 0
        self._future = None
        self._failure = None
        self.latency_ns = None

    @property
    def inputs(self):
        return self.compiled.inputs

    @property
    def outputs(self):
        return self.compiled.outputs

    @property
    def latency(self):
        """The last inference's time in milliseconds."""
        return None if self.latency_ns is None else self.latency_ns / 1e6

    def _idle(self):
        if self._ud:
            raise Error(errno.EBUSY, "the request has an inference in flight: wait() for it first")
        if not self.handle:
            raise Error(errno.EBADF, "the request is closed")

    def _port(self, key):
        try:
            return find_port(self.inputs, key, "input")
        except Error:
            for p in self.outputs:
                if key is p or (isinstance(key, str) and p.name == key):
                    return p
            raise

    def set_tensor(self, key, array):
        """Set input @key (name, index or Port) to @array."""
        self._idle()
        port = self._port(key)
        if port.is_output:
            raise Error(errno.EOPNOTSUPP, "%s is an output: outputs live in the request's buffers"
                        % port.name)
        dt = port.dtype
        arr = np.asarray(array)
        if arr.dtype != dt or not arr.flags.c_contiguous or \
                not arr.flags.aligned:
            arr = np.ascontiguousarray(arr, dtype=dt)
        a = uapi.tensor_arg(flags=uapi.TENSOR_BIND, req=self.handle,
                            index=port.index, elem_type=port.elem_type,
                            rank=arr.ndim, data=arr.ctypes.data,
                            bytes=arr.nbytes)
        _put_dims(a.dims, arr.shape)
        ioctl(self.device.fd, uapi.IOCTL_SET_TENSOR, a)
        self._held[port.index] = arr

    def set_input_tensor(self, index, array):
        self.set_tensor(int(index), array)

    def set_tensors(self, inputs):
        """Set several inputs: {key: array}, a list in input order, or
        one array for a model with one input."""
        if inputs is None:
            return
        if isinstance(inputs, dict):
            items = inputs.items()
        elif isinstance(inputs, (list, tuple)):
            items = enumerate(inputs)
        else:
            items = ((None, inputs),)
        for k, v in items:
            self.set_tensor(k, v)

    def get_tensor(self, key, copy=True):
        """The tensor of output (or input) @key as an array: a copy, or
        with copy=False a view of the request's buffer."""
        try:
            port = find_port(self.outputs, key, "output")
        except Error:
            port = find_port(self.inputs, key, "input")
        if self._ud:
            raise Error(errno.EBUSY, "the request has an inference in flight: wait() for it first")
        a = uapi.tensor_arg(
            flags=(uapi.PORT_OUTPUT if port.is_output else 0) |
            uapi.TENSOR_MAP, req=self.handle, index=port.index)
        ioctl(self.device.fd, uapi.IOCTL_GET_TENSOR, a)
        dt = port.dtype
        shape = tuple(a.dims[:a.rank])
        if not a.bytes:
            return np.zeros(shape, dt)
        raw = (ctypes.c_char * a.bytes).from_address(a.data)
        raw.owner = self	# the view keeps the request alive
        view = np.frombuffer(raw, dt, a.bytes // dt.itemsize).reshape(shape)
        return view.copy() if copy else view

    def get_output_tensor(self, index=0, copy=True):
        return self.get_tensor(find_port(self.outputs, index, "output"),
                               copy)

    def get_input_tensor(self, index=0):
        return self.get_tensor(find_port(self.inputs, index, "input"))

    def results(self, copy=True):
        """Every output, as Results."""
        return Results(self.outputs,
                       [self.get_tensor(p, copy) for p in self.outputs])

    def infer(self, inputs=None, copy=True):
        """Set @inputs, run synchronously (NPR_IOCTL_INFER), return the
        outputs as Results."""
        self._idle()
        self.set_tensors(inputs)
        a = uapi.infer(req=self.handle)
        ioctl(self.device.fd, uapi.IOCTL_INFER, a)
        self.latency_ns = a.finished_ns - a.started_ns
        return self.results(copy)

    def start_async(self, inputs=None):
        """Set @inputs and submit the inference to the device's ring."""
        self._idle()
        self.set_tensors(inputs)
        _submit(self.device, self)

    def wait(self, timeout=None):
        """Wait for the inference start_async() submitted: True when it
        completed (Error if it failed), False if @timeout seconds passed
        first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self._ud:
            left = None
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
            _reap(self.device, 1, left)
        err, self._failure = self._failure, None
        if err is not None:
            raise err
        return True

    def wait_for(self, timeout_ms):
        """OpenVINO's spelling of wait() with a timeout in ms."""
        return self.wait(timeout_ms / 1000.0)

    async def infer_async(self, inputs=None, copy=True):
        """Set @inputs, submit the inference and await its completion,
        which the running event loop learns from the ring's descriptor
        (loop.add_reader; no thread).  Returns the outputs as Results."""
        loop = asyncio.get_running_loop()
        self._idle()
        self.set_tensors(inputs)
        fut = loop.create_future()
        _submit(self.device, self, fut, loop)
        try:
            await fut
        except asyncio.CancelledError:
            self.cancel()
            raise
        return self.results(copy)

    def cancel(self):
        """Ask the ring to cancel the inference in flight (NPR_OP_CANCEL);
        it still completes, with ECANCELED if it was stopped."""
        if not self._ud:
            return
        dev = self.device
        ud = dev._next_ud
        dev._next_ud += 1
        _submit_sqe(dev, uapi.sqe(opcode=uapi.OP_CANCEL, addr=self._ud,
                                  user_data=ud))

    # ---- state ---------------------------------------------------------

    def query_state(self):
        """The variables of a stateful model, as VariableState objects."""
        out = []
        i = 0
        fd = self.device.fd
        while True:
            buf = ctypes.create_string_buffer(256)
            a = uapi.state_arg(req=self.handle, index=i,
                               name=ctypes.addressof(buf), name_len=256)
            ret = try_ioctl(fd, uapi.IOCTL_STATE_INFO, a)
            if ret == -errno.EMSGSIZE:
                buf = ctypes.create_string_buffer(a.name_len)
                a = uapi.state_arg(req=self.handle, index=i,
                                   name=ctypes.addressof(buf),
                                   name_len=len(buf))
                ret = try_ioctl(fd, uapi.IOCTL_STATE_INFO, a)
            if ret == -errno.ENOENT:
                return out
            if ret < 0:
                fail(ret)
            out.append(VariableState(self, i, buf.value.decode(),
                                     a.elem_type, tuple(a.dims[:a.rank])))
            i += 1

    def reset_state(self):
        """Every variable back to its initial value."""
        a = uapi.state_arg(req=self.handle, flags=uapi.STATE_RESET_ALL)
        ioctl(self.device.fd, uapi.IOCTL_STATE_RESET, a)

    # ---- profiling -----------------------------------------------------

    def get_profiling_info(self):
        """Per-node records of the last inference (the model must be
        compiled with ENABLE_PROFILING), as ProfilingInfo."""
        fd = self.device.fd
        a = uapi.profile(req=self.handle)
        ret = try_ioctl(fd, uapi.IOCTL_PROFILE, a)
        if ret < 0 and ret != -errno.EMSGSIZE:
            fail(ret)
        recs = (uapi.profile_rec * max(a.count, 1))()
        a = uapi.profile(req=self.handle, count=a.count,
                         recs=ctypes.addressof(recs))
        ioctl(fd, uapi.IOCTL_PROFILE, a)
        return [ProfilingInfo(r.name.decode(), r.type.decode(),
                              r.kernel.decode(),
                              _PROF_STATUS.get(r.status, str(r.status)),
                              r.real_ns) for r in recs[:a.count]]

    profiling_info = property(get_profiling_info)

    def close(self):
        """Destroy the request (waiting for an inference in flight)."""
        if self._ud and not self.device.closed:
            try:
                self.wait()
            except Error:
                pass
        if self.handle:
            self.device._destroy(self.handle)
            self.handle = 0
        self._held.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass
