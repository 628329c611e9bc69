"""The public traces `tracegym quickstart` runs on, fetched into the user cache where no local copy is given.

Each file is pinned by its origin (a GitHub repository, a commit and a path) and the sha256 of its bytes: τ-bench's
GPT-4o airline runs, and 35 trajectories of mini-swe-agent's SWE-bench Verified run with Gemini 3 Pro beside the
run's `results_summary.json` (the outcome of every instance). They are fetched from raw.githubusercontent.com, or
from the mirror that `TRACEGYM_TRACES_URL` names (serving OWNER/REPO/COMMIT/PATH the same way), into
CACHE/traces/, where CACHE is `TRACEGYM_CACHE`, else `$XDG_CACHE_HOME/tracegym`, else `~/.cache/tracegym`. A file is
written to CACHE/downloads/ first, checked, then moved into place: a file whose bytes differ from the pin is deleted
and reported, so the traces folder only ever holds checked files, and a file already there is not fetched again.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tracegym import __version__
from tracegym.errors import DownloadError
from tracegym.output import progress

MIRROR_ENV = "TRACEGYM_TRACES_URL"
GITHUB_RAW = "https://raw.githubusercontent.com"
TIMEOUT_S = 30
_CHUNK = 1 << 16
_Advance = Callable[[int], None]
"""The progress bar's advance, called with the bytes just written."""


@dataclass(frozen=True)
class PublicFile:
    """One pinned file: where it comes from, where it goes in the cache, and its bytes' sha256 and size."""

    repo: str
    commit: str
    path: str
    local: str
    sha256: str
    size: int

    def url(self, base: str) -> str:
        return f"{base.rstrip('/')}/{self.repo}/{self.commit}/{self.path}"


@dataclass(frozen=True)
class Fetched:
    """The traces folders ready for ingest, and what was downloaded to get them."""

    folders: list[Path]
    downloaded: list[PublicFile]
    base_url: str


