# SPDX-License-Identifier: MIT
"""Loading libnpuring.so.0 and turning its -errno returns into Error."""
import ctypes
import errno
import os

from . import uapi


class Error(OSError):
    """A failed npuring call: ``errno`` is the positive errno the library
    returned, ``message`` (also ``strerror``) the library's detail message
    (npr_last_error()), or the binding's own when it refused an argument
    before calling the library."""

    def __init__(self, errnum, message):
        super().__init__(errnum, message)
        self.message = message

    def __str__(self):
        name = "EOPNOTSUPP" if self.errno == errno.EOPNOTSUPP else \
            errno.errorcode.get(self.errno, self.errno)
        return "%s [%s]" % (self.message, name)


def _load():
    path = os.environ.get("NPURING_LIBRARY")
    name = path or "libnpuring.so.0"
    try:
        lib = ctypes.CDLL(name)
    except OSError as e:
        hint = ("NPURING_LIBRARY names %s" % path if path else
                "install libnpuring0, or point NPURING_LIBRARY at "
                "libnpuring.so.0 (in a build tree: lib/libnpuring.so.0)")
        raise ImportError("npuring: cannot load %s: %s; %s" %
                          (name, e, hint)) from None
    lib.npr_open.argtypes = [ctypes.c_char_p, ctypes.c_uint]
    lib.npr_open.restype = ctypes.c_int
    lib.npr_close.argtypes = [ctypes.c_int]
    lib.npr_close.restype = ctypes.c_int
    lib.npr_ioctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p]
    lib.npr_ioctl.restype = ctypes.c_int
    lib.npr_last_error.argtypes = []
    lib.npr_last_error.restype = ctypes.c_char_p
    lib.npr_elem_size.argtypes = [ctypes.c_uint]
    lib.npr_elem_size.restype = ctypes.c_size_t
    lib.npr_elem_name.argtypes = [ctypes.c_uint]
    lib.npr_elem_name.restype = ctypes.c_char_p
    try:
        lib.npr_version.argtypes = []
        lib.npr_version.restype = ctypes.c_char_p
    except AttributeError:
        pass		# a 0.1 library
    try:
        lib.npr_backend_at.argtypes = [ctypes.c_uint]
        lib.npr_backend_at.restype = ctypes.c_char_p
    except AttributeError:
        pass		# before 0.3
    return lib


def backends():
    """The library's backends by name, in its order (npr_backend_at())."""
    if not hasattr(lib, "npr_backend_at"):
        return ["cpu", "npu", "null"]
    out = []
    while True:
        b = lib.npr_backend_at(len(out))
        if not b:
            return out
        out.append(b.decode())


lib = _load()


def last_error():
    """The calling thread's last failure message from the library."""
    return (lib.npr_last_error() or b"").decode("utf-8", "replace")


def fail(ret, what=None):
    """Raise Error for the negative return @ret of a library call."""
    msg = last_error() or os.strerror(-ret)
    if what:
        msg = "%s: %s" % (what, msg)
    raise Error(-ret, msg)


def ioctl(fd, cmd, arg):
    """npr_ioctl(fd, cmd, &arg); raises Error on failure, returns >= 0."""
    ret = lib.npr_ioctl(fd, cmd, ctypes.byref(arg))
    if ret < 0:
        fail(ret)
    return ret


def try_ioctl(fd, cmd, arg):
    """npr_ioctl() returning the -errno instead of raising."""
    return lib.npr_ioctl(fd, cmd, ctypes.byref(arg))


def job_error(fd, user_data, res):
    """The detail message of the failed ring job @user_data."""
    buf = ctypes.create_string_buffer(1024)
    a = uapi.get_error(flags=uapi.GET_ERROR_JOB, buf=ctypes.addressof(buf),
                       len=len(buf), user_data=user_data)
    if lib.npr_ioctl(fd, uapi.IOCTL_GET_ERROR, ctypes.byref(a)) < 0:
        return os.strerror(-res)
    return buf.value.decode("utf-8", "replace")


def version():
    """The library's run-time version ("0.3.0"), or "0.1" for a library
    without npr_version()."""
    try:
        return lib.npr_version().decode()
    except AttributeError:
        return "0.1"
