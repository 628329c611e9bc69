"""Training reward per failure cluster in the views of a run: series, rolling means, the table, the chart, the page."""

from __future__ import annotations

import io

import pytest

from tracegym.report.cluster_chart import cluster_series, cluster_table, rolling_mean, short_signature
from tracegym.report.html import render_report
from tracegym.report.plots import build_charts, cluster_chart, missing_labels, png_bytes
from tracegym.report.rundata import RunData

A, B = "9ad607e04a", "d0d6ed6684"


def _metrics(curriculum: bool) -> dict[str, dict[int, float | None]]:
    """Cluster A sampled at steps 3-8 (rewards rising), B at 3, 5 and 7 only; warm-start steps 1-2 before."""
    metrics: dict[str, dict[int, float | None]] = {
        "reward/mean": {s: 0.5 for s in range(3, 9)}, "warmup/loss": {1: 2.0, 2: 1.5},
        f"cluster/{A}/reward": {3: 0.0, 4: 0.25, 5: 0.25, 6: 0.5, 7: 0.75, 8: 1.0},
        f"cluster/{A}/episodes": {3: 8, 4: 4, 5: 4, 6: 8, 7: 4, 8: 4},
        f"cluster/{B}/reward": {3: 0.5, 5: None, 7: 1.0},
        f"cluster/{B}/episodes": {3: 4, 5: 4, 7: 4},
    }
    if curriculum:
        metrics[f"curriculum/{A}/weight"] = {s: 0.5 + 0.05 * (s - 3) for s in range(3, 9)}
        metrics[f"curriculum/{B}/weight"] = {s: 0.5 - 0.05 * (s - 3) for s in range(3, 9)}
        metrics["curriculum/c0ffee0000/weight"] = {s: 0.0 for s in range(3, 9)}  # drawn from, never sampled
    return metrics


def _data(metrics: dict[str, dict[int, float | None]], signature: str = "Error: gift card balance is not enough",
          ) -> RunData:
    run = {"run_id": "r-1", "status": "completed", "base_model": "tiny", "task_set_id": "tau", "run_dir": "/runs/r",
           "started_at": "2025-01-01 00:00:00", "updated_at": "2025-01-01 00:10:00", "config": {"warmup": {"steps": 2}}}
    clusters = {A: {"detector": "tool_error", "signature": "Error: payment amount does not add up, total price is <n>",
                    "formats": ["tau-bench"], "rank": 2},
                B: {"detector": "tool_error", "signature": signature, "formats": ["tau-bench"], "rank": 4}}
    return RunData(run, metrics, [], clusters=clusters)


def test_series_keep_the_steps_a_cluster_was_scored_in() -> None:
    series = {s.cluster: s for s in cluster_series(_metrics(curriculum=True))}
    assert series[A].steps == [3, 4, 5, 6, 7, 8] and series[B].steps == [3, 7]  # step 5's NULL reward: unscored
    assert series["c0ffee0000"].steps == [] and len(series["c0ffee0000"].weights) == 6
    # Episode-weighted over the last 5 sampled steps: step 8 covers steps 4-8.
    rolled = rolling_mean(series[A])
    assert rolled[0] == 0.0 and rolled[-1] == pytest.approx((1 + 1 + 4 + 3 + 4) / 24)


def test_the_table_compares_the_first_and_last_steps_each_cluster_was_sampled() -> None:
    rows = cluster_table(_data(_metrics(curriculum=True)), steps=2)
    assert [r["cluster_id"] for r in rows] == [A, B], "by rank; a cluster never sampled has no row"
    a, b = rows
    assert (a["steps"], a["episodes"], a["window"]) == (6, 32, 2)
    assert a["reward_first"] == pytest.approx(1 / 12) and a["reward_last"] == pytest.approx(0.875)
    assert a["change"] == pytest.approx(0.875 - 1 / 12) and a["draw_weight"] == pytest.approx(0.75)
    assert (b["window"], b["reward_first"], b["reward_last"], b["formats"]) == (1, 0.5, 1.0, "tau-bench")
    assert cluster_table(_data(_metrics(curriculum=False)))[0]["draw_weight"] is None