TAU_BENCH = ("sierra-research/tau-bench", "59a200c6d575d595120f1cb70fea53cef0632f6b")
MINI_SWE_AGENT = ("gruckion/mini-swe-agent", "d12a71affd95403b036b2bdbd827349b77bfffb9")
MINI_SWE_RUN = "swebench_results/20251118_gemini-3-pro-74pct"
# (instance id, sha256, size) of each trajectory; the repository keeps each under trajs/ID/, the cache flat, as the
# mini-swe-agent adapter reads a run folder (the outcome from results_summary.json one folder up).
_TRAJECTORIES = (
    ("astropy__astropy-12907", "a0e96930b1e0a396e2830931cd9e1c51989cb8ab282d825f83bf2e6bb837c51c", 127035),
    ("astropy__astropy-14369", "abfad368198b2ddad07ef5b671a2218c3ebc794da1da1743d5b1d2e26ac02ebc", 254595),
    ("django__django-10914", "b8950d600a47c174b24599f367a212749143c717ec82ee866981fd683e8222e1", 237050),
    ("django__django-11149", "35891db175c920648c78b72e1bd9752adc056a02cf4252adcd149b276c455da8", 244242),
    ("django__django-11551", "39b5e8edcd99c29cd5805aa7d4bbf21984511969d007bc855e78eeb5bd9d3651", 215307),
    ("django__django-11964", "f806e5475bc7fd8ad773137f530a956cec5e2bf98eead327c146cc37feb29078", 215248),
    ("django__django-12325", "7acf712e3466d6429b5247d73d71650d2b9c4dbdbc10411ec3bec629bca80410", 170896),
    ("django__django-13112", "7bb5f961e7799cf81078e22bd4da6556cfac65e5a9a04b2b88fb5d4a46589584", 355648),
    ("django__django-13449", "b30713e791dbf3441b09dfed1944ae3312ad5192316d753a60eaf4d829cf70a5", 173498),
    ("django__django-13807", "19ad602e56b78a359e26b72cceb35cd12ed4f56c6dc91f5cf82c4c1d6c3f125c", 150074),
    ("django__django-14155", "b39b58bfe5669df7e73e916c675c287070c50b22f932a846a85049a3630dd380", 166972),
    ("django__django-14559", "6875d3d3ee43e172cdb067450ac34c51bffb8c41fc7e55f1a2cb10e48436018d", 101766),
    ("django__django-15098", "45c898bff63a96b5768f5f027eec2206095b1bc72d74fbf6e9a112a66fa542b4", 243893),
    ("django__django-15382", "7f4ad138fe932ce9ccc6bfa69765d0906d8c7d9851f44b2f64a9fa2439f195c1", 256747),
    ("django__django-15732", "2e293c5c9504b6f9153737590558f12648da30bbeb5fd55fb2c4962f37e9ae6f", 189643),
    ("django__django-16139", "7a87724eb63256bc86adac1ad7e727129df678c1b53458ee6f7ea7b8604d6d73", 163839),
    ("django__django-16569", "9c497d3bca7c8375bc168989ccbdb745d40e83dccd731bcb3c157acccec4f4b0", 87043),
    ("django__django-16950", "a90e9f58483341d1c2cb91ae835f4e74cc797f2b586430c110d40015f5332656", 463553),
    ("matplotlib__matplotlib-23314", "1d3391a4cd992b4bd11b44b11398f034c6de3ea76f2d093ba5325f89e96129a5", 83342),
    ("matplotlib__matplotlib-25479", "e85918c95d8c4dec911d8bef248dcba48f680dc43f48f6c0bf094a4acaf8cafd", 174117),
    ("psf__requests-1766", "fc37fb5f37edca7af75e8d9228c05bf3baaf70b1670fb2936fc008fb192693ed", 132939),
    ("pydata__xarray-4094", "591894b96daa2f6315f5684454ad036030650713646da45c2a926925508363a6", 135342),
    ("pydata__xarray-7393", "c6198ab28c27c50741c378558071d32e388d056f1797153e729467a144a463d1", 206200),
    ("pylint-dev__pylint-8898", "7762dff17494e8ff8124c5b4f3d90b40576f43b6f84ed1c44c667d5aa0cf89e7", 265411),
    ("pytest-dev__pytest-7236", "45ebacbdc5e19c6b8751337f3484265813bda9ce943888292a1dd06b2fdb51aa", 207979),
    ("scikit-learn__scikit-learn-13439", "d0e5db594b908447d5dd11ef7ebef9f5c9a7c363109be0d0818fa34eb72ff3bc", 104318),
    ("scikit-learn__scikit-learn-26323", "c8ace11a80d9303b505f30032a2df1b8771513d918dadfade84568b837b4b3e7", 248139),
    ("sphinx-doc__sphinx-7590", "c6a7ddc1ba36e7ff9c462e210a5d7d50660fac78030a3a7b8bae0d419cadef7e", 190928),
    ("sphinx-doc__sphinx-8593", "e937a76c812d305d5a82964a0a6e2e17b9a9c04ae72869f1a3e54bd5746dca50", 347250),
    ("sphinx-doc__sphinx-9461", "fe10aea1d44709e4b807ad9b8166872c4c5902198aafa4f6fea9cc3d3ebf61f5", 306493),
    ("sympy__sympy-13551", "8762e5928d74a6aea4185b4836a6cb8621cb1d3dbdb412c3f7b499f7fb9a2fae", 165261),
    ("sympy__sympy-15345", "1b9d58db9f71bad71cfbff4375abab0a908636b07a6cc551dbef45b548e59e35", 152938),
    ("sympy__sympy-17655", "2f5782c4a03b3ca850781d94084f3bfd1bb895ebaaa269a2c1aa5f2e8b4a34c9", 216203),
    ("sympy__sympy-20438", "8434d3ae79995b0789c921c3e487470e48e981cf2e723c64260e34c52987c311", 206657),
    ("sympy__sympy-22914", "d39a3377f781d6286e3e8d578c842d886efbea6718dd6337de5cae6c96df4bec", 126720),
)
QUICKSTART_FILES: tuple[PublicFile, ...] = (
    PublicFile(*TAU_BENCH, "historical_trajectories/gpt-4o-airline.json", "tau-bench/gpt-4o-airline.json",
               "e9e6c0297660c537f83d4fd9c476ce7a9a86ecd2784874b7bfc13be598e37bfa", 4114038),
    PublicFile(*MINI_SWE_AGENT, f"{MINI_SWE_RUN}/results_summary.json", "mini-swe-agent/results_summary.json",
               "ce83836284eefc4b98eaf1206a4e659e39c954e2c34b16dde2959374e36300ec", 55957),
    *(PublicFile(*MINI_SWE_AGENT, f"{MINI_SWE_RUN}/trajs/{i}/{i}.traj.json", f"mini-swe-agent/trajs/{i}.traj.json",
                 sha, size) for i, sha, size in _TRAJECTORIES),
)


