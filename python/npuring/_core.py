# SPDX-License-Identifier: MIT
"""Devices, properties, models and compiled models."""
import collections
import ctypes
import errno
import os

from . import uapi
from ._lib import Error, backends, fail, ioctl, lib, try_ioctl

try:
    import numpy as np
except ImportError:		# the binding needs it for tensors only
    np = None

# element type -> numpy dtype name; bf16 travels as its raw 16 bits
_DTYPES = {
    uapi.ELEM_F32: "float32", uapi.ELEM_F16: "float16",
    uapi.ELEM_BF16: "uint16", uapi.ELEM_F64: "float64",
    uapi.ELEM_I8: "int8", uapi.ELEM_U8: "uint8", uapi.ELEM_I16: "int16",
    uapi.ELEM_U16: "uint16", uapi.ELEM_I32: "int32",
    uapi.ELEM_U32: "uint32", uapi.ELEM_I64: "int64",
    uapi.ELEM_U64: "uint64", uapi.ELEM_BOOLEAN: "bool",
}

BLOB_MAGIC = b"NPRBLOB\0"

PropertyInfo = collections.namedtuple(
    "PropertyInfo", "name id type writable compile caching")
PropertyInfo.__doc__ = """One property of a device or compiled model
(NPR_IOCTL_PROP_INFO): its OpenVINO name, id, type ("int", "bool",
"string", "enum", "list", "int_list"), and whether it is writable on the
device, accepted by compile_model() and part of the cache key."""

DeviceInfo = collections.namedtuple(
    "DeviceInfo", "name full_name arch type caps num_threads api_version")

_PROP_TYPES = {uapi.PROP_INT: "int", uapi.PROP_BOOL: "bool",
               uapi.PROP_STRING: "string", uapi.PROP_ENUM: "enum",
               uapi.PROP_LIST: "list", uapi.PROP_INT_LIST: "int_list"}


def elem_name(elem_type):
    """The library's short name of an element type ("f32", "i64")."""
    return lib.npr_elem_name(elem_type).decode()


def dtype_of(elem_type):
    """The numpy dtype of an element type (bf16: uint16, its raw bits)."""
    name = _DTYPES.get(elem_type)
    if name is None:
        raise Error(errno.EOPNOTSUPP, "element type %s has no numpy dtype"
                    % elem_name(elem_type))
    return np.dtype(name)


def _enum_table(prop):
    if prop == "INFERENCE_PRECISION_HINT":
        return {elem_name(t): t for t in range(1, uapi.ELEM_MAX)}
    return {"PERFORMANCE_HINT": uapi.PERF_HINTS,
            "LOG_LEVEL": uapi.LOG_LEVELS,
            "EXECUTION_MODE_HINT": uapi.EXEC_MODES,
            "MODEL_PRIORITY": uapi.PRIORITIES,
            "DEVICE_TYPE": uapi.DEVICE_KINDS}.get(prop, {})


def _bool_of(name, value):
    if isinstance(value, str):
        v = value.upper()
        if v in ("YES", "TRUE", "ON", "1"):
            return 1
        if v in ("NO", "FALSE", "OFF", "0"):
            return 0
    elif isinstance(value, (bool, int)) and value in (0, 1):
        return int(value)
    raise Error(errno.EINVAL, "%s is a boolean: %r is not one" %
                (name, value))


def _int_of(name, value):
    if isinstance(value, bool) or not isinstance(value, int):
        try:
            value = int(value, 0) if isinstance(value, str) else None
        except ValueError:
            value = None
        if value is None:
            raise Error(errno.EINVAL, "%s is an integer: %r is not one"
                        % (name, value))
    if not -(1 << 63) <= value < (1 << 63):
        raise Error(errno.ERANGE, "%s: %d does not fit in 64 bits" %
                    (name, value))
    return value & ((1 << 64) - 1)


def _c_str(value):
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, str):
        value = value.encode()
    return ctypes.create_string_buffer(bytes(value))


