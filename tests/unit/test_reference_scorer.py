"""The `reference` eval's parts: reading bash blocks, entities and acts, comparing calls; and its failures, recorded
as scorer errors rather than raised."""

from __future__ import annotations

from pathlib import Path

from tracegym.evals.scorers import ScorerContext, build_scorer
from tracegym.evals.scorers.bash_actions import read_action
from tracegym.evals.scorers.call_match import compare_calls
from tracegym.evals.scorers.config import ReferenceEval
from tracegym.evals.scorers.entities import entities, found_in
from tracegym.evals.scorers.prose import speech_act
from tracegym.evals.scorers.trajectory import CallView, Reference, ReferenceCall, Trajectory


def test_a_bash_block_is_read_as_programs_and_paths():
    text = ("THOUGHT: look first.\n```bash\ncd /testbed && sed -n '1,50p' src/app.py | head -n 30\n"
            "cat <<'EOF' > check.py\nimport os\nprint(open('not/a/target.py'))\nEOF\n"
            "FOO=1 python -m pytest tests/test_app.py::test_one -q && git diff\n```")
    action = read_action(text)
    assert action.programs == ("sed", "head", "cat", "python -m pytest", "git diff")
    assert action.paths == {"src/app.py", "check.py", "tests/test_app.py"}  # cd's folder and heredoc text left out
    edit = read_action("```bash\nsed -i 's/a/b/' ./src/app.py\n```")
    assert edit.programs == ("sed -i",) and edit.paths == {"src/app.py"}
    assert read_action("```bash\ngrep -n 'a/b' src/app.py\n```").paths == {"src/app.py"}  # the pattern is no path
    assert read_action("no block here").empty and read_action("```bash\necho src/app.py\n```").paths == set()


def test_entities_compare_by_meaning_not_spelling():
    said = entities("Flight HAT290 on May 20 costs $1,250.00; see /testbed/src/app.py or mail mia.li@example.com")
    shown = entities("flight hat290, 2024-05-20, total 1250, file src/app.py, MIA.LI@example.com")
    for kind in ("id", "date", "amount", "path"):
        picked = [e for e in said if e[0] == kind]
        assert picked and all(found_in(e, shown) for e in picked), kind
    assert not {e for e in entities("the 1st of 3 bags, a 24-hour window, 2 seats") if e[0] in ("id", "amount")}


def test_the_act_of_a_reply():
    assert speech_act("Would you like me to transfer you to a human agent?") == "hand_off"
    assert speech_act("The flight is full. Would you like another flight instead?") == "offer"
    assert speech_act("Could you please provide the reservation id?") == "ask"
    assert speech_act("I'm sorry, I can't help with that.") == "refuse"
    assert speech_act("I apologize for the inconvenience.") == "apologise_only"
    assert speech_act("Your reservation ABC123 is confirmed for May 20.") == "inform"


def test_calls_score_by_tool_then_by_weighted_arguments():
    want = [ReferenceCall("update", {"order_id": "W123", "amount": 250, "note": "refund the damaged item now"},
                          {"amount": 0.25})]
    assert compare_calls([CallView("update", {"order_id": "w123 ", "amount": 250.0,
                                              "note": "refund the damaged item now"})], want).score == 1.0
    wrong_id = compare_calls([CallView("update", {"order_id": "W999", "amount": 250,
                                                  "note": "refund the damaged item now"})], want).score
    wrong_amount = compare_calls([CallView("update", {"order_id": "W123", "amount": 99,
                                                      "note": "refund the damaged item now"})], want).score
    assert 0.5 < wrong_id < wrong_amount < 1.0  # an agreed argument costs more than one attempts disagreed on
    assert compare_calls([CallView("lookup", {"order_id": "W123"})], want).score == 0.0
    assert compare_calls([], want).score == 0.0
    two = compare_calls([CallView("update", want[0].arguments), CallView("update", want[0].arguments)], want)
    assert two.score == 0.5  # an extra call costs as a missing one does


def _scorer():
    spec = ReferenceEval(name="follows_success", kind="reference")
    return build_scorer(spec, ScorerContext(evals_dir=Path("."), store=None))


def _episode(reply: dict, references: list[Reference], prompt: str = "My order W123 arrived broken.") -> Trajectory:
    messages = [{"role": "user", "content": prompt}, {"role": "assistant", **reply}]
    return Trajectory(messages, reply.get("content"), task_id="t-1", prompt_messages=1, references=references)


def test_made_up_ids_cost_and_a_task_without_references_is_an_error():
    ref = Reference("recorded_turn", "I have refunded order W123.")
    scorer = _scorer()
    assert scorer.score(_episode({"content": "I have refunded order W123."}, [ref])).reward == 1.0
    invented = scorer.score(_episode({"content": "I have refunded order W123 and order W777."}, [ref]))
    assert invented.details["invented"] == ["id:w777"] and invented.reward == 0.5
    missing = scorer.score(_episode({"content": "Refunded."}, []))
    assert missing.reward is None and "reference_steps are empty" in str(missing.error)
    recorded = scorer.score(Trajectory([{"role": "assistant", "content": "hi"}], "hi", trace_id="x"))
    assert recorded.reward is None and "--store" in str(recorded.error)


def test_references_survive_the_trajectory_dump():
    ref = Reference("sibling_turn", "ok", (ReferenceCall("think", {"thought": "x"}, {"thought": 0.5}),), "t-9")
    traj = _episode({"content": "ok"}, [ref])
    assert Trajectory.from_dict(traj.to_dict()).references == [ref]
