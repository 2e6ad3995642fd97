#!/usr/bin/env python3
"""Train a scikit-learn pipeline on breast_cancer and convert it with skl2onnx, as a user would.

Run (after scripts/setup-python.sh), from the repository root:

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" examples/sklearn-pipeline/make_model.py

Data: scikit-learn's bundled breast_cancer (no download), split 70/30 with a fixed seed; one
feature binned into a category (its quartile) and 5% of the values removed (NaN), so that the
pipeline imputes, scales and one-hot encodes like a production one.

Pipeline: ColumnTransformer(median imputation + standard scaling of the 29 numeric columns,
one-hot encoding of the binned column) -> RandomForestClassifier(32 trees, depth 6), converted
with skl2onnx's default options (probabilities as ZipMap's maps).

Writes
    examples/sklearn-pipeline/model/pipeline.onnx
    examples/sklearn-pipeline/data/test_features.pb  TensorProto float32 [N, 30]
    examples/sklearn-pipeline/data/test_labels.pb    TensorProto int64 [N]
    examples/sklearn-pipeline/data/ort_labels.pb     TensorProto int64 [N], from onnxruntime
    examples/sklearn-pipeline/data/ort_probabilities.pb  TensorProto float32 [N, 2], from onnxruntime
    examples/sklearn-pipeline/data/sklearn_accuracy.txt  the held-out accuracy scikit-learn reports
Deterministic: seeded split, missing values and forest.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnxruntime as ort
from onnx import numpy_helper
from skl2onnx import to_onnx
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import RandomForestClassifier
from sklearn.impute import SimpleImputer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

HERE = Path(__file__).resolve().parent
SEED = 0
BINNED = 29


def write_if_changed(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def features():
    x, y = load_breast_cancer(return_X_y=True)
    x = x.astype(np.float32)
    # The last column as its quartile (0 to 3), a categorical feature.
    x[:, BINNED] = np.searchsorted(np.quantile(x[:, BINNED], [0.25, 0.5, 0.75]), x[:, BINNED]).astype(np.float32)
    rng = np.random.RandomState(SEED)
    holes = rng.rand(*x.shape) < 0.05
    holes[:, BINNED] = False
    x[holes] = np.nan
    return train_test_split(x, y.astype(np.int64), test_size=0.3, random_state=SEED)


def main():
    x_train, x_test, y_train, y_test = features()
    numeric = list(range(BINNED))
    columns = ColumnTransformer(
        [
            ("numeric", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
            ("binned", OneHotEncoder(handle_unknown="ignore"), [BINNED]),
        ]
    )
    pipeline = make_pipeline(columns, RandomForestClassifier(n_estimators=32, max_depth=6, random_state=SEED))
    pipeline.fit(x_train, y_train)
    accuracy = pipeline.score(x_test, y_test)
    model = to_onnx(pipeline, x_train[:1])
    model.graph.name = "breast_cancer_pipeline"
    opsets = sorted(model.opset_import, key=lambda o: o.domain)
    del model.opset_import[:]
    model.opset_import.extend(opsets)
    write_if_changed(HERE / "model" / "pipeline.onnx", model.SerializeToString())

    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    labels, maps = session.run(None, {model.graph.input[0].name: x_test})
    probabilities = np.array([[row[0], row[1]] for row in maps], np.float32)
    data = {
        "test_features": x_test,
        "test_labels": y_test,
        "ort_labels": labels.astype(np.int64),
        "ort_probabilities": probabilities,
    }
    for name, array in data.items():
        write_if_changed(HERE / "data" / f"{name}.pb", numpy_helper.from_array(array, name).SerializeToString())
    write_if_changed(HERE / "data" / "sklearn_accuracy.txt", f"{accuracy:.6f}\n".encode())
    print(f"sklearn-pipeline: scikit-learn's held-out accuracy {accuracy:.4f} on {len(y_test)} rows")


if __name__ == "__main__":
    main()