class Port:
    """An input or output of a model or compiled model."""

    def __init__(self, index, output, name, elem_type, shape):
        self.index = index
        self.is_output = output
        self.name = name
        self.elem_type = elem_type
        self.shape = shape
        self.value_dependent = False

    @property
    def element_type(self):
        """The element type's short name ("f32")."""
        return elem_name(self.elem_type)

    @property
    def dtype(self):
        """The numpy dtype arrays for this port have."""
        return dtype_of(self.elem_type)

    @property
    def is_dynamic(self):
        """Whether a dimension is unknown (-1), or the shape depends on
        input values (then ``shape`` is ())."""
        return self.value_dependent or any(d < 0 for d in self.shape)

    def get_any_name(self):
        return self.name

    def get_shape(self):
        return self.shape

    def get_element_type(self):
        return self.element_type

    def get_index(self):
        return self.index

    def __repr__(self):
        return "<Port %s %s %s %s>" % (
            "output" if self.is_output else "input", self.name,
            self.element_type, list(self.shape))


def _read_ports(fd, handle):
    info = uapi.model_info(handle=handle)
    ioctl(fd, uapi.IOCTL_MODEL_INFO, info)
    ports = ([], [])
    for output, n in ((0, info.num_inputs), (1, info.num_outputs)):
        for i in range(n):
            buf = ctypes.create_string_buffer(256)
            while True:
                a = uapi.port_info(flags=uapi.PORT_OUTPUT if output else 0,
                                   handle=handle, index=i,
                                   name=ctypes.addressof(buf),
                                   name_len=len(buf))
                ret = try_ioctl(fd, uapi.IOCTL_PORT_INFO, a)
                if ret == -errno.EMSGSIZE:
                    buf = ctypes.create_string_buffer(a.name_len)
                    continue
                if ret < 0:
                    fail(ret)
                break
            if a.rank == 0 and a.dims[0] == -1:
                shape = ()	# depends on input values
                dyn = True
            else:
                shape = tuple(a.dims[:a.rank])
                dyn = False
            p = Port(i, bool(output), buf.value.decode(), a.elem_type,
                     shape)
            p.value_dependent = dyn
            ports[output].append(p)
    return info, ports[0], ports[1]


def find_port(ports, key, what):
    """The port of @ports named by @key: None (the only one), an index, a
    name or a Port."""
    if key is None:
        if len(ports) != 1:
            raise Error(errno.EINVAL, "the model has %d %ss: name one (%s)"
                        % (len(ports), what,
                           ", ".join(p.name for p in ports)))
        return ports[0]
    if isinstance(key, Port):
        if key.is_output != (what == "output"):
            raise Error(errno.EINVAL, "%s is an %s, not an %s" % (
                key.name, "output" if key.is_output else "input", what))
        key = key.index
    if isinstance(key, int):
        if 0 <= key < len(ports):
            return ports[key]
        raise Error(errno.EINVAL, "%s index %d out of range (%d)" %
                    (what, key, len(ports)))
    for p in ports:
        if p.name == key:
            return p
    raise Error(errno.ENOENT, "no %s named %r (the %ss: %s)" %
                (what, key, what, ", ".join(p.name for p in ports)))


