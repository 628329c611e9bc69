"""Writing a task set: jinja2 templates (the user's, where given, else ours), checked, then swapped in whole."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import jinja2
import yaml

from tracegym.errors import ConfigError, TracegymError
from tracegym.inert import one_line
from tracegym.tasks.spec import TaskSpec, load_spec, to_yaml
from tracegym.tasks.taskset import (
    EVALS_COPY,
    MANIFEST,
    REJECTED_DIR,
    REJECTED_RESULTS,
    TASKS_DIR,
    Manifest,
    load_manifest,
)

DEFAULT_TEMPLATES = Path(__file__).parent / "templates"
TEMPLATES = ("task.yaml.j2", "manifest.yaml.j2", "README.md.j2")


class _YamlText(str):
    """The `yaml` filter's lines, which a template places as they are."""


def environment(user_dir: Path | None) -> jinja2.Environment:
    """Templates from `user_dir` where it has them, else the built-in ones."""
    if user_dir is not None and not user_dir.is_dir():
        raise ConfigError(f"--templates {user_dir} is not a folder. Fix: point it at a folder holding any of "
                          f"{', '.join(TEMPLATES)} (copy them from {DEFAULT_TEMPLATES}).")
    folders = [str(user_dir)] if user_dir else []
    env = jinja2.Environment(loader=jinja2.FileSystemLoader([*folders, str(DEFAULT_TEMPLATES)]),
                             undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False,
                             finalize=_on_its_line)
    env.filters.update(yaml=lambda data: _YamlText(to_yaml(data).rstrip("\n")), pick=_pick, oneline=_oneline)
    return env


def _on_its_line(value: Any) -> str:
    """What a template interpolates, other than the `yaml` filter's lines, stays on the line it is put on: ids and
    signatures come from traces, and a line break in a YAML comment would start a key of its own."""
    return value if isinstance(value, _YamlText) else one_line(str(value))


def _pick(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: data[k] for k in keys if k in data}


def _oneline(text: Any, limit: int = 200) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def render(env: jinja2.Environment, name: str, **variables: Any) -> str:
    template = None
    try:
        template = env.get_template(name)
        return template.render(**variables)
    except jinja2.TemplateSyntaxError as e:
        raise ConfigError(f"{e.filename or name}:{e.lineno}: template error: {e.message}. "
                          "Fix: correct the template, or remove it to use the built-in one.") from None
    except jinja2.UndefinedError as e:
        where = template.filename if template is not None else name
        raise ConfigError(f"{where}: {e.message}. Fix: use only the variables the built-in {name} uses.") from None


def write_task_set(out: Path, specs: list[TaskSpec], manifest: Manifest, evals_path: Path,
                   templates: Path | None, force: bool,
                   rejected: Sequence[tuple[TaskSpec, dict[str, Any]]] = ()) -> None:
    """Render every file into a scratch folder beside `out`, check each, then move it into place; the `rejected`
    tasks (with their gate results) go to its rejected/ folder. A set without tasks (every one rejected) is
    replaced without `force`: it holds nothing another run would not write again."""
    if out.exists() and not force and not _without_tasks(out):
        raise ConfigError(f"{out} already exists. Fix: pass --force to replace it, or choose another --out.")
    env = environment(templates)
    out.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.tmp-"))
    try:
        (scratch / TASKS_DIR).mkdir()
        for spec in specs:
            _write_spec(env, scratch / TASKS_DIR / f"{spec.task_id}.yaml", spec)
        data = manifest.model_dump(mode="json")
        text = render(env, "manifest.yaml.j2", manifest=data)
        _check(scratch / MANIFEST, text, load_manifest, manifest)
        (scratch / MANIFEST).write_text(text, encoding="utf-8")
        (scratch / "README.md").write_text(render(env, "README.md.j2", manifest=data), encoding="utf-8")
        copy_evals(evals_path, scratch / EVALS_COPY, out)
        if rejected:
            _write_rejected(env, scratch / REJECTED_DIR, rejected)
        _swap(scratch, out)
    finally:
        if scratch.exists():
            shutil.rmtree(scratch, ignore_errors=True)


