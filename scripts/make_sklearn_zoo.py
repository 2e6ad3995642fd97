#!/usr/bin/env python3
"""A zoo of classic machine-learning exports (tests/onnx-backend/sklearn/), for the runner's --dir mode.

scikit-learn estimators trained on scikit-learn's bundled datasets (iris, digits, breast_cancer,
diabetes, wine; nothing downloaded) with a fixed random_state, converted with skl2onnx (LightGBM and
XGBoost with onnxmltools), each with the converter's default options: the `ai.onnx.ml` operators
(TreeEnsembleClassifier/Regressor, LinearClassifier/Regressor, SVMClassifier/Regressor, Scaler,
Normalizer, Imputer, OneHotEncoder, ...) at the opsets the converters emit. Classifiers are
converted with `zipmap=False` (probabilities as a tensor) and, as `<case>_zipmap`, with the
converters' default (probabilities as ZipMap's sequence of maps, written as a SequenceProto of
MapProtos).

`node_*` cases are single ai.onnx.ml nodes made with onnx.helper for the attribute forms no
converter above writes (Normalizer MAX/L2, int64 Imputer, FeatureVectorizer, the tree ensembles'
other transforms, aggregates and input types, PROBIT, LabelEncoder 1, string OneHotEncoder,
LinearRegressor's transforms, SVMs in liblinear mode, CastMap), and string columns moved by
Gather, Reshape, Slice and the like.

Reference outputs are ONNX Runtime's (CPU) on the dataset's held-out rows (seeded inputs for the
node cases; through ONNX Runtime's C API, scripts/ort_c_api.py, for the maps of strings its Python API
cannot feed), written as ONNX backend
test folders (<case>/model.onnx, <case>/test_data_set_0/input_N.pb, output_N.pb). A case whose
conversion fails, or that ONNX Runtime cannot run, is skipped with the reason printed. Reruns write
the same bytes.

Python: the pinned venv of scripts/requirements.txt (scripts/setup-python.sh). Usage:
    python scripts/make_sklearn_zoo.py [--out tests/onnx-backend/sklearn] [--filter SUBSTRING]
"""

import argparse
import os
import shutil
import sys
import traceback
import warnings
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from sklearn import datasets
from sklearn.base import is_classifier
from sklearn.compose import ColumnTransformer
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer, OneHotEncoder, StandardScaler

from make_op_models import ATOL, RTOL, same_reference, write_if_changed

warnings.filterwarnings("ignore")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "tests", "onnx-backend", "sklearn")
SEED = 0
# Held-out rows fed to each model (the test split's first rows).
ROWS = 24


def split(loader):
    x, y = loader(return_X_y=True)
    x_train, x_test, y_train, _ = train_test_split(x, y, test_size=0.3, random_state=SEED)
    return x_train.astype(np.float32), y_train, x_test[:ROWS].astype(np.float32)


def iris():
    return split(datasets.load_iris)


def binary():
    return split(datasets.load_breast_cancer)


def wine():
    return split(datasets.load_wine)


def digits():
    return split(datasets.load_digits)


def diabetes():
    return split(datasets.load_diabetes)


def named(loader):
    """The dataset with its classes as their names (string labels)."""

    def data():
        x_train, y_train, x_test = split(loader)
        return x_train, loader().target_names[y_train].astype(str), x_test

    return data


def sk(make, data, ml_opset=None, zipmap_option=True):
    """A scikit-learn estimator (or pipeline) `make()` fitted on `data()`, converted by skl2onnx
    (at the converter's default opsets, or at `ml_opset` of ai.onnx.ml where the default cannot
    express the model). `build(keep_zipmap)`: classifiers get `zipmap=False` unless they have no
    such option, or with `keep_zipmap` the converter's default (probabilities as a ZipMap), which
    is None for a model that has no such choice."""

    def build(keep_zipmap=False):
        from skl2onnx import to_onnx

        x_train, y_train, x_test = data()
        model = make().fit(x_train, y_train)
        choice = zipmap_option and is_classifier(model)
        if keep_zipmap and not choice:
            return None
        opset = {"": 21, "ai.onnx.ml": ml_opset} if ml_opset else None
        options = {id(model): {"zipmap": False}} if choice and not keep_zipmap else None
        onx = to_onnx(model, x_train[:1], options=options, target_opset=opset)
        return onx, {onx.graph.input[0].name: x_test}

    return build


def booster(kind, make, data):
    """A LightGBM or XGBoost model converted by onnxmltools."""

    def build(keep_zipmap=False):
        from onnxmltools import convert_lightgbm, convert_xgboost
        from onnxmltools.convert.common.data_types import FloatTensorType

        x_train, y_train, x_test = data()
        model = make().fit(x_train, y_train)
        classifier = hasattr(model, "predict_proba")
        # onnxmltools' XGBoost converter writes the probabilities as a tensor only.
        if keep_zipmap and (kind == "xgboost" or not classifier):
            return None
        convert = convert_lightgbm if kind == "lightgbm" else convert_xgboost
        extra = {"zipmap": False} if kind == "lightgbm" and classifier and not keep_zipmap else {}
        onx = convert(model, initial_types=[("input", FloatTensorType([None, x_train.shape[1]]))], **extra)
        # onnxmltools names the graph with a random UUID.
        onx.graph.name = f"{kind} {type(model).__name__}"
        return onx, {"input": x_test}

    return build


