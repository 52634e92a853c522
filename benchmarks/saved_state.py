"""What an executed notebook stores as widget state: ``python -m benchmarks.saved_state [NOTEBOOK]``.

Issue #38 item 3 (executed notebook 02 stores at most 30 KB). Every widget model a kernel opened is
kept in the saved notebook's ``application/vnd.jupyter.widget-state+json``, so the size says how
many models the panels made and how heavy each is. The notebook runs top to bottom with nbclient in
a fresh python3 kernel, as tests/notebook_runs.py runs it, with this checkout first on
``PYTHONPATH`` (run the script from another checkout to measure its code). Printed: the stored
bytes as tests/test_browser_offline.py counts them, the models by ``_model_name`` (count, bytes),
and the heaviest state keys, so a size over the target names its cause.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STATE = "application/vnd.jupyter.widget-state+json"
DEFAULT = ROOT / "notebooks" / "02-tool-explorer.ipynb"


def execute(path: Path) -> Any:
    """``path`` executed with nbclient in a fresh kernel that imports this checkout's package."""
    import nbclient
    import nbformat

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=60,
        startup_timeout=60,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()
    return notebook


def breakdown(widgets: dict[str, Any]) -> dict[str, Any]:
    """The stored state's size, its models by name, and its heaviest keys (by model name)."""
    models = widgets.get(STATE, {}).get("state", {})
    count: Counter[str] = Counter()
    size: Counter[str] = Counter()
    keys: Counter[str] = Counter()
    for model in models.values():
        name = str(model.get("model_name"))
        count[name] += 1
        size[name] += len(json.dumps(model))
        for key, value in (model.get("state") or {}).items():
            keys[f"{name}.{key}"] += len(json.dumps(value))
    return {
        "bytes": len(json.dumps(widgets)),
        "models": len(models),
        "by_model": [
            {"model": name, "count": count[name], "bytes": size[name]} for name, _ in size.most_common()
        ],
        "heaviest_keys": [{"key": key, "bytes": n} for key, n in keys.most_common(12)],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.saved_state", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("notebook", type=Path, nargs="?", default=DEFAULT)
    parser.add_argument("--json", type=Path, help="also write the breakdown here")
    args = parser.parse_args(argv)
    notebook = execute(args.notebook.resolve())
    report = breakdown(notebook.metadata.get("widgets", {}))
    print(f"{args.notebook.name}: {report['bytes']:,} bytes of widget state, {report['models']} models")
    print(f"{'model':<32} {'count':>6} {'bytes':>9}")
    for row in report["by_model"]:
        print(f"{row['model']:<32} {row['count']:>6} {row['bytes']:>9,}")
    print("heaviest keys:")
    for row in report["heaviest_keys"]:
        print(f"  {row['key']:<48} {row['bytes']:>9,}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
