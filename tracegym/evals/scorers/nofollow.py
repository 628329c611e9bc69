"""Trusted files into, and reports out of, a folder the policy wrote, never following a link it planted there.

Paths are walked one component at a time from an open folder descriptor with
O_NOFOLLOW, so a symlink anywhere on the way (`tests -> /etc`, a report that
points at a host file) cannot carry a write, a delete or a read out of the folder.
Writes replace what was in the way: links and files where a folder belongs
become fresh folders, and whatever stood at the destination is removed first.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
from pathlib import Path, PurePosixPath

_FOLDER = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_NOT_A_FOLDER = (errno.ELOOP, errno.ENOTDIR)


def inside_parts(rel: str) -> list[str]:
    """The components of a path that must stay inside its folder; ValueError for an absolute one or one with '..'."""
    path = PurePosixPath(rel)
    if path.is_absolute() or not path.parts or ".." in path.parts:
        raise ValueError(f"{rel!r} must be a relative path that stays inside the workspace (no '..')")
    return list(path.parts)


def replace_with_copy(root: Path, rel: str, source: Path) -> None:
    """Put a fresh copy of `source` (a file or a folder) at `root/rel`, removing whatever was there."""
    *folders, name = inside_parts(rel)
    fd = _open_folders(root, folders)
    try:
        _remove(fd, name)
        _copy(fd, name, source)
    finally:
        os.close(fd)


def replace_with_bytes(root: Path, rel: str, data: bytes) -> None:
    """Write `data` as a fresh file at `root/rel` (readable by every uid), removing whatever was there."""
    *folders, name = inside_parts(rel)
    fd = _open_folders(root, folders)
    try:
        _remove(fd, name)
        _write(fd, name, data, 0o644)
    finally:
        os.close(fd)


def remove(root: Path, rel: str) -> None:
    """Remove whatever is at `root/rel`; the folders on the way become real folders if they were not."""
    *folders, name = inside_parts(rel)
    fd = _open_folders(root, folders)
    try:
        _remove(fd, name)
    finally:
        os.close(fd)


def read_regular_file(root: Path, rel: str) -> bytes:
    """The bytes of the regular file at `root/rel`; FileNotFoundError when absent, ValueError for a link, a folder
    or a pipe anywhere on the way."""
    *folders, name = inside_parts(rel)
    fd = os.open(root, _FOLDER)
    try:
        for part in folders:
            child = _existing_folder(fd, part, rel)
            os.close(fd)
            fd = child
        try:
            # O_NONBLOCK: a planted FIFO must not hang the scorer on open.
            handle = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=fd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise ValueError(f"{rel} is a symlink; only a regular file inside the workspace is read") from None
            raise
        with open(handle, "rb") as file:
            if not stat.S_ISREG(os.fstat(handle).st_mode):
                raise ValueError(f"{rel} is not a regular file")
            return file.read()
    finally:
        os.close(fd)


def _existing_folder(fd: int, part: str, rel: str) -> int:
    try:
        return os.open(part, _FOLDER, dir_fd=fd)
    except OSError as e:
        if e.errno in _NOT_A_FOLDER:
            raise ValueError(f"{rel}: {part!r} on the way is a symlink or a file, not a folder") from None
        raise


def _open_folders(root: Path, parts: list[str]) -> int:
    """A descriptor of `root/parts...`, each one made a real folder: created if missing, replacing a link or file."""
    fd = os.open(root, _FOLDER)
    try:
        for part in parts:
            child = _open_or_make_folder(fd, part)
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_or_make_folder(fd: int, name: str) -> int:
    try:
        return os.open(name, _FOLDER, dir_fd=fd)
    except FileNotFoundError:
        pass
    except OSError as e:
        if e.errno not in _NOT_A_FOLDER:
            raise
        _remove(fd, name)
    os.mkdir(name, 0o755, dir_fd=fd)
    child = os.open(name, _FOLDER, dir_fd=fd)
    os.fchmod(child, 0o755)  # whatever the umask: the sandbox's uid must read what is put here
    return child


def _remove(fd: int, name: str) -> None:
    try:
        info = os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(name, dir_fd=fd)
    else:
        os.unlink(name, dir_fd=fd)


def _copy(fd: int, name: str, source: Path) -> None:
    if not source.is_dir():
        _write(fd, name, source.read_bytes(), 0o755 if os.access(source, os.X_OK) else 0o644)
        return
    os.mkdir(name, 0o755, dir_fd=fd)
    folder = os.open(name, _FOLDER, dir_fd=fd)
    try:
        os.fchmod(folder, 0o755)
        for child in sorted(source.iterdir()):
            _copy(folder, child.name, child)
    finally:
        os.close(folder)


def _write(fd: int, name: str, data: bytes, mode: int) -> None:
    handle = os.open(name, _NEW_FILE, mode, dir_fd=fd)
    with open(handle, "wb") as file:
        os.fchmod(handle, mode)
        file.write(data)
