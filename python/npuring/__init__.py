# SPDX-License-Identifier: MIT
"""npuring for Python: ctypes over libnpuring.so.0, tensors as numpy arrays.

    import numpy as np
    import npuring

    core = npuring.Core()
    compiled = core.compile_model("model.onnx", "CPU")
    request = compiled.create_infer_request()
    out = request.infer({"input": np.zeros((1, 3, 224, 224), np.float32)})

The library is found through NPURING_LIBRARY (a path) or else as
libnpuring.so.0 through the dynamic loader.  Documentation/python.rst
describes the whole API.
"""
import importlib.util

if importlib.util.find_spec("numpy") is None:
    raise ImportError("npuring needs numpy (Debian: python3-numpy)")
from . import uapi
from ._lib import Error, version
from ._core import (Core, CompiledModel, Device, DeviceInfo, Model, Port,
                    PropertyInfo, dtype_of, elem_name)
from ._request import (InferRequest, ProfilingInfo, Results, VariableState,
                       ring_info)

__all__ = ["Core", "CompiledModel", "Device", "DeviceInfo", "Error",
           "InferRequest", "Model", "Port", "ProfilingInfo", "PropertyInfo",
           "Results", "VariableState", "dtype_of", "elem_name", "ring_info",
           "uapi", "version"]
