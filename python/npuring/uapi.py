# SPDX-License-Identifier: MIT
"""ctypes mirrors of uapi/npuring.h, the npuring ABI.

Every struct, enum value, flag and ioctl number a Python program needs to
drive npr_ioctl() directly.  The names are those of the C header without
the ``npr_`` / ``NPR_`` prefix where that reads better in Python
(``uapi.param``, ``uapi.IOCTL_COMPILE``).  selftests/python checks every
struct's size and field offsets, and every constant listed in
``CONSTANTS``, against the header compiled by the system's C compiler.

Argument structs that start with ``size`` get it filled in by their
constructor, so ``uapi.infer(req=h)`` is ready to pass.
"""
import ctypes
import platform

u8 = ctypes.c_uint8
u16 = ctypes.c_uint16
u32 = ctypes.c_uint32
s32 = ctypes.c_int32
u64 = ctypes.c_uint64
s64 = ctypes.c_int64

UAPI_VERSION = 1
MAX_RANK = 8


class Struct(ctypes.Structure):
    """A uapi struct: zero-filled, with ``size`` set when it has one."""

    def __init__(self, **kw):
        super().__init__(**kw)
        if "size" in (f[0] for f in self._fields_) and "size" not in kw:
            self.size = ctypes.sizeof(self)


def _struct(cname, fields):
    cls = type(cname, (Struct,), {"_fields_": fields, "cname": cname})
    STRUCTS.append(cls)
    return cls


#: every mirrored struct, in header order (the layout test walks this)
STRUCTS = []

# enum npr_elem_type
(ELEM_UNDEFINED, ELEM_F32, ELEM_F16, ELEM_BF16, ELEM_F64, ELEM_I8, ELEM_U8,
 ELEM_I16, ELEM_U16, ELEM_I32, ELEM_U32, ELEM_I64, ELEM_U64, ELEM_BOOLEAN,
 ELEM_U1, ELEM_I4, ELEM_U4, ELEM_MAX) = range(18)

# enum npr_device_type
DEVICE_CPU, DEVICE_NPU, DEVICE_NULL = 1, 2, 3

# enum npr_handle_type
HANDLE_MODEL, HANDLE_EXEC, HANDLE_REQUEST, HANDLE_BO = 1, 2, 3, 4

device_info = _struct("npr_device_info", [
    ("size", u32), ("flags", u32), ("api_version", u32),
    ("device_type", u32), ("caps", u64), ("num_threads", u32),
    ("reserved", u32), ("name", ctypes.c_char * 32),
    ("full_name", ctypes.c_char * 128), ("arch", ctypes.c_char * 32)])

CAP_FP32 = 1 << 0
CAP_FP16 = 1 << 1
CAP_INT8 = 1 << 2
CAP_EXPORT_IMPORT = 1 << 3

# enum npr_param_id (the ones the binding names; PROP_INFO has them all)
PARAM_FULL_DEVICE_NAME = 1
PARAM_ENABLE_PROFILING = 6
PARAM_AVAILABLE_DEVICES = 8
PARAM_CACHE_DIR = 23
PARAM_MODEL_NAME = 28
PARAM_CACHE_MODE = 100
PARAM_WEIGHTS_PATH = 101
PARAM_MAX = 109

# enum npr_prop_type
PROP_INT, PROP_BOOL, PROP_STRING, PROP_ENUM, PROP_LIST, PROP_INT_LIST = \
    range(1, 7)

NUM_STREAMS_AUTO = -1
PROP_STR_MAX = 4096

param = _struct("npr_param", [
    ("size", u32), ("flags", u32), ("handle", u32), ("param", u32),
    ("value", u64), ("ptr", u64), ("len", u32), ("type", u32)])

prop_info = _struct("npr_prop_info", [
    ("size", u32), ("flags", u32), ("handle", u32), ("index", u32),
    ("id", u32), ("type", u32), ("access", u32), ("reserved", u32),
    ("name", ctypes.c_char * 64)])

PROP_INFO_BY_ID = 1 << 0
PROP_INFO_BY_NAME = 1 << 1
PROP_ACCESS_RW = 1 << 0
PROP_ACCESS_COMPILE = 1 << 1
PROP_ACCESS_CACHING = 1 << 2

