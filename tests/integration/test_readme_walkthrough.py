"""The README's commands, in order, as a newcomer types them: the set-up's quickstart first, then the walk-through,
each under a pseudo-terminal, in a fresh folder laid out as a checkout beside `../shared`, on the default store.

The tiny model stands in for the default one (the quickstart's `--model`, the walk-through config's `model.ref`) and
training is cut to a step or two, so that the whole walk takes a few minutes; everything else runs as written. Each
command must exit 0 and leave the files it promises.
"""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml

from tests.conftest import terminal_session
from tracegym.models.tiny import smollm2_tokenizer, tiny_llama

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def bash_block(text: str, after: str) -> str:
    """The first ```bash block after the line `after`."""
    rest = text[text.index(after):]
    return re.search(r"```bash\n(.*?)\n```", rest, re.S)[1]


def commands(block: str) -> list[list[str]]:
    """Each command of a shell block as words: continuation lines joined, comments dropped."""
    return [words for line in block.replace("\\\n", " ").splitlines() if (words := shlex.split(line, comments=True))]


def test_the_setup_runs_the_quickstart_and_the_test_command_is_what_ci_runs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install, tests = commands(bash_block(readme, "# tracegym"))
    assert install[-1] == "quickstart" and install[-2] == "tracegym"
    assert (ROOT / ".ci" / "run").read_text(encoding="utf-8").rstrip().endswith(shlex.join(tests))


@pytest.fixture
def checkout(tmp_path: Path, traces_dir: Path) -> Path:
    """A folder laid out as the README assumes (examples/ here, the traces at ../shared/data/traces), with
    examples/train-learn.yaml on the tiny model for two GRPO steps; and the tiny model's folder."""
    here = tmp_path / "tracegym"
    shutil.copytree(ROOT / "examples", here / "examples")
    (tmp_path / "shared" / "data").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "traces").symlink_to(traces_dir)
    tokenizer = smollm2_tokenizer()
    model = tiny_llama(len(tokenizer), seed=1, eos_token_id=tokenizer.eos_token_id, max_positions=8192)
    model.save_pretrained(tmp_path / "tiny-model")
    tokenizer.save_pretrained(tmp_path / "tiny-model")
    config_path = here / "examples" / "train-learn.yaml"
    config = yaml.safe_load(config_path.read_text(encoding="utf-8"))
    config.update(steps=2, checkpoint_every=2, model={"ref": str(tmp_path / "tiny-model")})
    config["grpo"] = {"group_size": 4, "batch_groups": 2}
    config["sampler"]["max_new_tokens"] = 16
    config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
    return here


def _run(here: Path, words: list[str]) -> str:
    assert words[0] == "tracegym", f"the README walks tracegym commands only: {shlex.join(words)}"
    code, shown = terminal_session(*words[1:], cwd=here, timeout=600)
    text = ANSI.sub("", shown)
    assert code == 0, f"{shlex.join(words)} exited {code}:\n{text}"
    assert "Traceback" not in text, text
    return text


def _promised(here: Path, words: list[str], shown: str) -> None:
    """The files the command says it writes."""
    command = words[1]
    if command == "ingest":
        assert (here / ".tracegym" / "store.duckdb").is_file()
    elif command == "tasks":
        assert (here / words[words.index("--out") + 1] / "manifest.yaml").is_file()
    elif command == "train":
        run_dir = here / yaml.safe_load((here / words[2]).read_text(encoding="utf-8"))["run_dir"]
        assert list((run_dir / "checkpoints").glob("step-*")), shown
    elif command == "report":
        report = Path(shown.strip().splitlines()[-1].removeprefix("Report: "))
        assert report == (here / words[2] / "report.html").resolve() and report.is_file()


@pytest.mark.slow
def test_the_readme_walks_from_the_quickstart_to_the_report(checkout: Path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    install, _ = commands(bash_block(readme, "# tracegym"))
    shown = _run(checkout, [*install[-2:], "--model", str(checkout.parent / "tiny-model"), "--steps", "1",
                            "--samples", "1"])
    report = Path(shown.strip().splitlines()[-1].removeprefix("Report: "))
    assert report == (checkout / ".tracegym" / "quickstart" / "report.html").resolve() and report.is_file()
    # The hollow probes' report, and the explicit go-ahead to train on the hackable evals anyway.
    said = " ".join(shown.split())
    # It trains on each form check combined with follows_success: the form checks alone are hackable parts, and
    # the combined reward is hackable on the few tasks where a swapped number sits inside a script.
    assert "Hollow probes: the reward of" in said and "one_bash_action (a part) on" in said
    assert "handles_tool_error (a part) on" in said and "noop_content" in said
    assert "one_bash_action_and_content (the reward) on" in said
    assert "trains on these hackable evals anyway" in said and "Training on a hackable reward" in said
    assert (checkout / ".tracegym" / "quickstart" / "store.duckdb").is_file()

    walk = commands(bash_block(readme, "## Walk-through"))
    assert [w[1] for w in walk] == ["ingest", "mine", "failures", "evals", "tasks", "train", "eval", "report"]
    for words in walk:
        _promised(checkout, words, _run(checkout, words))
    assert not (checkout / "report.html").exists()