@pytest.mark.parametrize("curriculum", [False, True], ids=["uniform", "curriculum"])
def test_the_chart_draws_a_line_per_cluster_and_the_curriculum_beside_it(curriculum: bool) -> None:
    from PIL import Image

    # Signatures are trace text: '$' (matplotlib's math mode) and control characters must draw as text.
    fig = cluster_chart(_data(_metrics(curriculum), signature="Error: paid $^_$ in full\x1b[31m"))
    assert fig is not None and len(fig.axes) == (2 if curriculum else 1)
    assert missing_labels(fig) == []
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[0].startswith("Error: payment amount does not add up") and labels[-1].startswith("Error: paid")
    # A cluster the curriculum drew from but never sampled still has its colour in the legend.
    assert labels[1:-1] == (["c0ffee0000"] if curriculum else [])
    assert Image.open(io.BytesIO(png_bytes(fig))).format == "PNG"
    assert short_signature("x", {"signature": "y" * 100}, 10) == "y" * 9 + "…"


def test_a_run_without_cluster_metrics_still_renders() -> None:
    old = {k: v for k, v in _metrics(curriculum=False).items() if not k.startswith("cluster/")}
    data = _data(old)
    assert cluster_chart(data) is None and cluster_table(data) == []
    charts, missing = build_charts(data)
    assert "clusters" not in {c.name for c in charts}
    assert "Training reward per failure cluster: not recorded by this run (needs cluster/*/reward)" in missing
    html = render_report(data)
    assert "This run stored no training reward per failure cluster" in html


def test_the_page_shows_the_cluster_chart_beside_its_table() -> None:
    html = render_report(_data(_metrics(curriculum=True)))
    section = html[html.index("<h2>Training reward per failure cluster</h2>"):html.index("<h2>Charts</h2>")]
    assert 'alt="Training reward per failure cluster"' in section and section.count("<tr>") == 3
    assert f"<code>{A}</code>" in section and "Error: gift card balance is not enough" in section
    assert "draw chance (last step)" in section and "+0.562" in section  # 11/16 - 2/16: 3 steps a side
    assert html.count('alt="Training reward per failure cluster"') == 1, "not again among the other charts"


def test_steps_that_trained_nothing_are_counted_on_the_page_and_marked_on_the_reward_chart() -> None:
    """GRPO steps without an optimizer step (every group's rewards equal) showed as ordinary steps."""
    from tracegym.report.plots import reward_chart

    metrics = _metrics(curriculum=False)
    metrics["train/optimizer_steps"] = {1: 1.0, 2: 1.0, 3: 1.0, 4: 0.0, 5: 0.0, 6: 1.0, 7: 0.0, 8: 1.0}
    data = _data(metrics)
    assert data.grpo_steps() == ([3, 4, 5, 6, 7, 8], [4, 5, 7])  # warm-start steps 1-2 are not GRPO steps
    html = render_report(data)
    assert "<dt>trained nothing</dt><dd>3 of 6 GRPO steps: every group&#39;s rewards were equal" in html
    [ax] = reward_chart(data).axes
    marks = [line for line in ax.get_lines() if line.get_label().startswith("trained nothing")]
    assert len(marks) == 1 and list(marks[0].get_xdata()) == [4, 5, 7]

    metrics["train/optimizer_steps"] = {s: 1.0 for s in range(1, 9)}
    assert "trained nothing" not in render_report(_data(metrics))


def test_trace_text_on_the_page_is_escaped_never_a_tag() -> None:
    """Cluster ids, signatures, detectors and hack warnings come from traces; the page autoescapes them all."""
    from html.parser import HTMLParser

    hostile = "<img src=x onerror=alert(1)><details open><script>alert(2)</script>"
    metrics = {**_metrics(False), f"cluster/{hostile}/reward": {3: 0.5}, f"cluster/{hostile}/episodes": {3: 4}}
    data = _data(metrics, signature=hostile)
    data.clusters[hostile] = {"detector": hostile, "signature": hostile, "formats": [hostile], "rank": 1}
    data.run["task_set_id"] = data.run["base_model"] = hostile
    data.hack_warnings = [{"step": 8, "cluster_id": hostile, "first_step": 3, "split_step": 6, "reward_before": 0.1,
                           "reward_after": 0.9, "hollow_before": 0.0, "hollow_after": 0.8, "p_value": 0.01,
                           "detector": hostile, "example_rollout_id": hostile}]

    page = render_report(data)

    class Tags(HTMLParser):
        found: list[tuple[str, list]] = []

        def handle_starttag(self, tag: str, attrs: list) -> None:
            self.found.append((tag, attrs))

    tags = Tags()
    tags.feed(page)
    names = [tag for tag, _ in tags.found]
    assert "script" not in names and names.count("details") == 1  # the page's own: its config
    assert not [attrs for _, attrs in tags.found if any(name.startswith("on") for name, _ in attrs)]
    assert page.count("&lt;img src=x onerror=alert(1)&gt;&lt;details open&gt;") >= 5  # shown, escaped, everywhere
