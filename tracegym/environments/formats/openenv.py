"""OpenEnv: an environment server and its client, laid out as `openenv init` lays out an environment.

    DIR/openenv.yaml                the environment's spec (runtime fastapi, app server.app:app, port 8000)
    DIR/pyproject.toml              the package NAME, needing openenv-core and tracegym VERSION
    DIR/__init__.py, client.py      NAME.TracegymEnv, an `EnvClient` (WebSocket sessions)
    DIR/models.py                   TracegymAction (a reply: content, tool_calls), TracegymObservation (new messages,
                                    tools, task and cluster ids, reward when done, the scorer's details)
    DIR/server/app.py               the FastAPI app (`uvicorn server.app:app`, or `python -m server.app --port N`)
    DIR/server/Dockerfile           the image for real deployments (`openenv build`, or `docker build -f server/...`)
    DIR/tracegym_data/              the tasks, evals and harness config (`tracegym.environments.bundle`)

The server's environment is `tracegym.environments.openenv_server.TracegymEnvironment`: `reset(task_id=...)` starts
an episode in the task's own harness, each `step` is one model reply, and the last observation carries the task's
tracegym scorer's reward. Proxy tasks (the team's agent program does the task) cannot be stepped by a client: the
export refuses them (`tracegym.environments.runtime`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tracegym.environments import openenv_types
from tracegym.environments.registry import ExportJob
from tracegym.errors import ExportError

FORMAT = "openenv"
SUMMARY = "an OpenEnv environment server and client (uvicorn server.app:app; NAME.TracegymEnv(base_url=...))"
DATA = "tracegym_data"
OPENENV = "0.2.1"
"""The openenv-core release the environment is written for and tested with (the `trainers` extra's pin)."""

SPEC = """spec_version: 1
name: {name}
type: space
runtime: fastapi
app: server.app:app
port: 8000
"""

PYPROJECT = """[project]
name = "openenv-{dist}"
description = "tracegym task set {task_set} as an OpenEnv environment (rewards: tracegym's scorers)"
version = "0.1.0"
requires-python = ">=3.11"
dependencies = ["openenv-core[core]=={openenv}", "tracegym=={version}"]

[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project.scripts]
server = "{name}.server.app:main"

[tool.setuptools]
packages = ["{name}", "{name}.server"]
package-dir = {{ "{name}" = ".", "{name}.server" = "server" }}

[tool.setuptools.package-data]
{name} = ["{data}/*", "{data}/**/*", "openenv.yaml"]
"""

INIT = '''"""tracegym task set {task_set} as an OpenEnv environment: its client and typed action and observation."""

from .client import TracegymEnv
from .models import TracegymAction, TracegymObservation

__all__ = ["TracegymAction", "TracegymEnv", "TracegymObservation"]
'''

CLIENT = '''"""The client of tracegym task set {task_set} as an OpenEnv environment (by `tracegym tasks export`).

    with TracegymEnv(base_url="http://127.0.0.1:8000") as env:
        result = env.reset(task_id="...")          # the task's prompt and tools
        result = env.step(TracegymAction(content="...", tool_calls=[...]))
        result.done, result.reward                 # the task's tracegym scorer, once the episode is over
"""

from typing import Any

from openenv.core import EnvClient
from openenv.core.client_types import StepResult
from openenv.core.env_server.types import State

try:
    from .models import TracegymAction, TracegymObservation
except ImportError:  # loaded as a top-level module (beside models.py), as the server's folder layout allows
    from models import TracegymAction, TracegymObservation  # type: ignore[no-redef]


class TracegymEnv(EnvClient[TracegymAction, TracegymObservation, State]):
    """One session of the environment: reset(task_id=...) then step(TracegymAction) until done."""

    def _step_payload(self, action: TracegymAction) -> dict[str, Any]:
        return action.model_dump(exclude={{"metadata"}})

    def _parse_result(self, payload: dict[str, Any]) -> StepResult[TracegymObservation]:
        observation = TracegymObservation(**payload.get("observation", {{}}), done=payload.get("done", False),
                                          reward=payload.get("reward"))
        return StepResult(observation=observation, reward=payload.get("reward"), done=payload.get("done", False))

    def _parse_state(self, payload: dict[str, Any]) -> State:
        return State(**payload)
'''

APP = '''"""The OpenEnv server of tracegym task set {task_set} (written by `tracegym tasks export`; tracegym {version}).

    uvicorn server.app:app --host 127.0.0.1 --port 8000      (from this folder)
    python -m server.app --port 8000
"""

from pathlib import Path

from tracegym.environments.openenv_server import make_app

DATA = Path(__file__).resolve().parent.parent / "{data}"
app = make_app(DATA)


def main(host: str = "0.0.0.0", port: int = 8000) -> None:
    import uvicorn

    uvicorn.run(app, host=host, port=port)


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="0.0.0.0")
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    main(args.host, args.port)
'''

DOCKERFILE = """# tracegym task set {task_set} as an OpenEnv environment server (written by `tracegym tasks export`).
# Build from the export's folder: docker build -t {name}:latest -f server/Dockerfile .
FROM python:3.11-slim
WORKDIR /app/env
RUN apt-get update && apt-get install -y --no-install-recommends curl bubblewrap && rm -rf /var/lib/apt/lists/*
COPY server/requirements.txt /tmp/requirements.txt
RUN pip install --no-cache-dir -r /tmp/requirements.txt
COPY . /app/env
ENV PYTHONPATH=/app/env
HEALTHCHECK --interval=30s --timeout=3s --start-period=20s CMD curl -f http://localhost:8000/health || exit 1
CMD ["uvicorn", "server.app:app", "--host", "0.0.0.0", "--port", "8000"]
"""

REQUIREMENTS = """openenv-core[core]=={openenv}
tracegym=={version}
"""

README = """# {name}: tracegym task set `{task_set}` as an OpenEnv environment

{rows} tasks ({split} split) exported by `tracegym tasks export --to openenv`. Each episode runs in the task's own
tracegym harness, and its reward is the task's tracegym scorer (tracegym {version} must be installed where the
server runs).

Start the server (from this folder) and run an episode:

```bash
pip install "openenv-core[core]=={openenv}" "tracegym=={version}"
uvicorn server.app:app --host 127.0.0.1 --port 8000
```

```python
from {name} import TracegymAction, TracegymEnv

with TracegymEnv(base_url="http://127.0.0.1:8000") as env:
    result = env.reset(task_id="{first_task}")
    result = env.step(TracegymAction(content="..."))
    print(result.done, result.reward, result.observation.scorer_details)
```

In a container: `docker build -t {name}:latest -f server/Dockerfile .`, then
`TracegymEnv.from_docker_image("{name}:latest")`. Task ids and cluster ids are on every observation: keep them with
your results, and `tracegym rollouts import` reads them back.
"""


def export(job: ExportJob, out: Path) -> dict[str, str]:
    proxy = [r.task_id for r in job.rows if r.harness == "proxy"]
    if proxy:
        raise ExportError(f"{len(proxy)} tasks ({', '.join(proxy[:3])}) run in the proxy harness: the team's own "
                          "agent program does them, which an OpenEnv client cannot step. Fix: export with a harness "
                          "config that runs them in another harness (run_as: {proxy: chat}), or --to harbor.")
    name = re.sub(r"\W+", "_", f"tracegym_{job.task_set.manifest.name}_openenv").lower()
    manifest = job.write_data(out / DATA)
    values = {"name": name, "dist": name.replace("_", "-"), "task_set": manifest.task_set, "split": job.split,
              "rows": str(len(job.rows)), "version": manifest.tracegym_version, "openenv": OPENENV, "data": DATA,
              "first_task": job.rows[0].task_id if job.rows else "TASK_ID"}
    (out / "server").mkdir()
    shutil.copyfile(Path(openenv_types.__file__), out / "models.py")
    files = {"openenv.yaml": SPEC, "pyproject.toml": PYPROJECT, "__init__.py": INIT, "client.py": CLIENT,
             "README.md": README, "server/__init__.py": "", "server/app.py": APP, "server/Dockerfile": DOCKERFILE,
             "server/requirements.txt": REQUIREMENTS}
    for path, text in files.items():
        (out / path).write_text(text.format(**values), encoding="utf-8")
    return {"name": name, "serve": "uvicorn server.app:app --host 127.0.0.1 --port 8000 (from the folder)",
            "client": f"from {name} import TracegymEnv, TracegymAction"}
