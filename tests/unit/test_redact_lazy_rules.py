"""Rules compile only where a text triggers them, and a trigger holds wherever its rule can match: values that
structure ties to a label (a key, a cookie export's name, a Secret's data) are read by the rules their
`label: value` or their text triggers, not by every rule."""

import json
import subprocess
import sys

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def test_a_table_cell_compiles_only_the_rules_its_text_triggers() -> None:
    # A fresh interpreter: other tests compile rules in this one. The cell is read as `password: "…"` apart.
    program = (
        "import json\n"
        "from tracegym.redact.detect import Detector\n"
        "d = Detector()\n"
        "found = [f.value for f in d.find('| user | password |\\n|---|---|\\n| mhale | Tq7#vLw2pX |')]\n"
        "print(json.dumps({'found': found, 'compiled': [r.name for r in d.rules if 'regex' in vars(r)],\n"
        "                  'rules': len(d.rules)}))\n"
    )
    out = json.loads(subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                                    check=True).stdout)
    assert out["found"] == ["Tq7#vLw2pX"]
    assert "password" in out["compiled"]
    assert not {"kerberos_key", "fuel_card", "ntlm_hash", "kubernetes_secret"} & set(out["compiled"])
    assert len(out["compiled"]) < out["rules"] // 3


def test_a_short_national_id_name_as_a_key_triggers_its_rule() -> None:
    # Belgium's national number under a key named by its short name, in a document object and inline.
    assert _values('{"document": {"type": "be_nrn", "number": "85.07.14-123.30"}, "country": "BE"}') \
        == ["85.07.14-123.30"]
    assert _values("holder nrn: 92.11.03-048.28 on file") == ["92.11.03-048.28"]


def test_a_plural_key_name_in_capitals_triggers_the_secret_rules() -> None:
    text = 'BILLING_CREDENTIALS="Vx8kQ2mZr7LpW4tN9sYc3bHd"'
    assert _values(text) == ["Vx8kQ2mZr7LpW4tN9sYc3bHd"]


def test_a_session_cookie_printed_as_name_and_value_lines_is_found() -> None:
    text = "cookie dump\nhost_key = .learnhub.example\n name = sessionid\nvalue = k3vq9z0w7ytr2mxa8pl5n4bd6ch1jfus"
    assert _values(text) == ["k3vq9z0w7ytr2mxa8pl5n4bd6ch1jfus"]


def test_a_kubernetes_secret_value_is_found_under_its_data_key() -> None:
    text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: lms-db\ndata:\n  DB_PASS: Z3JlZW4tbGFudGVybi0yMDI2\n"
    assert "Z3JlZW4tbGFudGVybi0yMDI2" in _values(text)


def test_a_run_id_is_no_chilean_run() -> None:
    assert _values("tool_call_rejected run_id=40917325-bd0e-4c1a-9f3e-5a1c7d2e8b60 attempt=2") == []
