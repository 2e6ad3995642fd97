"""ONNX Runtime run through its C API (ctypes), for the inputs its Python API cannot feed: maps of
int64 to strings (DictVectorizer's and CastMap's `map(int64, string)`), which `InferenceSession.run`
refuses ("cannot be linked to C type int64_t").

The C API is a table of function pointers (`OrtApi`, include/onnxruntime/core/session/
onnxruntime_c_api.h); ONNX Runtime only appends to it, so the positions below, all from its first
versions, hold for the installed 1.32. `run` takes a model's bytes and feeds of numpy arrays or
dicts of int64 to str, and returns its outputs (tensors only) as numpy arrays.
"""

import ctypes
import glob
import os

import numpy as np
import onnx
import onnxruntime

# Positions in OrtApi of the functions used here.
GET_ERROR_MESSAGE = 2
CREATE_ENV = 3
CREATE_SESSION_FROM_ARRAY = 8
RUN = 9
CREATE_SESSION_OPTIONS = 10
SET_INTRA_OP_NUM_THREADS = 24
CREATE_TENSOR_AS_ORT_VALUE = 48
CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE = 49
GET_TENSOR_MUTABLE_DATA = 51
FILL_STRING_TENSOR = 52
GET_STRING_TENSOR_DATA_LENGTH = 53
GET_STRING_TENSOR_CONTENT = 54
GET_TENSOR_ELEMENT_TYPE = 60
GET_DIMENSIONS_COUNT = 61
GET_DIMENSIONS = 62
GET_TENSOR_SHAPE_ELEMENT_COUNT = 64
GET_TENSOR_TYPE_AND_SHAPE = 65
CREATE_CPU_MEMORY_INFO = 69
GET_ALLOCATOR_WITH_DEFAULT_OPTIONS = 78
CREATE_VALUE = 82
ORT_API_VERSION = 1
ONNX_TYPE_MAP = 3

P = ctypes.c_void_p
OUT = ctypes.POINTER(ctypes.c_void_p)
# ONNX element types (TensorProto's codes, which ONNX Runtime's enum copies) of numeric outputs.
NUMPY_OF = {1: np.float32, 7: np.int64, 11: np.float64, 6: np.int32, 9: np.bool_}


class OrtApiBase(ctypes.Structure):
    _fields_ = [("GetApi", ctypes.CFUNCTYPE(P, ctypes.c_uint32)), ("GetVersionString", ctypes.CFUNCTYPE(ctypes.c_char_p))]


class CApi:
    """The table of the installed ONNX Runtime."""

    def __init__(self):
        capi = os.path.join(os.path.dirname(onnxruntime.__file__), "capi")
        lib = ctypes.CDLL(sorted(glob.glob(os.path.join(capi, "libonnxruntime.so.*")))[0])
        lib.OrtGetApiBase.restype = ctypes.POINTER(OrtApiBase)
        base = lib.OrtGetApiBase().contents
        self.table = ctypes.cast(base.GetApi(ORT_API_VERSION), ctypes.POINTER(P))

    def fn(self, index, *argtypes, restype=P):
        return ctypes.CFUNCTYPE(restype, *argtypes)(self.table[index])

    def check(self, status):
        if status:
            message = self.fn(GET_ERROR_MESSAGE, P, restype=ctypes.c_char_p)(status)
            raise RuntimeError(f"onnxruntime (C API): {message.decode()}")

    def call(self, index, argtypes, *args):
        self.check(self.fn(index, *argtypes)(*args))


def _shape(shape):
    return (ctypes.c_int64 * max(len(shape), 1))(*shape), len(shape)