def cache_root() -> Path:
    """`TRACEGYM_CACHE`, else `$XDG_CACHE_HOME/tracegym`, else `~/.cache/tracegym`."""
    if env := os.environ.get("TRACEGYM_CACHE"):
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "tracegym"


def fetch(files: Sequence[PublicFile] = QUICKSTART_FILES, root: Path | None = None) -> Fetched:
    """Every file of `files` checked in place under ROOT/traces (default: `cache_root()`), downloading those not
    there yet; a DownloadError names the URL, why, and what to do instead."""
    root = root or cache_root()
    traces, parts = root / "traces", root / "downloads"
    base = os.environ.get(MIRROR_ENV) or GITHUB_RAW
    missing = [f for f in files if not _is_intact(traces / f.local, f)]
    if missing:
        parts.mkdir(parents=True, exist_ok=True)
        with progress(f"fetching {len(missing)} trace files", sum(f.size for f in missing), in_bytes=True) as bar:
            for file in missing:
                _download(file, base, traces / file.local, parts, bar.advance)
    folders = sorted({traces / Path(f.local).parts[0] for f in files})
    return Fetched(folders, missing, base)


def _is_intact(path: Path, file: PublicFile) -> bool:
    return path.is_file() and path.stat().st_size == file.size and _sha256(path) == file.sha256


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _download(file: PublicFile, base: str, target: Path, parts: Path, advance: _Advance) -> None:
    """`file` from `base` into `target`, through a partial file in `parts` that is deleted unless it checks out."""
    url = file.url(base)
    part = parts / f"{Path(file.local).name}.{uuid.uuid4().hex[:8]}.part"
    try:
        digest = _stream(url, part, file.size, advance)
        if digest != file.sha256:
            raise DownloadError(
                f"{url} did not hold the pinned bytes (sha256 {digest}, expected {file.sha256}); the partial file "
                f"was deleted. Fix: check that {MIRROR_ENV} names a faithful mirror, or pass --traces DIR.")
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(part, target)
    finally:
        part.unlink(missing_ok=True)


def _stream(url: str, part: Path, size: int, advance: _Advance) -> str:
    """Write what `url` answers into `part` (at most `size` + 1 bytes: more cannot match); its sha256."""
    digest, written = hashlib.sha256(), 0
    request = urllib.request.Request(url, headers={"User-Agent": f"tracegym/{__version__}"})
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response, part.open("wb") as out:
            while written <= size and (chunk := response.read(min(_CHUNK, size + 1 - written))):
                out.write(chunk)
                digest.update(chunk)
                written += len(chunk)
                advance(len(chunk))
    except (urllib.error.URLError, http.client.HTTPException, ConnectionError, TimeoutError, ValueError) as e:
        reason = f"HTTP {e.code}" if isinstance(e, urllib.error.HTTPError) else getattr(e, "reason", None) or e
        raise DownloadError(
            f"Could not fetch {url} ({reason}). The quickstart downloads public traces on first use. Offline, or "
            f"behind a firewall? Set {MIRROR_ENV} to a mirror serving OWNER/REPO/COMMIT/PATH as "
            f"{GITHUB_RAW} does, or run on your own traces: tracegym quickstart --traces DIR.") from None
    return digest.hexdigest()
