"""A process that reads the store in a loop while another writes it: `traces list` and `sql`, each through the
real command line (in this process), until told to stop.

    python store_readers.py STORE READY GO STOP OUT

It first holds the store read-only and touches READY, so the writer started next must wait for it; once GO
exists it lets go and loops, one more round after STOP exists; OUT gets every answer as JSON.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tracegym.cli import app
from tracegym.store import open_store


def read_once(store: str) -> list[dict[str, Any]]:
    runner = CliRunner()
    listed = runner.invoke(app, ["traces", "list", "--limit", "3", "--json", "--store", store])
    counted = runner.invoke(app, ["sql", "--json", "SELECT count(*) AS n FROM traces", "--store", store])
    n = json.loads(counted.stdout)[0]["n"] if counted.exit_code == 0 else None
    return [{"command": "traces list", "exit": listed.exit_code, "stderr": listed.stderr},
            {"command": "sql", "exit": counted.exit_code, "stderr": counted.stderr, "n": n}]


def main(store: str, ready: Path, go: Path, stop: Path, out: Path) -> None:
    with open_store(store, read_only=True):
        ready.touch()
        while not go.exists():
            time.sleep(0.01)
    answers: list[dict[str, Any]] = []
    while True:
        last = stop.exists()
        answers.extend(read_once(store))
        if last:
            break
    out.write_text(json.dumps(answers))


if __name__ == "__main__":
    main(sys.argv[1], *map(Path, sys.argv[2:]))