class Runner:
    def __init__(self):
        self.api = CApi()
        self.env, self.memory, self.allocator = P(), P(), P()
        self.api.call(CREATE_ENV, (ctypes.c_int, ctypes.c_char_p, OUT), 3, b"burn-onnx", ctypes.byref(self.env))
        self.api.call(CREATE_CPU_MEMORY_INFO, (ctypes.c_int, ctypes.c_int, OUT), 0, 0, ctypes.byref(self.memory))
        self.api.call(GET_ALLOCATOR_WITH_DEFAULT_OPTIONS, (OUT,), ctypes.byref(self.allocator))
        self.keep = []  # buffers the values point into

    def numeric(self, array):
        array = np.ascontiguousarray(array)
        elem = {np.dtype(v): k for k, v in NUMPY_OF.items()}[array.dtype]
        shape, rank = _shape(array.shape)
        value = P()
        self.keep.append(array)
        argtypes = (P, P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, ctypes.c_int, OUT)
        self.api.call(CREATE_TENSOR_WITH_DATA_AS_ORT_VALUE, argtypes, self.memory, array.ctypes.data, array.nbytes,
                      shape, rank, elem, ctypes.byref(value))
        return value

    def strings(self, texts):
        shape, rank = _shape([len(texts)])
        value = P()
        argtypes = (P, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t, ctypes.c_int, OUT)
        self.api.call(CREATE_TENSOR_AS_ORT_VALUE, argtypes, self.allocator, shape, rank, 8, ctypes.byref(value))
        encoded = (ctypes.c_char_p * len(texts))(*[t.encode() for t in texts])
        self.api.call(FILL_STRING_TENSOR, (P, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t), value, encoded, len(texts))
        return value

    def feed(self, value):
        if isinstance(value, dict):
            keys = self.numeric(np.array(list(value), dtype=np.int64))
            texts = self.strings([value[k] for k in value])
            parts = (P * 2)(keys, texts)
            out = P()
            self.api.call(CREATE_VALUE, (ctypes.POINTER(P), ctypes.c_size_t, ctypes.c_int, OUT), parts, 2, ONNX_TYPE_MAP,
                          ctypes.byref(out))
            return out
        return self.numeric(np.asarray(value))

    def read(self, value):
        info, elem, rank, count = P(), ctypes.c_int(), ctypes.c_size_t(), ctypes.c_size_t()
        self.api.call(GET_TENSOR_TYPE_AND_SHAPE, (P, OUT), value, ctypes.byref(info))
        self.api.call(GET_TENSOR_ELEMENT_TYPE, (P, ctypes.POINTER(ctypes.c_int)), info, ctypes.byref(elem))
        self.api.call(GET_DIMENSIONS_COUNT, (P, ctypes.POINTER(ctypes.c_size_t)), info, ctypes.byref(rank))
        dims = (ctypes.c_int64 * max(rank.value, 1))()
        self.api.call(GET_DIMENSIONS, (P, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t), info, dims, rank.value)
        shape = tuple(dims[: rank.value])
        self.api.call(GET_TENSOR_SHAPE_ELEMENT_COUNT, (P, ctypes.POINTER(ctypes.c_size_t)), info, ctypes.byref(count))
        if elem.value == 8:
            length = ctypes.c_size_t()
            self.api.call(GET_STRING_TENSOR_DATA_LENGTH, (P, ctypes.POINTER(ctypes.c_size_t)), value, ctypes.byref(length))
            data = ctypes.create_string_buffer(max(length.value, 1))
            offsets = (ctypes.c_size_t * max(count.value, 1))()
            argtypes = (P, P, ctypes.c_size_t, ctypes.POINTER(ctypes.c_size_t), ctypes.c_size_t)
            self.api.call(GET_STRING_TENSOR_CONTENT, argtypes, value, data, length.value, offsets, count.value)
            ends = list(offsets[1 : count.value]) + [length.value]
            texts = [data.raw[offsets[i] : ends[i]].decode() for i in range(count.value)]
            return np.array(texts, dtype=object).reshape(shape)
        pointer = P()
        self.api.call(GET_TENSOR_MUTABLE_DATA, (P, OUT), value, ctypes.byref(pointer))
        dtype = np.dtype(NUMPY_OF[elem.value])
        raw = ctypes.string_at(pointer, count.value * dtype.itemsize)
        return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()

    def run(self, model, feeds):
        options, session = P(), P()
        self.api.call(CREATE_SESSION_OPTIONS, (OUT,), ctypes.byref(options))
        self.api.call(SET_INTRA_OP_NUM_THREADS, (P, ctypes.c_int), options, 1)
        data = model.SerializeToString()
        self.api.call(CREATE_SESSION_FROM_ARRAY, (P, ctypes.c_char_p, ctypes.c_size_t, P, OUT), self.env, data, len(data),
                      options, ctypes.byref(session))
        inputs = [i.name for i in model.graph.input]
        outputs = [o.name for o in model.graph.output]
        in_names = (ctypes.c_char_p * len(inputs))(*[n.encode() for n in inputs])
        in_values = (P * len(inputs))(*[self.feed(feeds[n]) for n in inputs])
        out_names = (ctypes.c_char_p * len(outputs))(*[n.encode() for n in outputs])
        out_values = (P * len(outputs))()
        argtypes = (P, P, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(P), ctypes.c_size_t, ctypes.POINTER(ctypes.c_char_p),
                    ctypes.c_size_t, ctypes.POINTER(P))
        self.api.call(RUN, argtypes, session, None, in_names, in_values, len(inputs), out_names, len(outputs), out_values)
        return [self.read(out_values[i]) for i in range(len(outputs))]


def run(model: onnx.ModelProto, feeds):
    """ONNX Runtime's outputs of `model` on `feeds` (numpy arrays, or dicts of int64 to str)."""
    return Runner().run(model, feeds)