def ints_for_bools():
    """skl2onnx 1.20 gives HistGradientBoosting's missing-value flags to onnx.helper as numpy
    bools, which protobuf 7 refuses in an INTS attribute: pass them as the 0/1 ints they mean."""
    from skl2onnx.common import _container

    make_node = _container.make_node

    def patched(*args, **attrs):
        for key, value in attrs.items():
            if isinstance(value, list) and any(isinstance(item, (bool, np.bool_)) for item in value):
                attrs[key] = [int(item) if isinstance(item, (bool, np.bool_)) else item for item in value]
        return make_node(*args, **attrs)

    _container.make_node = patched


def node(op, inputs, attrs, outputs, ml_opset=3):
    """One ai.onnx.ml node on seeded `inputs` ([(name, array)]) with `outputs` ([(name, elem
    type, rank)]): the attribute forms no converter of the zoo writes (ONNX Runtime the oracle)."""

    def build(keep_zipmap=False):
        if keep_zipmap:
            return None
        from onnx import helper

        graph = helper.make_graph(
            [helper.make_node(op, [n for n, _ in inputs], [n for n, _, _ in outputs], domain="ai.onnx.ml", **attrs)],
            op,
            [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)) for n, a in inputs],
            [helper.make_tensor_value_info(n, t, [None] * rank) for n, t, rank in outputs],
        )
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", ml_opset)]
        return helper.make_model(graph, opset_imports=opsets, ir_version=8), dict(inputs)

    return build


def tree_attrs(prefix, n_targets_or_classes):
    """Two trees on x[:, 0] and x[:, 1]; each leaf weights some of the first `n_targets_or_classes`
    targets (with one or two targets, a leaf of tree 1 weights none of them, and some weights
    are 0, so rows have zero scores), the third at every leaf."""
    leaves = [
        (0, 1, [(0, 0.5), (1, -0.25), (2, 0.0)]),
        (0, 2, [(0, 0.0), (2, 0.25)]),
        (1, 1, [(1, 1.5), (2, 0.0)]),
        (1, 2, [(0, -1.0), (1, 0.75), (2, -0.5)]),
    ]
    weights = [(t, n, target, w) for t, n, pairs in leaves for target, w in pairs if target < n_targets_or_classes]
    return {
        "nodes_treeids": [0, 0, 0, 1, 1, 1],
        "nodes_nodeids": [0, 1, 2, 0, 1, 2],
        "nodes_featureids": [0, 0, 0, 1, 0, 0],
        "nodes_modes": ["BRANCH_LEQ", "LEAF", "LEAF", "BRANCH_GT", "LEAF", "LEAF"],
        "nodes_values": [0.1, 0.0, 0.0, -0.2, 0.0, 0.0],
        "nodes_truenodeids": [1, 0, 0, 1, 0, 0],
        "nodes_falsenodeids": [2, 0, 0, 2, 0, 0],
        f"{prefix}_treeids": [w[0] for w in weights],
        f"{prefix}_nodeids": [w[1] for w in weights],
        f"{prefix}_ids": [w[2] for w in weights],
        f"{prefix}_weights": [w[3] for w in weights],
    }


