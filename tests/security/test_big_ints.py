"""Integers beyond 64 bits from trace metadata keep their digits past ingest: in stored rollouts (scorer details,
messages) and in `--json` output, where orjson alone raises on them."""

from __future__ import annotations

import json

import torch

from tracegym.episodes.record import Episode, TokenRecord, TurnRecord
from tracegym.episodes.rollout_table import read_rollouts, write_rollouts
from tracegym.output import print_json
from tracegym.store import open_store

BIG = 2**70 + 1


def _episode() -> Episode:
    tokens = TokenRecord(torch.tensor([5, 6]), torch.tensor([False, True]), torch.tensor([float("nan"), -0.5]), None)
    message = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "lookup", "arguments": json.dumps({"id": BIG})}}]}
    return Episode(rollout_id="r1", task_id="t1", task_set_id="ts", split="heldout", harness="chat", sample_idx=0,
                   seed=0, model="m", sampling={}, messages=[message], n_prompt_messages=0, tokens=tokens,
                   turns=[TurnRecord("stop", "s", 0, 0, 0.1, start=1, end=2)], stop_reason="model_done",
                   reward=1.0, scorer_details={"expected": BIG, "seen": [-BIG]})


def test_rollouts_keep_integers_beyond_64_bits(tmp_path):
    with open_store(tmp_path / "store.duckdb") as st:
        write_rollouts(st, [_episode()], "run")
        [back] = read_rollouts(st, run_id="run")
    assert back.scorer_details == {"expected": BIG, "seen": [-BIG]}
    assert json.loads(back.messages[0]["tool_calls"][0]["function"]["arguments"]) == {"id": BIG}


def test_json_output_writes_them_digit_for_digit(capsys):
    print_json({"value": BIG, "rows": [{"n": -BIG}]})
    assert json.loads(capsys.readouterr().out) == {"value": BIG, "rows": [{"n": -BIG}]}