def _write_rejected(env: jinja2.Environment, folder: Path,
                    rejected: Sequence[tuple[TaskSpec, dict[str, Any]]]) -> None:
    """Each rejected task's file, and one line of gate results per task (in task order)."""
    (folder / TASKS_DIR).mkdir(parents=True)
    lines = []
    for spec, results in rejected:
        _write_spec(env, folder / TASKS_DIR / f"{spec.task_id}.yaml", spec)
        lines.append(json.dumps({"file": f"{TASKS_DIR}/{spec.task_id}.yaml", "split": spec.split, **results},
                                ensure_ascii=False, default=str) + "\n")
    (folder / REJECTED_RESULTS).write_text("".join(lines), encoding="utf-8")


def _without_tasks(out: Path) -> bool:
    """Whether `out` is a task set that holds no task (a generation whose every task was rejected)."""
    try:
        return out.is_dir() and not load_manifest(out / MANIFEST).tasks
    except TracegymError:
        return False


def copy_evals(source: Path, dest: Path, task_set: Path) -> None:
    """Copy evals.yaml into the task set. Folders in `python_path` and the sources in `files` are relative to the
    file that names them, so relative ones are rewritten to point from the task set to where the source file's
    pointed; a file without any is copied byte for byte (comments and line numbers kept)."""
    data = yaml.safe_load(source.read_text(encoding="utf-8"))  # already validated by the caller
    moved = False
    for entry in data.get("evals") or []:
        folders = entry.get("python_path")
        if isinstance(folders, list) and any(_relative(f) for f in folders):
            entry["python_path"] = [_moved(f, source.parent, task_set) for f in folders]
            moved = True
        files = entry.get("files")
        if isinstance(files, dict) and any(_relative(f) for f in files.values()):
            entry["files"] = {name: _moved(f, source.parent, task_set) for name, f in files.items()}
            moved = True
    if moved:
        dest.write_text(f"# Copied from {source.name}; python_path and files rewritten to stay pointing at the same "
                        "places.\n" + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    else:
        shutil.copyfile(source, dest)


def _relative(path: Any) -> bool:
    return isinstance(path, str) and not Path(path).is_absolute()


def _moved(folder: Any, old_base: Path, new_base: Path) -> Any:
    if not isinstance(folder, str) or Path(folder).is_absolute():
        return folder
    return os.path.relpath((old_base / folder).resolve(), new_base.resolve())


def _write_spec(env: jinja2.Environment, path: Path, spec: TaskSpec) -> None:
    text = render(env, "task.yaml.j2", spec=spec, data=spec.model_dump(mode="json", exclude_none=True))
    _check(path, text, load_spec, spec)
    path.write_text(text, encoding="utf-8")


def _check(path: Path, text: str, load: Any, expected: Any) -> None:
    """A template may rearrange and comment, but what it writes must load back as the same thing."""
    loaded = load(path, text)
    if loaded != expected:
        raise ConfigError(f"{path.name}: the template wrote a file that loads as something else than the task set "
                          "holds. Fix: keep every field the built-in template writes, with its value.")


def _swap(scratch: Path, out: Path) -> None:
    """Replace `out` by `scratch` so that a reader sees the old set or the new one, never a mix."""
    if not out.exists():
        scratch.rename(out)
        return
    old = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}.old-"))
    old.rmdir()
    out.rename(old)
    scratch.rename(out)
    shutil.rmtree(old, ignore_errors=True)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def rewrite_spec(path: Path, spec: TaskSpec) -> None:
    """Write a task file again, with the built-in template, from a spec changed in the store (by `tracegym
    redact`); written beside it, then moved over it."""
    scratch = path.with_name(f".{path.name}.rewriting")
    _write_spec(environment(None), scratch, spec)
    scratch.replace(path)