def node_cases():
    rng = np.random.RandomState(SEED)
    x = rng.randn(12, 4).astype(np.float32)
    x[3] = 0.0
    x[5] = -np.abs(x[5])
    ints = rng.randint(-1, 3, size=(12, 3)).astype(np.int64)
    float_out = [("y", onnx.TensorProto.FLOAT, 2)]
    yield "node_normalizer_max", node("Normalizer", [("x", x)], {"norm": "MAX"}, float_out)
    yield "node_normalizer_l2", node("Normalizer", [("x", x)], {"norm": "L2"}, float_out)
    yield "node_imputer_int64", node(
        "Imputer", [("x", ints)], {"replaced_value_int64": -1, "imputed_value_int64s": [7, 8, 9]},
        [("y", onnx.TensorProto.INT64, 2)],
    )
    yield "node_feature_vectorizer", node(
        "FeatureVectorizer", [("a", x[:, :2].copy()), ("b", x[:, 3:].copy())], {"inputdimensions": [2, 1]}, float_out
    )
    for transform in ("SOFTMAX_ZERO", "SOFTMAX", "LOGISTIC"):
        attrs = {**tree_attrs("target", 2), "n_targets": 2, "post_transform": transform}
        yield f"node_tree_regressor_{transform.lower()}", node("TreeEnsembleRegressor", [("x", x)], attrs, float_out)
    for aggregate in ("AVERAGE", "MAX", "MIN"):
        attrs = {**tree_attrs("target", 1), "n_targets": 1, "aggregate_function": aggregate, "base_values": [0.5]}
        yield f"node_tree_regressor_{aggregate.lower()}", node("TreeEnsembleRegressor", [("x", x)], attrs, float_out)
    classified = [("label", onnx.TensorProto.INT64, 1), ("scores", onnx.TensorProto.FLOAT, 2)]
    attrs = {**tree_attrs("class", 3), "classlabels_int64s": [10, 20, 30], "post_transform": "SOFTMAX_ZERO"}
    yield "node_tree_classifier_softmax_zero", node("TreeEnsembleClassifier", [("x", x)], attrs, classified)
    probit = {
        "coefficients": [0.05, -0.02, 0.01, 0.03, -0.04, 0.02, 0.0, 0.01, 0.02, 0.02, -0.01, -0.03],
        "intercepts": [0.3, 0.5, 0.7],
        "classlabels_ints": [1, 2, 3],
        "post_transform": "PROBIT",
    }
    yield "node_linear_classifier_probit", node("LinearClassifier", [("x", x)], probit, classified)
    categories = {"cats_strings": ["red", "green", "blue"], "cats_int64s": [3, 1, 2], "default_int64": 99}
    words = np.array([["green", "blue", "mauve"], ["red", "red", ""]], dtype=object)
    yield "node_category_mapper_to_ints", node(
        "CategoryMapper", [("x", words)], categories, [("y", onnx.TensorProto.INT64, 2)]
    )
    codes = np.array([[2, 3, 7], [1, 1, 0]], dtype=np.int64)
    yield "node_string_movement", string_movement()
    floats = {3: 1.25, 0: -2.5, 7: 3.0, 9: 0.1}
    yield "node_cast_map_dense_to_float", cast_map(floats, {"cast_to": "TO_FLOAT"})
    yield "node_cast_map_sparse_to_int64", cast_map(floats, {"cast_to": "TO_INT64", "map_form": "SPARSE", "max_map": 8})
    yield "node_cast_map_dense_to_string", cast_map(floats, {"cast_to": "TO_STRING"})
    # Strings parsed as C's stof/stoll (leading blanks, the longest numeric prefix, hex floats).
    texts = {0: "1.5", 2: " -2.25e1abc", 4: "7", 5: "0x1p3", 6: "inf"}
    yield "node_cast_map_strings_dense_to_float", cast_map(texts, {"cast_to": "TO_FLOAT"})
    # stoll throws on "inf" (ONNX Runtime's run fails): integers from the others.
    numbers = {k: v for k, v in texts.items() if v != "inf"}
    yield "node_cast_map_strings_sparse_to_int64", cast_map(numbers, {"cast_to": "TO_INT64", "map_form": "SPARSE", "max_map": 8})
    yield "node_cast_map_strings_sparse_to_string", cast_map(texts, {"cast_to": "TO_STRING", "map_form": "SPARSE", "max_map": 8})
    yield "node_category_mapper_to_strings", node(
        "CategoryMapper", [("x", codes)], {**categories, "default_string": "?"}, [("y", onnx.TensorProto.STRING, 2)]
    )
    classes = {"classes_strings": ["red", "green", "blue"], "default_int64": -7}
    yield "node_label_encoder_v1_to_ints", node(
        "LabelEncoder", [("x", words)], classes, [("y", onnx.TensorProto.INT64, 2)], ml_opset=1
    )
    yield "node_label_encoder_v1_to_strings", node(
        "LabelEncoder", [("x", codes)], {**classes, "default_string": "?"}, [("y", onnx.TensorProto.STRING, 2)],
        ml_opset=1,
    )
    yield "node_one_hot_encoder_strings", node(
        "OneHotEncoder", [("x", words)], {"cats_strings": ["blue", "red", "", "green"]}, [("y", onnx.TensorProto.FLOAT, 3)]
    )
    coefficients = [0.5, -0.2, 0.1, 0.3, -0.4, 0.2, 0.0, 0.1, 0.2, 0.2, -0.1, -0.3]
    for transform in ("SOFTMAX", "SOFTMAX_ZERO", "LOGISTIC", "PROBIT"):
        regressor = {"coefficients": coefficients, "intercepts": [0.1, 0.0, -0.2], "targets": 3, "post_transform": transform}
        yield f"node_linear_regressor_{transform.lower()}", node("LinearRegressor", [("x", x)], regressor, float_out)
    probit = {"coefficients": [0.05, -0.02, 0.01, 0.03], "intercepts": [0.3], "post_transform": "PROBIT"}
    yield "node_linear_regressor_one_target_probit", node("LinearRegressor", [("x", x)], probit, float_out)
    liblinear = {"coefficients": coefficients[:4], "rho": [0.25], "kernel_type": "RBF", "kernel_params": [0.5, 0.0, 3.0]}
    yield "node_svm_regressor_liblinear", node("SVMRegressor", [("x", x)], liblinear, float_out)
    for name, labels, weights, transform in (
        ("multiclass_softmax", [4, 5, 6], coefficients, "SOFTMAX"),
        ("binary_mixed", [0, 1], coefficients[:8], "NONE"),
        ("binary_positive", [0, 1], [abs(c) for c in coefficients[:8]], "LOGISTIC"),
    ):
        # ONNX Runtime requires `kernel_params` even where the mode ignores them.
        attrs = {
            "coefficients": weights, "rho": [-0.1], "classlabels_ints": labels, "post_transform": transform,
            "kernel_params": [0.5, 0.0, 3.0],
        }
        yield f"node_svm_classifier_liblinear_{name}", node("SVMClassifier", [("x", x)], attrs, classified)
    poly = {
        "support_vectors": [float(v) for v in x[:3].ravel()], "n_supports": 3, "coefficients": [0.5, -1.0, 0.25],
        "rho": [0.1], "kernel_type": "POLY", "kernel_params": [0.3, 1.0, 2.0],
    }
    yield "node_svm_regressor_poly_degree_2", node("SVMRegressor", [("x", x)], poly, float_out)
    # ONNX Runtime reads SVMRegressor's post_transform and does not apply it.
    rbf_logistic = {**poly, "kernel_type": "RBF", "post_transform": "LOGISTIC"}
    yield "node_svm_regressor_rbf_logistic_unapplied", node("SVMRegressor", [("x", x)], rbf_logistic, float_out)
    yield "node_dict_vectorizer_int64_to_string", dict_vectorizer_strings()
    doubles = x.astype(np.float64) + 1e-9
    attrs = {**tree_attrs("class", 3), "classlabels_int64s": [10, 20, 30], "base_values": [0.1, 0.2, 0.3]}
    yield "node_tree_classifier_double", node("TreeEnsembleClassifier", [("x", doubles)], attrs, classified)
    attrs = {**tree_attrs("target", 2), "n_targets": 2, "aggregate_function": "AVERAGE", "base_values": [0.5, -0.5]}
    yield "node_tree_regressor_double", node("TreeEnsembleRegressor", [("x", doubles)], attrs, float_out)
    # ONNX Runtime's TreeEnsembleRegressor takes float and double only; its classifier integers too.
    attrs = {**tree_attrs("class", 3), "classlabels_int64s": [1, 2, 3], "nodes_values": [0.5, 0.0, 0.0, 1.5, 0.0, 0.0]}
    yield "node_tree_classifier_int64", node("TreeEnsembleClassifier", [("x", ints)], attrs, classified)