model_load = _struct("npr_model_load", [
    ("size", u32), ("flags", u32), ("xml", u64), ("xml_size", u64),
    ("bin", u64), ("bin_size", u64), ("handle", u32), ("reserved", u32)])

MODEL_LOAD_MEMORY = 1 << 0
MODEL_LOAD_DEFER = 1 << 1

model_info = _struct("npr_model_info", [
    ("size", u32), ("flags", u32), ("handle", u32), ("num_inputs", u32),
    ("num_outputs", u32), ("num_nodes", u32), ("ir_version", u32),
    ("reserved", u32), ("exec_bytes", u64), ("request_bytes", u64)])

port_info = _struct("npr_port_info", [
    ("size", u32), ("flags", u32), ("handle", u32), ("index", u32),
    ("elem_type", u32), ("rank", u32), ("dims", s64 * MAX_RANK),
    ("name", u64), ("name_len", u32), ("reserved", u32)])

PORT_OUTPUT = 1 << 0

shape_arg = _struct("npr_shape_arg", [
    ("index", u32), ("rank", u32), ("dims", s64 * MAX_RANK)])

shape_range = _struct("npr_shape_range", [
    ("index", u32), ("rank", u32), ("lo", s64 * MAX_RANK),
    ("hi", s64 * MAX_RANK)])

COMPILE_SHAPE_RANGES = 1 << 0

prop_arg = _struct("npr_prop_arg", [
    ("param", u32), ("reserved", u32), ("value", u64)])

compile = _struct("npr_compile", [
    ("size", u32), ("flags", u32), ("model", u32), ("exec", u32),
    ("shapes", u64), ("props", u64), ("num_shapes", u32),
    ("num_props", u32)])

req_create = _struct("npr_req_create", [
    ("size", u32), ("flags", u32), ("exec", u32), ("req", u32)])

tensor_arg = _struct("npr_tensor_arg", [
    ("size", u32), ("flags", u32), ("req", u32), ("index", u32),
    ("elem_type", u32), ("rank", u32), ("dims", s64 * MAX_RANK),
    ("data", u64), ("bytes", u64)])

TENSOR_BIND = 1 << 1
TENSOR_MAP = 1 << 2

infer = _struct("npr_infer", [
    ("size", u32), ("flags", u32), ("req", u32), ("reserved", u32),
    ("started_ns", u64), ("finished_ns", u64)])

handle_destroy = _struct("npr_handle_destroy", [
    ("size", u32), ("flags", u32), ("handle", u32), ("reserved", u32)])

get_error = _struct("npr_get_error", [
    ("size", u32), ("flags", u32), ("buf", u64), ("len", u32),
    ("err", s32), ("user_data", u64)])

GET_ERROR_JOB = 1 << 0

state_arg = _struct("npr_state_arg", [
    ("size", u32), ("flags", u32), ("req", u32), ("index", u32),
    ("count", u32), ("elem_type", u32), ("rank", u32), ("name_len", u32),
    ("dims", s64 * MAX_RANK), ("name", u64), ("data", u64),
    ("bytes", u64)])

STATE_RESET_ALL = 1 << 0
STATE_TRUNCATE = 1 << 1

export = _struct("npr_export", [
    ("size", u32), ("flags", u32), ("exec", u32), ("reserved", u32),
    ("data", u64), ("bytes", u64)])

import_ = _struct("npr_import", [
    ("size", u32), ("flags", u32), ("data", u64), ("bytes", u64),
    ("exec", u32), ("reserved", u32)])

# enum npr_prof_status
PROF_NOT_RUN, PROF_EXECUTED, PROF_OPTIMIZED_OUT = 0, 1, 2

profile_rec = _struct("npr_profile_rec", [
    ("name", ctypes.c_char * 64), ("type", ctypes.c_char * 32),
    ("kernel", ctypes.c_char * 32), ("status", u32), ("reserved", u32),
    ("real_ns", u64)])

profile = _struct("npr_profile", [
    ("size", u32), ("flags", u32), ("req", u32), ("count", u32),
    ("recs", u64)])

