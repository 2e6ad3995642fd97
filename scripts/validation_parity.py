#!/usr/bin/env python3
"""Validation parity with ONNX Runtime: of the models the importer accepts, which does ONNX
Runtime refuse at load? Feed it mutants that import, written by the malformed test:

    mkdir -p /tmp/imported && MALFORMED_MUTANTS=24 MALFORMED_DUMP_IMPORTED=/tmp/imported \\
        cargo test -p onnx-codegen --test malformed mutants_of_valid_models_never_panic
    "${BURN_ONNX_CACHE:-$HOME/.cache/burn-onnx}/venv/bin/python" scripts/validation_parity.py /tmp/imported

Prints how many ONNX Runtime loads and, for the ones it refuses, its reasons grouped (the
first words of each message), with one file per group to turn into a corpus case of
scripts/make_malformed_models.py. Refusals for want of a kernel or an op (ONNX Runtime has no
CPU kernel for Add-1 or Gemm-6, nor the preview ops) are counted apart: the model is valid.
A measurement, not a test: run it after changing validation.
"""

import re
import sys
from collections import defaultdict
from pathlib import Path

import onnxruntime as ort


def reason(message):
    """ONNX Runtime's message without paths, numbers and names: what kind of refusal it is."""
    message = message.split("failed:", 1)[-1]
    message = re.sub(r"/\S+ \S+::\S+", "", message)  # ORT's source location and function
    message = re.sub(r"\(.*?\)|'.*?'|\d+", "_", message)
    return " ".join(message.split())[:110]


def main():
    folder = Path(sys.argv[1])
    ort.set_default_logger_severity(4)
    files = sorted(folder.glob("*.onnx"))
    refused, missing = defaultdict(list), 0
    for file in files:
        try:
            ort.InferenceSession(str(file), providers=["CPUExecutionProvider"])
        except Exception as e:  # noqa: BLE001 - every load failure counts
            if "NOT_IMPLEMENTED" in str(e) or "is not a registered function/op" in str(e):
                missing += 1
            else:
                refused[reason(str(e))].append(file.name)
    total = sum(len(v) for v in refused.values())
    print(f"{len(files)} models the importer accepts; ONNX Runtime refuses {total} of them as invalid at load "
          f"(and {missing} for want of a kernel or an op)")
    for why, names in sorted(refused.items(), key=lambda kv: -len(kv[1])):
        print(f"{len(names):5}  {why}  (e.g. {names[0]})")


if __name__ == "__main__":
    main()