def string_movement():
    """String columns moved by the default domain's data-movement ops as the converters use them
    (Gather of a column, Reshape, Transpose, Slice, Unsqueeze, Squeeze, Flatten, Shape)."""

    def build(keep_zipmap=False):
        if keep_zipmap:
            return None
        from onnx import helper

        def ints(name, values):
            return helper.make_tensor(name, onnx.TensorProto.INT64, [len(values)], values)

        nodes = [
            helper.make_node("Gather", ["x", "column"], ["picked"], axis=1),
            helper.make_node("Reshape", ["x", "flat_shape"], ["flat"]),
            helper.make_node("Transpose", ["x"], ["transposed"], perm=[1, 0]),
            helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["sliced"]),
            helper.make_node("Unsqueeze", ["picked", "axes"], ["unsqueezed"]),
            helper.make_node("Squeeze", ["unsqueezed", "axes"], ["squeezed"]),
            helper.make_node("Flatten", ["x"], ["flattened"], axis=0),
            helper.make_node("Shape", ["x"], ["shape"]),
        ]
        strings = [("picked", 2), ("flat", 1), ("transposed", 2), ("sliced", 2), ("squeezed", 2), ("flattened", 2)]
        graph = helper.make_graph(
            nodes,
            "string_movement",
            [helper.make_tensor_value_info("x", onnx.TensorProto.STRING, [None, 3])],
            [helper.make_tensor_value_info(n, onnx.TensorProto.STRING, [None] * r) for n, r in strings]
            + [helper.make_tensor_value_info("shape", onnx.TensorProto.INT64, [2])],
            [
                ints("column", [2, 0]), ints("flat_shape", [-1]), ints("starts", [1]), ints("ends", [3]),
                ints("axes", [1]),
            ],
        )
        onx = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
        words = np.array([["red", "S", "x"], ["green", "", "yy"], ["blue", "L", "zzz"], ["mauve", "M", "w"]], dtype=object)
        return onx, {"x": words}

    return build


def feature_dicts():
    """The wine data as one dict of named features (skl2onnx's DictVectorizer takes one map)."""
    x_train, y_train, x_test = wine()
    names = [f"f{i}" for i in range(x_train.shape[1])]

    def as_dicts(rows):
        return [{n: float(v) for n, v in zip(names, row) if v != 0.0} for row in rows]

    return as_dicts(x_train), y_train, as_dicts(x_test[:1])


def dict_vectorizer_pipeline():
    """DictVectorizer + scaling + logistic regression on one feature dict (skl2onnx's input is a
    single map, ONNX Runtime's DictVectorizer one row): a held-out row missing one feature."""

    def build(keep_zipmap=False):
        from sklearn.feature_extraction import DictVectorizer
        from sklearn.linear_model import LogisticRegression
        from skl2onnx import convert_sklearn
        from skl2onnx.common.data_types import DictionaryType, FloatTensorType, StringTensorType

        x_train, y_train, x_test = feature_dicts()
        model = make_pipeline(DictVectorizer(sparse=False), StandardScaler(), LogisticRegression(max_iter=500))
        model.fit(x_train, y_train)
        options = None if keep_zipmap else {id(model): {"zipmap": False}}
        initial = [("features", DictionaryType(StringTensorType([]), FloatTensorType([])))]
        onx = convert_sklearn(model, initial_types=initial, options=options, target_opset={"": 21, "ai.onnx.ml": 3})
        # convert_sklearn names the graph with a random UUID.
        onx.graph.name = "DictVectorizer pipeline"
        row = dict(x_test[0])
        row.pop("f3", None)
        return onx, {"features": {k: np.float32(v) for k, v in row.items()}}

    return build