class _Props:
    """Property access by name on a device (handle 0) or a compiled model."""

    def _prop_info(self, name):
        a = uapi.prop_info(flags=uapi.PROP_INFO_BY_NAME, handle=self.handle)
        if len(name.encode()) >= uapi.prop_info.name.size:
            raise Error(errno.ENOPROTOOPT, "unknown property %.80s" % name)
        a.name = name.encode()
        ret = try_ioctl(self.device.fd, uapi.IOCTL_PROP_INFO, a)
        if ret < 0:
            fail(ret)
        return a

    def _prop_list(self):
        out = []
        i = 0
        while True:
            a = uapi.prop_info(handle=self.handle, index=i)
            ret = try_ioctl(self.device.fd, uapi.IOCTL_PROP_INFO, a)
            if ret == -errno.ENOENT:
                return out
            if ret < 0:
                fail(ret)
            out.append(PropertyInfo(
                a.name.decode(), a.id, _PROP_TYPES.get(a.type, a.type),
                bool(a.access & uapi.PROP_ACCESS_RW),
                bool(a.access & uapi.PROP_ACCESS_COMPILE),
                bool(a.access & uapi.PROP_ACCESS_CACHING)))
            i += 1

    @property
    def properties(self):
        """Every supported property, as PropertyInfo records."""
        return self._prop_list()

    @property
    def supported_properties(self):
        """The names of the supported properties."""
        return [p.name for p in self._prop_list()]

    def get_property(self, name):
        """A property's value by its name: int, bool, str (strings and
        enums, by the value's name), list of str or list of int."""
        info = self._prop_info(name)
        fd = self.device.fd
        t = info.type
        if t in (uapi.PROP_INT, uapi.PROP_BOOL):
            a = uapi.param(handle=self.handle, param=info.id, type=t)
            ioctl(fd, uapi.IOCTL_GET_PARAM, a)
            if t == uapi.PROP_BOOL:
                return bool(a.value)
            return ctypes.c_int64(a.value).value
        size = 256
        while True:
            buf = ctypes.create_string_buffer(size)
            a = uapi.param(handle=self.handle, param=info.id, type=t,
                           ptr=ctypes.addressof(buf), len=size)
            ret = try_ioctl(fd, uapi.IOCTL_GET_PARAM, a)
            if ret == -errno.EMSGSIZE and a.len > size:
                size = a.len
                continue
            if ret < 0:
                fail(ret)
            break
        raw = buf.raw[:a.len]
        if t == uapi.PROP_INT_LIST:
            n = a.len // 8
            return list((ctypes.c_int64 * n).from_buffer_copy(raw[:n * 8]))
        if t == uapi.PROP_LIST:
            items = raw.split(b"\0")
            out = []
            for it in items:
                if not it:
                    break
                out.append(it.decode())
            return out
        return buf.value.decode()

    def _encode(self, info, value, keep):
        """@value as npr_param's value/ptr for property @info."""
        name = info.name.decode()
        t = info.type
        if t == uapi.PROP_INT:
            return _int_of(name, value), 0, 0
        if t == uapi.PROP_BOOL:
            return _bool_of(name, value), 0, 0
        if t == uapi.PROP_STRING:
            if not isinstance(value, (str, bytes, os.PathLike)):
                raise Error(errno.EINVAL, "%s is a string: %r is not one"
                            % (name, value))
            buf = _c_str(value)
            keep.append(buf)
            return 0, ctypes.addressof(buf), len(buf)
        if t == uapi.PROP_ENUM:
            if isinstance(value, str):
                buf = _c_str(value)
                keep.append(buf)
                return 0, ctypes.addressof(buf), len(buf)
            return _int_of(name, value), 0, 0
        raise Error(errno.EPERM, "%s is read-only" % name)

    def set_property(self, name, value=None):
        """Set one property (name, value) or several ({name: value})."""
        if isinstance(name, dict):
            for k, v in name.items():
                self.set_property(k, v)
            return
        info = self._prop_info(name)
        keep = []
        v, ptr, ln = self._encode(info, value, keep)
        a = uapi.param(handle=self.handle, param=info.id, value=v, ptr=ptr,
                       len=ln, type=info.type)
        ioctl(self.device.fd, uapi.IOCTL_SET_PARAM, a)

    def _compile_props(self, config, keep):
        """@config ({name: value}) as an array of struct npr_prop_arg."""
        arr = (uapi.prop_arg * max(len(config), 1))()
        for i, (name, value) in enumerate(config.items()):
            info = self._prop_info(name)
            if info.type == uapi.PROP_ENUM and isinstance(value, str):
                table = _enum_table(name)
                if value not in table:
                    raise Error(errno.EINVAL, "%s: unknown value %r (valid: %s)"
                                % (name, value, ", ".join(table)))
                value = table[value]
            v, ptr, _ = self._encode(info, value, keep)
            arr[i].param = info.id
            arr[i].value = ptr or v
        return arr


