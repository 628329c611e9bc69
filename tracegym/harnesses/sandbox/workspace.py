"""Per-episode workspace folders: made from a template folder and/or a files mapping, removed after.

A workspace is the only place a sandboxed command can write. The sandbox (as
root) hands it to a uid of its own on first use, so it is created here with
the caller's ownership and nothing else to set up.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from tracegym.errors import SandboxError
from tracegym.store.private import create_folders

_EPISODE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


class Workspaces:
    """The workspace folders of one run, each `root/<episode_id>`."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root).resolve()
        create_folders(self.root)  # 0700 where tracegym makes it: what the policy wrote is the run's alone

    def create(
        self,
        episode_id: str,
        template: Path | None = None,
        files: Mapping[str, str | bytes] | None = None,
    ) -> Path:
        """A fresh folder holding a copy of `template` (symlinks kept as links), then `files` written over it."""
        path = self.path(episode_id)
        if path.exists():
            raise SandboxError(f"workspace {path} already exists; remove it or use a new episode id.")
        if template is not None:
            template = Path(template)
            if not template.is_dir():
                raise SandboxError(f"workspace template {template} is not a directory.")
            shutil.copytree(template, path, symlinks=True)
        else:
            path.mkdir()
        for name, content in (files or {}).items():
            target = _inside(path, name)
            target.parent.mkdir(parents=True, exist_ok=True)
            if isinstance(content, bytes):
                target.write_bytes(content)
            else:
                target.write_text(content, encoding="utf-8")
        return path

    def path(self, episode_id: str) -> Path:
        if not _EPISODE_ID.fullmatch(episode_id):
            raise SandboxError(
                f"episode id {episode_id!r} cannot name a workspace folder: use letters, digits, '.', '_' and '-'."
            )
        return self.root / episode_id

    def remove(self, path: Path) -> None:
        """Delete a workspace of this run, whatever modes the command left on its files."""
        path = Path(path).resolve()
        if path.parent != self.root:
            raise SandboxError(f"{path} is not a workspace under {self.root}; refusing to delete it.")
        if not path.exists():
            return
        try:
            shutil.rmtree(path)
        except PermissionError:
            # A command may chmod its own folders read-only; root ignores modes, other users do not.
            _grant_owner_access(path)
            shutil.rmtree(path)

    @contextmanager
    def episode(
        self,
        episode_id: str,
        template: Path | None = None,
        files: Mapping[str, str | bytes] | None = None,
    ) -> Iterator[Path]:
        """`create`, then `remove` when the block ends, even on error."""
        path = self.create(episode_id, template, files)
        try:
            yield path
        finally:
            self.remove(path)


def _inside(workspace: Path, name: str) -> Path:
    """Where a files-mapping key lands; it must stay inside the workspace, symlinks from the template included."""
    rel = PurePosixPath(name)
    target = (workspace / rel).resolve()
    if rel.is_absolute() or not rel.parts or ".." in rel.parts or not target.is_relative_to(workspace):
        raise SandboxError(f"workspace file name {name!r} must be a relative path that stays inside the workspace.")
    return target


def _grant_owner_access(root: Path) -> None:
    """chmod u+rwx every folder under `root`, each before it is listed."""
    os.chmod(root, stat.S_IRWXU)
    for dirpath, dirnames, _ in os.walk(root):
        for name in dirnames:
            child = os.path.join(dirpath, name)
            if not os.path.islink(child):
                os.chmod(child, stat.S_IRWXU)