def dict_vectorizer_strings():
    """DictVectorizer of an int64-keyed map of strings, keys missing and keys outside the
    vocabulary among them (ONNX Runtime through its C API: its Python API cannot feed the map)."""

    def build(keep_zipmap=False):
        if keep_zipmap:
            return None
        from onnx import helper

        map_type = helper.make_map_type_proto(onnx.TensorProto.INT64, helper.make_tensor_type_proto(onnx.TensorProto.STRING, []))
        graph = helper.make_graph(
            [helper.make_node("DictVectorizer", ["x"], ["y"], domain="ai.onnx.ml", int64_vocabulary=[3, 1, 5, 2, 8])],
            "dict_vectorizer_strings",
            [helper.make_value_info("x", map_type)],
            [helper.make_tensor_value_info("y", onnx.TensorProto.STRING, [1, 5])],
        )
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)]
        feed = {1: "a", 2: "bb", 3: "", 5: "c d", 9: "unused"}
        return helper.make_model(graph, opset_imports=opsets, ir_version=8), {"x": feed}, "c_api"

    return build


def cast_map(values, attrs):
    """One CastMap node on an int64-keyed map of floats or strings (ONNX Runtime the oracle)."""

    def build(keep_zipmap=False):
        if keep_zipmap:
            return None
        from onnx import helper

        value_type = onnx.TensorProto.STRING if isinstance(next(iter(values.values())), str) else onnx.TensorProto.FLOAT
        out_type = {"TO_FLOAT": onnx.TensorProto.FLOAT, "TO_INT64": onnx.TensorProto.INT64}.get(
            attrs.get("cast_to", "TO_STRING"), onnx.TensorProto.STRING
        )
        map_type = helper.make_map_type_proto(onnx.TensorProto.INT64, helper.make_tensor_type_proto(value_type, []))
        graph = helper.make_graph(
            [helper.make_node("CastMap", ["x"], ["y"], domain="ai.onnx.ml", **attrs)],
            "cast_map",
            [helper.make_value_info("x", map_type)],
            [helper.make_tensor_value_info("y", out_type, [1, None])],
        )
        opsets = [helper.make_opsetid("", 17), helper.make_opsetid("ai.onnx.ml", 1)]
        feed = {k: (v if isinstance(v, str) else np.float32(v)) for k, v in values.items()}
        model = helper.make_model(graph, opset_imports=opsets, ir_version=8)
        # ONNX Runtime's Python API cannot feed a map of strings: its C API can.
        return (model, {"x": feed}, "c_api") if value_type == onnx.TensorProto.STRING else (model, {"x": feed})

    return build


def mixed_columns():
    """Numeric columns with missing values beside a categorical (integer-coded) column."""
    x_train, y_train, x_test = iris()
    rng = np.random.RandomState(SEED)

    def with_category(x):
        x = x.copy()
        x[rng.rand(*x.shape) < 0.1] = np.nan
        x[:, 3] = np.floor(np.nan_to_num(x[:, 3], nan=1.0) * 2)
        return x

    return with_category(x_train), y_train, with_category(x_test)


def column_pipeline():
    from sklearn.impute import SimpleImputer
    from sklearn.linear_model import LogisticRegression

    columns = ColumnTransformer(
        [
            ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), [0, 1, 2]),
            ("cat", OneHotEncoder(handle_unknown="ignore"), [3]),
        ]
    )
    return make_pipeline(columns, LogisticRegression(max_iter=500))


def string_categories():
    """Two columns of category names (a colour and a size) and a class derived from them; the
    held-out rows include a colour never seen in training."""
    rng = np.random.RandomState(SEED)
    colours, sizes = np.array(["red", "green", "blue", "mauve"]), np.array(["S", "M", "L"])
    x = np.stack([colours[rng.randint(0, 4, 200)], sizes[rng.randint(0, 3, 200)]], 1).astype(object)
    y = (x[:, 0] == "red").astype(int) + (x[:, 1] == "L")
    x_test = x[-ROWS:].copy()
    x_test[0, 0] = "purple"
    return x[:-ROWS], y[:-ROWS], x_test