class Device(_Props):
    """An open npuring device ("cpu", "npu", "npu.1", "null").

    Owns every model, compiled model and request made through it; close()
    (or leaving a ``with`` block) destroys them all."""

    handle = 0

    def __init__(self, name="cpu"):
        self.name = name.lower()
        self.device = self
        self.fd = -1
        fd = lib.npr_open(self.name.encode(), 0)
        if fd < 0:
            fail(fd)
        self.fd = fd
        self._ring = None
        self._jobs = {}
        self._next_ud = 1
        self._loop = None
        self._watched = 0

    def close(self):
        """Close the device; its objects are destroyed with it."""
        if self.fd < 0:
            return
        from ._request import _close_jobs
        _close_jobs(self)
        lib.npr_close(self.fd)
        self.fd = -1

    @property
    def closed(self):
        return self.fd < 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<npuring.Device %s fd %d>" % (self.name, self.fd)

    @property
    def info(self):
        """NPR_IOCTL_DEVICE_INFO as a DeviceInfo record."""
        a = uapi.device_info()
        ioctl(self.fd, uapi.IOCTL_DEVICE_INFO, a)
        return DeviceInfo(a.name.decode(), a.full_name.decode(),
                          a.arch.decode(), a.device_type, a.caps,
                          a.num_threads, a.api_version)

    @property
    def cache_dir(self):
        """The model cache directory (CACHE_DIR), "" when off."""
        return self.get_property("CACHE_DIR")

    @cache_dir.setter
    def cache_dir(self, path):
        self.set_property("CACHE_DIR", path or "")

    def _destroy(self, handle):
        if self.fd >= 0 and handle:
            a = uapi.handle_destroy(handle=handle)
            return try_ioctl(self.fd, uapi.IOCTL_HANDLE_DESTROY, a)
        return 0

    # ---- models ----------------------------------------------------------

    def read_model(self, model, weights=None):
        """Load a model: an IR .xml path (weights: its .bin, default the
        .xml's name with .bin), an .onnx path, or the model's bytes (IR
        xml with weights as bytes, or ONNX)."""
        if isinstance(model, Model):
            return model if model.device is self else \
                model._reload(self)
        if isinstance(model, (bytes, bytearray, memoryview)):
            src = ("mem", bytes(model),
                   None if weights is None else bytes(weights))
        else:
            src = ("path", os.fspath(model),
                   None if weights is None else os.fspath(weights))
        return Model._load(self, src)

    def compile_model(self, model, config=None, shapes=None):
        """Compile a Model, a path (IR, ONNX or blob) or bytes (IR xml,
        ONNX or blob) with properties @config ({name: value}) and input
        @shapes ({input: shape}, on top of Model.reshape())."""
        if not isinstance(model, Model):
            blob = _blob_of(model)
            if blob is not None:
                if shapes:
                    raise Error(errno.EINVAL, "a compiled blob has fixed shapes")
                return self.import_model(blob)
            model = self.read_model(model)
        elif model.device is not self:
            model = model._reload(self)
        keep = []
        props = self._compile_props(config or {}, keep)
        sh = dict(model._shapes)
        for k, v in (shapes or {}).items():
            sh[find_port(model.inputs, k, "input").index] = tuple(v)
        sarr = (uapi.shape_arg * max(len(sh), 1))()
        for i, (idx, dims) in enumerate(sorted(sh.items())):
            if len(dims) > uapi.MAX_RANK:
                raise Error(errno.EINVAL, "shape %s: more than %d dims" %
                            (dims, uapi.MAX_RANK))
            sarr[i].index = idx
            sarr[i].rank = len(dims)
            for j, d in enumerate(dims):
                sarr[i].dims[j] = d
        a = uapi.compile(model=model.handle,
                         shapes=ctypes.addressof(sarr) if sh else 0,
                         num_shapes=len(sh),
                         props=ctypes.addressof(props) if config else 0,
                         num_props=len(config or {}))
        ioctl(self.fd, uapi.IOCTL_COMPILE, a)
        return CompiledModel(self, a.exec)

    def import_model(self, data):
        """A CompiledModel from an exported blob (bytes, or a path)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            with open(data, "rb") as f:
                data = f.read()
        buf = (ctypes.c_char * len(data)).from_buffer_copy(data)
        a = uapi.import_(data=ctypes.addressof(buf), bytes=len(data))
        ioctl(self.fd, uapi.IOCTL_IMPORT, a)
        return CompiledModel(self, a.exec)

    def query_model(self, model):
        """Which layers of @model this device supports: {layer: device}."""
        if not isinstance(model, Model) or model.device is not self:
            model = self.read_model(model)
        size = 4096
        while True:
            buf = ctypes.create_string_buffer(size)
            a = uapi.query_model(model=model.handle, len=size,
                                 names=ctypes.addressof(buf))
            ret = try_ioctl(self.fd, uapi.IOCTL_QUERY_MODEL, a)
            if ret == -errno.EMSGSIZE and a.len > size:
                size = a.len
                continue
            if ret < 0:
                fail(ret)
            break
        out = {}
        for n in buf.raw[:a.len].split(b"\0"):
            if not n:
                break
            out[n.decode()] = self.name.upper()
        return out


def _blob_of(src):
    """The blob bytes if @src (bytes or a path) is an exported blob."""
    if isinstance(src, (bytes, bytearray, memoryview)):
        return bytes(src) if bytes(src[:8]) == BLOB_MAGIC else None
    try:
        with open(src, "rb") as f:
            if f.read(8) != BLOB_MAGIC:
                return None
            return BLOB_MAGIC + f.read()
    except OSError as e:
        raise Error(e.errno or errno.EIO, "%s: %s" % (src, e.strerror))


class _Ports:
    """input() and output() of a model or compiled model with .inputs and
    .outputs."""

    def input(self, key=None):
        return find_port(self.inputs, key, "input")

    def output(self, key=None):
        return find_port(self.outputs, key, "output")


class Model(_Ports):
    """A model read on a device, not compiled yet."""

    def __init__(self, device, handle, src):
        self.device = device
        self.handle = handle
        self._src = src
        self._shapes = {}
        self._stateful = []
        self._info, self.inputs, self.outputs = _read_ports(device.fd,
                                                            handle)

    @classmethod
    def _load(cls, device, src):
        kind, xml, weights = src
        keep = []
        if kind == "mem":
            xb = (ctypes.c_char * len(xml)).from_buffer_copy(xml)
            keep.append(xb)
            a = uapi.model_load(flags=uapi.MODEL_LOAD_MEMORY,
                                xml=ctypes.addressof(xb), xml_size=len(xml))
            if weights is not None:
                wb = (ctypes.c_char * max(len(weights), 1)).from_buffer_copy(
                    weights or b"\0")
                keep.append(wb)
                a.bin = ctypes.addressof(wb)
                a.bin_size = len(weights)
        else:
            xb = _c_str(xml)
            keep.append(xb)
            a = uapi.model_load(xml=ctypes.addressof(xb))
            if weights is not None:
                wb = _c_str(weights)
                keep.append(wb)
                a.bin = ctypes.addressof(wb)
        ioctl(device.fd, uapi.IOCTL_MODEL_LOAD, a)
        try:
            return cls(device, a.handle, src)
        except Exception:
            device._destroy(a.handle)
            raise

    def _reload(self, device):
        m = Model._load(device, self._src)
        for pairs, pattern in self._stateful:
            m.make_stateful(dict(pairs), pattern)
        m._shapes = dict(self._shapes)
        return m

    @property
    def num_nodes(self):
        return self._info.num_nodes

    @property
    def ir_version(self):
        """10 or 11 for an IR model, 0 for ONNX."""
        return self._info.ir_version

    def reshape(self, shapes):
        """Input shapes for compile_model(): {input: shape}, or one shape
        for a model with one input."""
        if not isinstance(shapes, dict):
            shapes = {None: shapes}
        for k, v in shapes.items():
            self._shapes[find_port(self.inputs, k, "input").index] = \
                tuple(int(d) for d in v)

    def make_stateful(self, pairs, pattern=False):
        """Turn explicit state inputs and outputs into variables
        (NPR_IOCTL_MAKE_STATEFUL): @pairs is {input name: output name}.
        With @pattern the names hold one '*' each, matched against the
        model's ports ({"past_key_values.*": "present.*"}: a language
        model's KV cache, whose variables then grow with each step)."""
        keep = []
        arr = (uapi.state_pair * max(len(pairs), 1))()
        for i, (inp, out) in enumerate(pairs.items()):
            for field, s in (("input", inp), ("output", out)):
                b = _c_str(s)
                keep.append(b)
                setattr(arr[i], field, ctypes.addressof(b))
        a = uapi.make_stateful(model=self.handle, count=len(pairs),
                               pairs=ctypes.addressof(arr),
                               flags=uapi.MAKE_STATEFUL_PATTERN if pattern
                               else 0)
        ioctl(self.device.fd, uapi.IOCTL_MAKE_STATEFUL, a)
        self._stateful.append((list(pairs.items()), bool(pattern)))
        self._info, self.inputs, self.outputs = _read_ports(self.device.fd,
                                                            self.handle)

    def close(self):
        """Destroy the model's handle (compiled models of it stay)."""
        if self.handle:
            self.device._destroy(self.handle)
            self.handle = 0

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<npuring.Model %d inputs %d outputs on %s>" % (
            len(self.inputs), len(self.outputs), self.device.name)


