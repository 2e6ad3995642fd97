#!/usr/bin/env python3
"""Lists the Burn backend gaps: the tests that pass on flex but not on another backend, grouped
by the error that backend gives, from the checked-in expectations files
(tests/onnx-backend/*.toml for flex, tests/onnx-backend/<backend>/*.toml for the other).

    scripts/backend_gaps.py [ndarray]

Prints a markdown list (the "Other Burn backends" section of book/src/backends.md is this output).
"""

import re
import sys
import tomllib
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "tests" / "onnx-backend"


def outcomes(path: Path) -> dict:
    return tomllib.loads(path.read_text()) if path.is_file() else {}


def kind(reason: str) -> str:
    """The error without the test-specific details (sizes, ranks, dtypes kept)."""
    reason = re.sub(r"^output \d+: ", "", reason)
    return reason.split(" (")[0][:120]


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else "ndarray"
    lines = []
    for flex_file in sorted(ROOT.glob("*.toml")):
        other_file = ROOT / backend / flex_file.name
        if not other_file.is_file():
            continue
        flex, other = outcomes(flex_file), outcomes(other_file)
        gaps = defaultdict(list)
        extra = []
        for name, outcome in sorted(flex.items()):
            there = other.get(name, {"status": "not run", "reason": ""})
            if outcome["status"] == "pass" and there["status"] != "pass":
                gaps[f'{there["status"]}: {kind(there.get("reason", ""))}'].append(name)
            elif outcome["status"] != "pass" and there["status"] == "pass":
                extra.append(name)
        passing = sum(o["status"] == "pass" for o in other.values())
        flex_passing = sum(o["status"] == "pass" for o in flex.values())
        lines.append(
            f"- `{flex_file.stem}`: {passing} of {len(other)} pass on {backend}, {flex_passing} on flex; "
            f"{sum(map(len, gaps.values()))} pass on flex only, {len(extra)} on {backend} only"
        )
        for reason, names in sorted(gaps.items(), key=lambda g: -len(g[1])):
            shown = ", ".join(names[:4]) + (", ..." if len(names) > 4 else "")
            lines.append(f"  - {len(names)} × `{reason}` ({shown})")
        if extra:
            lines.append(f"  - on {backend} only: {', '.join(extra)}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