def cases():
    from sklearn import cluster, decomposition, ensemble, gaussian_process, linear_model
    from sklearn import naive_bayes, neighbors, neural_network, svm, tree

    rs = {"random_state": SEED}
    small = {"n_estimators": 8, "max_depth": 4, **rs}
    yield "logistic_iris", sk(lambda: make_pipeline(StandardScaler(), linear_model.LogisticRegression()), iris)
    yield "logistic_binary", sk(lambda: make_pipeline(StandardScaler(), linear_model.LogisticRegression()), binary)
    yield "linear_regression", sk(linear_model.LinearRegression, diabetes)
    yield "ridge", sk(lambda: make_pipeline(MinMaxScaler(), linear_model.Ridge()), diabetes)
    yield "lasso", sk(lambda: linear_model.Lasso(alpha=0.1), diabetes)
    yield "sgd_classifier", sk(lambda: make_pipeline(StandardScaler(), linear_model.SGDClassifier(**rs)), wine)
    yield "sgd_regressor", sk(lambda: make_pipeline(StandardScaler(), linear_model.SGDRegressor(**rs)), diabetes)
    yield "linear_svc", sk(lambda: svm.LinearSVC(**rs), iris, zipmap_option=False)
    yield "linear_svr", sk(lambda: make_pipeline(StandardScaler(), svm.LinearSVR(**rs)), diabetes)
    for kernel in ("linear", "poly", "rbf", "sigmoid"):
        yield f"svc_{kernel}", sk(lambda k=kernel: make_pipeline(StandardScaler(), svm.SVC(kernel=k)), iris)
        yield f"svr_{kernel}", sk(lambda k=kernel: make_pipeline(StandardScaler(), svm.SVR(kernel=k)), diabetes)
    yield "svc_rbf_proba", sk(lambda: make_pipeline(StandardScaler(), svm.SVC(probability=True, **rs)), iris)
    yield "svc_binary", sk(lambda: make_pipeline(StandardScaler(), svm.SVC()), binary)
    yield "one_class_svm", sk(lambda: make_pipeline(StandardScaler(), svm.OneClassSVM(nu=0.2)), iris)
    yield "svc_binary_proba", sk(lambda: make_pipeline(StandardScaler(), svm.SVC(probability=True, **rs)), binary)
    yield "knn_classifier", sk(lambda: neighbors.KNeighborsClassifier(n_neighbors=5), iris)
    yield "knn_regressor", sk(lambda: neighbors.KNeighborsRegressor(n_neighbors=5), diabetes)
    yield "gaussian_nb", sk(naive_bayes.GaussianNB, iris)
    yield "bernoulli_nb", sk(lambda: naive_bayes.BernoulliNB(binarize=5.0), digits)
    yield "multinomial_nb", sk(naive_bayes.MultinomialNB, digits)
    yield "decision_tree_classifier", sk(lambda: tree.DecisionTreeClassifier(max_depth=5, **rs), iris)
    yield "decision_tree_binary", sk(lambda: tree.DecisionTreeClassifier(max_depth=5, **rs), binary)
    yield "decision_tree_regressor", sk(lambda: tree.DecisionTreeRegressor(max_depth=5, **rs), diabetes)
    yield "random_forest_classifier", sk(lambda: ensemble.RandomForestClassifier(**small), iris)
    yield "random_forest_binary", sk(lambda: ensemble.RandomForestClassifier(**small), binary)
    yield "random_forest_regressor", sk(lambda: ensemble.RandomForestRegressor(**small), diabetes)
    yield "extra_trees_classifier", sk(lambda: ensemble.ExtraTreesClassifier(**small), wine)
    yield "extra_trees_regressor", sk(lambda: ensemble.ExtraTreesRegressor(**small), diabetes)
    yield "gradient_boosting_classifier", sk(lambda: ensemble.GradientBoostingClassifier(**small), iris)
    yield "gradient_boosting_binary", sk(lambda: ensemble.GradientBoostingClassifier(**small), binary)
    yield "gradient_boosting_regressor", sk(lambda: ensemble.GradientBoostingRegressor(**small), diabetes)
    yield "hist_gradient_boosting_classifier", sk(
        lambda: ensemble.HistGradientBoostingClassifier(max_iter=8, max_depth=4, **rs), wine, ml_opset=3
    )
    yield "hist_gradient_boosting_regressor", sk(
        lambda: ensemble.HistGradientBoostingRegressor(max_iter=8, max_depth=4, **rs), diabetes, ml_opset=3
    )
    yield "adaboost_classifier", sk(lambda: ensemble.AdaBoostClassifier(n_estimators=8, **rs), iris)
    yield "adaboost_regressor", sk(lambda: ensemble.AdaBoostRegressor(n_estimators=8, **rs), diabetes)
    yield "mlp_classifier", sk(
        lambda: make_pipeline(StandardScaler(), neural_network.MLPClassifier(hidden_layer_sizes=(16,), max_iter=300, **rs)), iris
    )
    yield "mlp_regressor", sk(
        lambda: make_pipeline(StandardScaler(), neural_network.MLPRegressor(hidden_layer_sizes=(16,), max_iter=300, **rs)), diabetes
    )
    yield "kmeans", sk(lambda: cluster.KMeans(n_clusters=3, n_init=1, **rs), iris)
    yield "pca", sk(lambda: decomposition.PCA(n_components=3, **rs), digits)
    yield "truncated_svd", sk(lambda: decomposition.TruncatedSVD(n_components=3, **rs), digits)
    yield "gaussian_process", sk(lambda: gaussian_process.GaussianProcessRegressor(**rs), diabetes)
    yield "normalizer_max_abs", sk(lambda: make_pipeline(Normalizer(norm="l1"), MaxAbsScaler()), iris)
    yield "column_transformer", sk(column_pipeline, mixed_columns)
    yield "dict_vectorizer", dict_vectorizer_pipeline()
    yield "one_hot_strings", sk(
        lambda: make_pipeline(OneHotEncoder(handle_unknown="ignore"), linear_model.LogisticRegression()), string_categories
    )
    # String class labels.
    yield "logistic_strings", sk(lambda: make_pipeline(StandardScaler(), linear_model.LogisticRegression()), named(datasets.load_iris))
    yield "random_forest_strings", sk(lambda: ensemble.RandomForestClassifier(**small), named(datasets.load_wine))
    yield "gradient_boosting_binary_strings", sk(lambda: ensemble.GradientBoostingClassifier(**small), named(datasets.load_breast_cancer))
    yield "svc_strings", sk(lambda: make_pipeline(StandardScaler(), svm.SVC()), named(datasets.load_iris))
    yield "lightgbm_classifier", booster("lightgbm", lambda: lgbm("LGBMClassifier"), iris)
    yield "lightgbm_binary", booster("lightgbm", lambda: lgbm("LGBMClassifier"), binary)
    yield "lightgbm_regressor", booster("lightgbm", lambda: lgbm("LGBMRegressor"), diabetes)
    yield "xgboost_classifier", booster("xgboost", lambda: xgb("XGBClassifier"), iris)
    yield "xgboost_binary", booster("xgboost", lambda: xgb("XGBClassifier"), binary)
    yield "xgboost_regressor", booster("xgboost", lambda: xgb("XGBRegressor"), diabetes)


