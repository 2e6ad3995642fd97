#!/usr/bin/env python3
"""Writes the official ONNX backend node tests of the pinned onnx wheel as test folders
(`node/<test>/model.onnx`, `node/<test>/test_data_set_N/{input,output}_K.pb`), the layout the
onnx-backend runner reads with `--data DIR --suite node`.

From onnx 1.23 the wheel no longer ships `onnx/backend/test/data/node`; its test cases
(`onnx.backend.test.case.node`, 1,884 at onnx==1.23.2) are generated here with the wheel's own
writer (`onnx.backend.test.cmd_tools.generate_data`, whose `generate-data` command writes the
model cases only). Each case seeds numpy (`np.random.seed(0)`) before it is built, so with the
pinned onnx, numpy and ml_dtypes (scripts/requirements.txt) the files are the same on every run.

    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/make_node_data.py [DIR]

DIR defaults to `${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/onnx-<version>-data`, outside the
repository; it is left as it is when its stamp names the same onnx, numpy and ml_dtypes versions
(so the runner's build of the suite is not invalidated by rewritten files). Prints DIR.
"""

import argparse
import importlib.metadata
import os
import shutil
import sys
from pathlib import Path

import onnx
import onnx.backend.test.case.model as model_cases
import onnx.backend.test.case.node as node_cases
from onnx.backend.test import cmd_tools


def default_dir() -> Path:
    cache = Path(os.environ.get("BURN_ONNX_CACHE", Path.home() / ".cache" / "burn-onnx"))
    return cache / f"onnx-{onnx.__version__}-data"


def versions() -> str:
    return " ".join(f"{p}=={importlib.metadata.version(p)}" for p in ("onnx", "numpy", "ml_dtypes")) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", nargs="?", type=Path, default=default_dir())
    out = parser.parse_args(argv).dir
    stamp = out / "node.stamp"
    if stamp.exists() and stamp.read_text() == versions() and (out / "node").is_dir():
        print(out)
        return 0
    shutil.rmtree(out / "node", ignore_errors=True)
    stamp.unlink(missing_ok=True)
    # generate_data writes whatever `model_cases.collect_testcases()` returns, each case under
    # `<dir>/<case.kind>/<case.name>`: given the node cases, `<dir>/node/<test>`.
    model_cases.collect_testcases = node_cases.collect_testcases
    cmd_tools.generate_data(argparse.Namespace(output=str(out)))
    count = sum(1 for _ in (out / "node").iterdir())
    stamp.write_text(versions())
    print(f"{count} node tests written", file=sys.stderr)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