query_model = _struct("npr_query_model", [
    ("size", u32), ("flags", u32), ("model", u32), ("num_layers", u32),
    ("num_supported", u32), ("len", u32), ("names", u64)])

bo_create = _struct("npr_bo_create", [
    ("size", u32), ("flags", u32), ("bytes", u64), ("handle", u32),
    ("reserved", u32)])

bo_info = _struct("npr_bo_info", [
    ("size", u32), ("flags", u32), ("handle", u32), ("bound", u32),
    ("bytes", u64), ("addr", u64), ("fd", s32), ("reserved", u32)])

BO_INFO_FD = 1 << 0

bo_bind = _struct("npr_bo_bind", [
    ("size", u32), ("flags", u32), ("req", u32), ("index", u32),
    ("bo", u32), ("elem_type", u32), ("rank", u32), ("reserved", u32),
    ("dims", s64 * MAX_RANK), ("strides", s64 * MAX_RANK),
    ("offset", u64)])

state_pair = _struct("npr_state_pair", [("input", u64), ("output", u64)])

make_stateful = _struct("npr_make_stateful", [
    ("size", u32), ("flags", u32), ("model", u32), ("count", u32),
    ("pairs", u64), ("shapes", u64), ("num_shapes", u32),
    ("reserved", u32)])

MAKE_STATEFUL_PATTERN = 1 << 0

# enum npr_op
(OP_NOP, OP_INFER, OP_COMPILE, OP_LOAD, OP_CANCEL, OP_IMPORT, OP_EXPORT,
 OP_STATE_GET, OP_STATE_SET, OP_STATE_RESET, OP_MAX) = range(11)

sqe = _struct("npr_sqe", [
    ("opcode", u8), ("flags", u8), ("reserved0", u16), ("handle", u32),
    ("user_data", u64), ("addr", u64), ("len", u32), ("reserved1", u32),
    ("deadline_ns", u64), ("reserved2", u64 * 3)])

SQE_LINK = 1 << 0
SQE_DRAIN = 1 << 1

# enum npr_job_status
(JOB_OK, JOB_FAILED, JOB_CANCELED, JOB_EXPIRED, JOB_LINK_BROKEN) = range(5)

cqe = _struct("npr_cqe", [
    ("user_data", u64), ("res", s32), ("status", u32), ("queued_ns", u64),
    ("started_ns", u64), ("finished_ns", u64), ("reserved", u64)])

# enum npr_ring_path, enum npr_ring_reason
RING_PATH_URING, RING_PATH_FALLBACK = 1, 2
(RING_WHY_NONE, RING_WHY_FORCED, RING_WHY_DISABLED, RING_WHY_ERRNO) = range(4)

ring_setup = _struct("npr_ring_setup", [
    ("size", u32), ("flags", u32), ("cq_entries", u32), ("attach_fd", s32),
    ("ring_fd", s32), ("path", u32), ("reason", u32), ("err", s32),
    ("workers", u32), ("reserved", u32)])

RING_SETUP_FALLBACK = 1 << 0
RING_SETUP_ATTACH = 1 << 1
RING_SETUP_RECORDS = 1 << 2

# a record's slot in an attached ring's CQE: cqe.flags >> CQE_RECORD_SHIFT
CQE_RECORD_SHIFT = 16
CQE_NO_RECORD = 0xffff

ring_record = _struct("npr_ring_record", [
    ("size", u32), ("flags", u32), ("slot", u32), ("reserved", u32),
    ("user_data", u64), ("cqe", cqe)])

submit = _struct("npr_submit", [
    ("size", u32), ("flags", u32), ("sqes", u64), ("count", u32),
    ("submitted", u32)])

reap = _struct("npr_reap", [
    ("size", u32), ("flags", u32), ("cqes", u64), ("max", u32),
    ("min", u32), ("timeout_ns", u64), ("count", u32), ("reserved", u32)])

REAP_POLL = 1 << 0