def with_rows(data, rows):
    """`data` with `rows` rows to score: its held-out and training rows repeated to that count."""

    def tiled():
        x_train, y_train, x_test = data()
        pool = np.concatenate([x_test, x_train])
        return x_train, y_train, np.resize(pool, (rows, pool.shape[1]))

    return tiled


def bench_cases():
    """The benchmark's models (`--bench`): the tree ensembles and SVMs at the estimators' default
    sizes (100 trees, unbounded depth; every support vector), each scoring 1 and 1,000 rows."""
    from sklearn import ensemble, svm

    rs = {"random_state": SEED}
    models = [
        ("random_forest_classifier", lambda: ensemble.RandomForestClassifier(**rs), digits),
        ("random_forest_regressor", lambda: ensemble.RandomForestRegressor(**rs), diabetes),
        ("extra_trees_classifier", lambda: ensemble.ExtraTreesClassifier(**rs), wine),
        ("gradient_boosting_classifier", lambda: ensemble.GradientBoostingClassifier(**rs), iris),
        ("gradient_boosting_regressor", lambda: ensemble.GradientBoostingRegressor(**rs), diabetes),
        ("svc_rbf", lambda: make_pipeline(StandardScaler(), svm.SVC()), digits),
        ("svc_poly", lambda: make_pipeline(StandardScaler(), svm.SVC(kernel="poly")), binary),
        ("svc_linear", lambda: make_pipeline(StandardScaler(), svm.SVC(kernel="linear")), wine),
        ("svc_rbf_proba", lambda: make_pipeline(StandardScaler(), svm.SVC(probability=True, **rs)), iris),
        ("svr_rbf", lambda: make_pipeline(StandardScaler(), svm.SVR()), diabetes),
        ("svr_poly", lambda: make_pipeline(StandardScaler(), svm.SVR(kernel="poly")), diabetes),
    ]
    boosters = [
        ("lightgbm_classifier", "lightgbm", "LGBMClassifier", binary),
        ("lightgbm_regressor", "lightgbm", "LGBMRegressor", diabetes),
        ("xgboost_classifier", "xgboost", "XGBClassifier", binary),
        ("xgboost_regressor", "xgboost", "XGBRegressor", diabetes),
    ]
    for rows in (1, 1000):
        for name, make, data in models:
            yield f"{name}_batch{rows}", sk(make, with_rows(data, rows))
        for name, kind, estimator, data in boosters:
            make = booster(kind, lambda k=kind, e=estimator: default_booster(k, e), with_rows(data, rows))
            yield f"{name}_batch{rows}", free_batch(make)


def free_batch(build):
    """`build` with its outputs' first dim left free where the converter fixed it at 1:
    onnxmltools declares a LightGBM classifier's label `[1]` whatever the batch, and ONNX Runtime
    then refuses to score 1,000 rows."""

    def freed(*args, **kwargs):
        made = build(*args, **kwargs)
        for output in made[0].graph.output if made else []:
            dims = output.type.tensor_type.shape.dim
            if dims and dims[0].dim_value == 1:
                dims[0].dim_param = "N"
        return made

    return freed


def default_booster(kind, name):
    """A LightGBM or XGBoost estimator at its default size (100 trees), one thread."""
    module = __import__(kind)
    return getattr(module, name)(random_state=SEED, n_jobs=1, **({"verbose": -1} if kind == "lightgbm" else {}))


def lgbm(name):
    import lightgbm

    return getattr(lightgbm, name)(n_estimators=8, num_leaves=8, random_state=SEED, n_jobs=1, verbose=-1)


def xgb(name):
    import xgboost

    return getattr(xgboost, name)(n_estimators=8, max_depth=3, random_state=SEED, n_jobs=1)


def map_proto(mapping, name=None):
    """A dict as a MapProto (onnx-data.proto), its values one scalar tensor each (floats as f32,
    strings as strings); numpy_helper.from_dict cannot make string keys."""
    keys = list(mapping)
    strings = isinstance(keys[0], str)
    values = onnx.SequenceProto(elem_type=onnx.SequenceProto.TENSOR)
    for k in keys:
        v = mapping[k]
        values.tensor_values.append(numpy_helper.from_array(np.array(v, dtype=object if isinstance(v, str) else np.float32)))
    entry = onnx.MapProto(name=name, key_type=onnx.TensorProto.STRING if strings else onnx.TensorProto.INT64, values=values)
    if strings:
        entry.string_keys.extend(k.encode() for k in keys)
    else:
        entry.keys.extend(int(k) for k in keys)
    return entry


def score_maps(name, rows):
    """ZipMap's output (a list of dicts) as a SequenceProto of MapProtos."""
    sequence = onnx.SequenceProto(name=name, elem_type=onnx.SequenceProto.MAP)
    sequence.map_values.extend(map_proto(row) for row in rows)
    return sequence