class CompiledModel(_Ports, _Props):
    """A model compiled for a device (an exec handle)."""

    def __init__(self, device, handle):
        self.device = device
        self.handle = handle
        self._req = None
        try:
            self._info, self.inputs, self.outputs = _read_ports(device.fd,
                                                                handle)
        except Exception:
            device._destroy(handle)
            raise

    @property
    def exec_bytes(self):
        """Bytes the compiled model holds of its own."""
        return self._info.exec_bytes

    @property
    def request_bytes(self):
        """The most bytes one infer request of it allocates."""
        return self._info.request_bytes

    def create_infer_request(self):
        """A new InferRequest with its own buffers."""
        from ._request import InferRequest
        return InferRequest(self)

    def __call__(self, inputs=None):
        """Infer on a request this compiled model keeps for the purpose."""
        if self._req is None:
            self._req = self.create_infer_request()
        return self._req.infer(inputs)

    def export_model(self, path=None):
        """The compiled model as a blob (bytes), also written to @path."""
        fd = self.device.fd
        a = uapi.export(exec=self.handle)
        ret = try_ioctl(fd, uapi.IOCTL_EXPORT, a)
        if ret < 0 and ret != -errno.EMSGSIZE:
            fail(ret)
        buf = ctypes.create_string_buffer(a.bytes)
        a = uapi.export(exec=self.handle, data=ctypes.addressof(buf),
                        bytes=len(buf))
        ioctl(fd, uapi.IOCTL_EXPORT, a)
        data = buf.raw[:a.bytes]
        if path is not None:
            with open(path, "wb") as f:
                f.write(data)
        return data

    def set_property(self, name, value=None):
        raise Error(errno.EPERM, "%s: a compiled model's properties are fixed at compile time"
                    % (name if isinstance(name, str) else ", ".join(name)))

    def close(self):
        """Destroy the exec handle (requests of it stay usable)."""
        if self._req is not None:
            self._req.close()
            self._req = None
        if self.handle:
            self.device._destroy(self.handle)
            self.handle = 0

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __repr__(self):
        return "<npuring.CompiledModel %d inputs %d outputs on %s>" % (
            len(self.inputs), len(self.outputs), self.device.name)