# Enum properties' values by name, as the library spells them
# (NPR_IOCTL_COMPILE takes an enum property's number, not its name).
PERF_HINTS = {"LATENCY": 1, "THROUGHPUT": 2, "CUMULATIVE_THROUGHPUT": 3}
LOG_LEVELS = {"LOG_NONE": 0, "LOG_ERROR": 1, "LOG_WARNING": 2,
              "LOG_INFO": 3, "LOG_DEBUG": 4, "LOG_TRACE": 5}
EXEC_MODES = {"PERFORMANCE": 1, "ACCURACY": 2}
PRIORITIES = {"LOW": 1, "MEDIUM": 2, "HIGH": 3}
DEVICE_KINDS = {"integrated": 1, "discrete": 2}


# ---- ioctl numbers, as <asm/ioctl.h> builds _IOWR() -----------------------

def _ioc_layout(machine):
    """(read bit, write bit, dir shift, size bits) of _IOC() on @machine."""
    if machine.startswith(("ppc", "powerpc", "mips", "sparc", "alpha")):
        return 2, 4, 29, 13
    return 2, 1, 30, 14


def IOWR(nr, struct, machine=None):
    """_IOWR('N', nr, struct) for this machine's (or @machine's) layout."""
    rd, wr, dirshift, sizebits = _ioc_layout(machine or platform.machine())
    size = ctypes.sizeof(struct)
    if size >= 1 << sizebits:
        raise ValueError("struct too large for an ioctl number")
    return ((rd | wr) << dirshift) | (size << 16) | (ord("N") << 8) | nr


IOCTL_TYPE = ord("N")
IOCTL_DEVICE_INFO = IOWR(0x00, device_info)
IOCTL_GET_PARAM = IOWR(0x01, param)
IOCTL_SET_PARAM = IOWR(0x02, param)
IOCTL_MODEL_LOAD = IOWR(0x03, model_load)
IOCTL_MODEL_INFO = IOWR(0x04, model_info)
IOCTL_PORT_INFO = IOWR(0x05, port_info)
IOCTL_COMPILE = IOWR(0x06, compile)
IOCTL_REQ_CREATE = IOWR(0x07, req_create)
IOCTL_SET_TENSOR = IOWR(0x08, tensor_arg)
IOCTL_GET_TENSOR = IOWR(0x09, tensor_arg)
IOCTL_INFER = IOWR(0x0a, infer)
IOCTL_HANDLE_DESTROY = IOWR(0x0b, handle_destroy)
IOCTL_GET_ERROR = IOWR(0x0c, get_error)
IOCTL_RING_SETUP = IOWR(0x0d, ring_setup)
IOCTL_SUBMIT = IOWR(0x0e, submit)
IOCTL_REAP = IOWR(0x0f, reap)
IOCTL_PROP_INFO = IOWR(0x10, prop_info)
IOCTL_STATE_INFO = IOWR(0x11, state_arg)
IOCTL_STATE_GET = IOWR(0x12, state_arg)
IOCTL_STATE_SET = IOWR(0x13, state_arg)
IOCTL_STATE_RESET = IOWR(0x14, state_arg)
IOCTL_EXPORT = IOWR(0x15, export)
IOCTL_IMPORT = IOWR(0x16, import_)
IOCTL_PROFILE = IOWR(0x17, profile)
IOCTL_QUERY_MODEL = IOWR(0x18, query_model)
IOCTL_BO_CREATE = IOWR(0x19, bo_create)
IOCTL_BO_INFO = IOWR(0x1a, bo_info)
IOCTL_BO_BIND = IOWR(0x1b, bo_bind)
IOCTL_MAKE_STATEFUL = IOWR(0x1c, make_stateful)
IOCTL_RING_RECORD = IOWR(0x1f, ring_record)

#: constants whose C name is "NPR_" + the Python name (checked by the tests)
CONSTANTS = [n for n in list(globals())
             if n[:1].isupper() and n.split("_")[0] in (
                 "UAPI", "MAX", "ELEM", "DEVICE", "HANDLE", "CAP", "PARAM",
                 "PROP", "NUM", "MODEL", "PORT", "TENSOR", "GET", "STATE",
                 "PROF", "BO", "OP", "SQE", "CQE", "JOB", "RING", "REAP",
                 "IOCTL")
             and isinstance(globals()[n], int)]