def same_maps(path, rows):
    """Whether the maps at `path` have the same keys and values within the references' tolerance."""
    if not path.exists():
        return False
    old = onnx.SequenceProto.FromString(path.read_bytes())
    if len(old.map_values) != len(rows):
        return False
    for entry, row in zip(old.map_values, rows):
        keys = [k.decode() for k in entry.string_keys] or list(entry.keys)
        values = [float(numpy_helper.to_array(t)) for t in entry.values.tensor_values]
        if keys != list(row) or not np.allclose(values, [row[k] for k in keys], rtol=RTOL, atol=ATOL):
            return False
    return True


def make_case(out_dir, name, build):
    built = build()
    if built is None:
        return None, None
    onx, feeds, *oracle = built
    # The converters list the opsets in set order (it changes with Python's hash seed).
    opsets = sorted(onx.opset_import, key=lambda o: (o.domain, o.version))
    del onx.opset_import[:]
    onx.opset_import.extend(opsets)
    model_bytes = onx.SerializeToString()
    try:
        if oracle == ["c_api"]:
            from ort_c_api import run as run_through_c_api

            results, outputs = run_through_c_api(onx, feeds), onx.graph.output
        else:
            sess = ort.InferenceSession(model_bytes, providers=["CPUExecutionProvider"])
            results, outputs = sess.run(None, feeds), sess.get_outputs()
    except Exception as e:  # noqa: BLE001
        return None, "onnxruntime failed: " + str(e).splitlines()[0][:300]
    for o, r in zip(outputs, results):
        if not isinstance(r, np.ndarray) and not (isinstance(r, list) and r and isinstance(r[0], dict)):
            return None, f"output {o.name} is neither a tensor nor ZipMap's maps ({type(r).__name__})"
    # Unchanged files are left untouched, and a reference that ONNX Runtime recomputes within the
    # evaluators' tolerance (its last bits differ between CPUs) is kept: a clone stays clean.
    case = Path(out_dir) / name
    data = case / "test_data_set_0"
    data.mkdir(parents=True, exist_ok=True)
    write_if_changed(case / "model.onnx", model_bytes)
    for i, graph_input in enumerate(onx.graph.input):
        feed = feeds[graph_input.name]
        # A map input (DictVectorizer's, CastMap's) as a MapProto.
        proto = map_proto(feed, graph_input.name) if isinstance(feed, dict) else numpy_helper.from_array(feed, graph_input.name)
        write_if_changed(data / f"input_{i}.pb", proto.SerializeToString())
    for i, (o, r) in enumerate(zip(outputs, results)):
        path = data / f"output_{i}.pb"
        if isinstance(r, list):
            if not same_maps(path, r):
                path.write_bytes(score_maps(o.name, r).SerializeToString())
        elif not same_reference(path, r, o.name):
            path.write_bytes(numpy_helper.from_array(r, o.name).SerializeToString())
    ops = sorted({f"{n.domain + '::' if n.domain else ''}{n.op_type}" for n in onx.graph.node})
    opsets = ", ".join(sorted({f"{o.domain or 'ai.onnx'} {o.version}" for o in onx.opset_import}))
    return dict(ops=" ".join(ops), opsets=opsets, size=len(model_bytes)), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--filter", default=None, help="only cases whose name contains this")
    ap.add_argument(
        "--bench", action="store_true",
        help="write the benchmark's cases instead (default sizes, batches of 1 and 1,000; --out defaults to "
        "$BURN_ONNX_CACHE/sklearn-bench)",
    )
    args = ap.parse_args()
    if args.bench and args.out == DEFAULT_OUT:
        cache = os.environ.get("BURN_ONNX_CACHE", os.path.expanduser("~/.cache/burn-onnx"))
        args.out = os.path.join(cache, "sklearn-bench")
    os.makedirs(args.out, exist_ok=True)
    ints_for_bools()
    rows, written = [], set()
    if args.bench:
        variants = list(bench_cases())
    else:
        # Each classifier also as the converter writes it by default: probabilities as ZipMap's maps.
        variants = [(name, build) for name, build in cases()] + list(node_cases())
        variants += [(f"{name}_zipmap", lambda build=build: build(keep_zipmap=True)) for name, build in variants]
    for name, build in variants:
        if args.filter and args.filter not in name:
            continue
        try:
            info, why = make_case(args.out, name, build)
        except Exception as e:  # noqa: BLE001 - a failing converter skips its case, loudly
            traceback.print_exc()
            info, why = None, f"conversion failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"
        if info:
            written.add(name)
        if info or why:
            rows.append((name, info, why))
    if not args.filter:
        for entry in sorted(os.listdir(args.out)):
            if os.path.isdir(os.path.join(args.out, entry)) and entry not in written:
                print(f"removing stale case folder {entry}")
                shutil.rmtree(os.path.join(args.out, entry))
    total = 0
    for name, info, why in rows:
        if info:
            total += info["size"]
            print(f"{name:36} {info['size'] / 1024:>6.0f}KB  [{info['opsets']}] {info['ops']}")
        else:
            print(f"{name:36} SKIPPED: {why}")
    ok = sum(1 for r in rows if r[1])
    print(f"\n{ok} of {len(rows)} cases written to {args.out}; models {total / 1e6:.2f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