class Core:
    """OpenVINO-style entry point: opens devices by name on demand and
    keeps them open until close()."""

    def __init__(self):
        self._devices = {}
        self._global = {}

    def get_device(self, name="cpu"):
        """The open Device @name ("CPU" and "cpu" are the same)."""
        name = name.lower()
        dev = self._devices.get(name)
        if dev is None or dev.closed:
            dev = Device(name)
            for k, v in self._global.items():
                try:
                    dev.set_property(k, v)
                except Error as e:
                    if e.errno != errno.ENOPROTOOPT:
                        raise
            self._devices[name] = dev
        return dev

    @property
    def available_devices(self):
        """The names of the devices that open, upper case as OpenVINO
        spells them ("CPU", "NPU", "NULL"; "NPU.0", "NPU.1" for two
        NPUs): every backend's AVAILABLE_DEVICES."""
        out = []
        for name in backends():
            try:
                dev = self._devices.get(name) or Device(name)
            except Error:
                continue
            try:
                for d in dev.get_property("AVAILABLE_DEVICES"):
                    d = d.upper()
                    if d not in out:
                        out.append(d)
            finally:
                if name not in self._devices:
                    dev.close()
        return out

    def get_property(self, device_name, name):
        return self.get_device(device_name).get_property(name)

    def set_property(self, device_name, properties=None):
        """set_property(device, {name: value}), or set_property({name:
        value}) for every device, open and still to be opened."""
        if isinstance(device_name, dict):
            self._global.update(device_name)
            for dev in self._devices.values():
                if not dev.closed:
                    for k, v in device_name.items():
                        try:
                            dev.set_property(k, v)
                        except Error as e:
                            if e.errno != errno.ENOPROTOOPT:
                                raise
            return
        self.get_device(device_name).set_property(properties)

    @property
    def cache_dir(self):
        return self._global.get("CACHE_DIR", "")

    @cache_dir.setter
    def cache_dir(self, path):
        self.set_property({"CACHE_DIR": os.fspath(path or "")})

    def read_model(self, model, weights=None, device_name="cpu"):
        """Read a model (path or bytes, see Device.read_model) on
        @device_name; compile_model() for another device reads it again
        there."""
        return self.get_device(device_name).read_model(model, weights)

    def compile_model(self, model, device_name="cpu", config=None,
                      shapes=None):
        return self.get_device(device_name).compile_model(model, config,
                                                          shapes)

    def import_model(self, data, device_name="cpu"):
        return self.get_device(device_name).import_model(data)

    def query_model(self, model, device_name="cpu"):
        return self.get_device(device_name).query_model(model)

    def close(self):
        """Close every device this Core opened."""
        for dev in self._devices.values():
            dev.close()
        self._devices.clear()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
