"""The run report: labelled PNG charts, one self-contained HTML page that headless Chromium renders without
errors, and TensorBoard event files."""

from __future__ import annotations

import base64
import io
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.integration.train_workspace import Workspace, copy_workspace, tiny_config, write_config

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
PAGE_ERRORS = re.compile(r"Failed to load resource|net::ERR_|Uncaught|CONSOLE|Not allowed to load", re.IGNORECASE)


@pytest.fixture(scope="module")
def evaluated(
    tmp_path_factory: pytest.TempPathFactory, tau_workspace_template: Workspace
) -> tuple[Workspace, Path]:
    """A short run (1 warm-start step, 2 GRPO steps) whose checkpoints were evaluated against the base."""
    from typer.testing import CliRunner

    from tracegym.cli import app

    root = tmp_path_factory.mktemp("report")
    ws = copy_workspace(tau_workspace_template, root)
    config = tiny_config(ws, root / "run", steps=2, checkpoint_every=1, warmup={"steps": 1})
    runner = CliRunner()
    for args in (["train", "--allow-unredacted", str(write_config(root / "run.yaml", config))],
                 ["eval", str(root / "run"), str(root / "run" / "checkpoints" / "step-000002"), "--tasks",
                  str(ws.task_set), "--samples", "2"]):
        result = runner.invoke(app, [*args, "--store", str(ws.store)], catch_exceptions=False)
        assert result.exit_code == 0, result.stderr
    return ws, root / "run"


def _run_data(ws: Workspace, run_dir: Path) -> Any:
    from tracegym.report.rundata import load_run
    from tracegym.store import open_store

    with open_store(ws.store, read_only=True) as st:
        return load_run(st, str(run_dir))


@pytest.mark.slow
def test_charts_have_titles_axes_and_units(evaluated: tuple[Workspace, Path]) -> None:
    from PIL import Image

    from tracegym.report.plots import build_charts, missing_labels, png_bytes

    data = _run_data(*evaluated)
    charts, missing = build_charts(data)
    names = {c.name for c in charts}
    assert names >= {"reward", "eval", "warmup", "mismatch", "importance", "grad_norm", "staleness"}
    assert [line.split(":")[0] for line in missing] == ["Weight-sync bytes vs dense"]
    for chart in charts:
        assert chart.figure.axes, chart.name
        for ax in chart.figure.axes:
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel(), chart.name
            assert re.search(r"\(.+\)$", ax.get_ylabel()) and re.search(r"\(.+\)$", ax.get_xlabel()), chart.name
            assert ax.lines or ax.collections, f"{chart.name}: an axes with nothing drawn"
        assert missing_labels(chart.figure) == []
        image = Image.open(io.BytesIO(png_bytes(chart.figure)))
        assert image.format == "PNG" and image.size[0] >= 600
    eval_points = data.eval_points
    assert [p["step"] for p in eval_points] == [0, 2, 3] and eval_points[0]["label"] == "tiny-model"

    from matplotlib.figure import Figure

    bare = Figure()
    bare.subplots().plot([1, 2], [3, 4])
    assert len(missing_labels(bare)) == 3, "the check notices a chart without title and axis labels"


def _embedded_pngs(html: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r'src="data:image/png;base64,([A-Za-z0-9+/=]+)"', html)]


@pytest.mark.slow
def test_report_is_self_contained_and_renders_in_headless_chromium(evaluated: tuple[Workspace, Path], cli,
                                                                    tmp_path: Path) -> None:
    from PIL import Image

    ws, run_dir = evaluated
    out = tmp_path / "report.html"
    result = cli("report", run_dir, "--out", out, "--store", ws.store)
    assert result.exit_code == 0, result.stderr
    assert str(out.resolve()) in result.stdout
    html = out.read_text()
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", html) and "<script" not in html and "<link" not in html
    images = _embedded_pngs(html)
    assert len(images) >= 7
    for blob in images:
        Image.open(io.BytesIO(blob)).verify()
    assert "Held-out evaluation per failure cluster" in html and "overall" in html and "run/step-000003" in html

    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium (apt-get install -y chromium) to render the page")
    profile = tmp_path / "chromium-profile"
    dom = subprocess.run([str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                          out.resolve().as_uri()], check=False, capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr
    assert not PAGE_ERRORS.search(dom.stderr), dom.stderr
    assert dom.stdout.count("<img") == len(images) and "<table" in dom.stdout

    shot = tmp_path / "report.png"
    rendered = subprocess.run([str(CHROMIUM), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--window-size=1280,2400",
                               f"--screenshot={shot}", out.resolve().as_uri()], check=False, capture_output=True,
                              text=True, timeout=120)
    assert rendered.returncode == 0 and not PAGE_ERRORS.search(rendered.stderr), rendered.stderr
    page = Image.open(shot).convert("RGB")
    assert page.size == (1280, 2400)
    assert len(page.getcolors(maxcolors=1 << 20) or []) > 200, "the screenshot shows text and charts, not a blank page"


@pytest.mark.slow
def test_tensorboard_event_files_hold_the_run_metrics(evaluated: tuple[Workspace, Path], cli) -> None:
    from tracegym.report.tensorboard import tensorboard_available

    if not tensorboard_available():
        pytest.skip("tensorboard is not installed (pip install -e '.[tensorboard]')")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    ws, run_dir = evaluated
    for _ in range(2):  # written twice: the second export replaces the first
        shown = cli("report", run_dir, "--store", ws.store)
        assert shown.exit_code == 0
    # without --out the page goes beside the run, not into the folder the command runs in (a checkout, say)
    assert shown.stdout.strip() == f"Report: {(run_dir / 'report.html').resolve()}" and not Path("report.html").exists()
    logdir = run_dir / "tensorboard"
    assert len(list(logdir.glob("events.out.tfevents.*"))) == 1
    events = EventAccumulator(str(logdir))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"reward/mean", "warmup/loss", "train/grad_norm", "eval/heldout_reward"} <= tags
    assert [e.step for e in events.Scalars("reward/mean")] == [2, 3]
    data = json.loads(cli("runs", "show", run_dir, "--store", ws.store, "--json").stdout)
    eval_steps = sorted(e.step for e in events.Scalars("eval/heldout_reward"))
    assert eval_steps == [0, 2, 3] and data["evaluation"]["tasks"] > 0
