"""ONNX Runtime's values for `onnx2burn check`: the model's outputs, and with names of
intermediate values, those too (added as graph outputs, in a second session, so that the first
one is the model as it stands).

    python ort_check.py MODEL DATA_DIR OUT_DIR NAMES_FILE

Reads DATA_DIR/input_<j>.pb (one TensorProto per graph input, initializers excluded, in order);
writes OUT_DIR/output_<k>.npy per graph output and OUT_DIR/value_<i>.npy per line of NAMES_FILE.
A value that is no numeric or bool array (a sequence, a map, strings) is not written.
"""

import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def save(path, value):
    array = np.asarray(value)
    if array.dtype.kind in "biuf":
        # Not np.ascontiguousarray, which makes a rank-0 value rank 1.
        np.save(path, array.copy(order="C"))


def main():
    model_path, data_dir, out_dir, names_file = sys.argv[1:5]
    model = onnx.load(model_path)
    initializers = {t.name for t in model.graph.initializer}
    feeds = {}
    graph_inputs = [i for i in model.graph.input if i.name not in initializers]
    for j, graph_input in enumerate(graph_inputs):
        tensor = onnx.TensorProto()
        with open(f"{data_dir}/input_{j}.pb", "rb") as f:
            tensor.ParseFromString(f.read())
        feeds[graph_input.name] = numpy_helper.to_array(tensor)
    options = ort.SessionOptions()
    options.log_severity_level = 3
    providers = ["CPUExecutionProvider"]
    session = ort.InferenceSession(model.SerializeToString(), options, providers=providers)
    for k, value in enumerate(session.run(None, feeds)):
        save(f"{out_dir}/output_{k}.npy", value)
    with open(names_file) as f:
        names = [line.rstrip("\n") for line in f if line.rstrip("\n")]
    if names:
        known = {o.name for o in model.graph.output}
        model.graph.output.extend(onnx.ValueInfoProto(name=n) for n in names if n not in known)
        session = ort.InferenceSession(model.SerializeToString(), options, providers=providers)
        for i, value in enumerate(session.run(names, feeds)):
            save(f"{out_dir}/value_{i}.npy", value)


if __name__ == "__main__":
    main()
