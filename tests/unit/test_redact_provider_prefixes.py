"""Provider tokens by a documented prefix or structure (the `provider_token` rule, GitLab's routable suffix): each
found whole with no label beside it, and placeholders, documentation examples and ordinary words after a prefix
left alone. Values written for these tests from each provider's format."""

from __future__ import annotations

import base64
import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
# Random-looking runs to cut values from: letters of both cases and digits, lower case and digits, hex, capitals.
R62 = ("Hq7Zt2Kx9Pw4Lm1Vb8Nc3Rd6Gs0Jf5TyUe3Wa8Qo1Xi6Mz4Ck7Fh2Bn9Dj5Ev0Sl3Yg8Rp1Tu6Ka4Wm9Ob2Nx7Hc5Zd0Lf3Qi8Je1Vs6Gy4Pt9"
       "Am2Uk7Cw5Rz0Bh3Xn8Dq1Fo6Ev4Ij9Ml2Ts7Yp5Ga0Kc3Wd8Nb1Qu6Hx4Lr9Zf2Oe7Jv5Si0Pm3Ak8Gt1Dw6Cy4Rn9Ub2Xh7Fq5Tl0Mz3Eo8")
LOW = "k3v9q1m7x2p8w4z6r0t5y3n8b1c7d4f9g2h6j0l5s1a8e3u7i2o9k4v6q0m1x8p3w7z5r2t9y4n6b0c3d8f1g7h5j2l9s4a6e0u3i8o1k7v2q"
HEX = "3fa9c27e81d45b06f2e9a7c3d1b84e60a5f92c7e3b18d46f0e2a9c75b3d1e8f46a0c29e7b5d3f18a4c6e20b9f7d5a3c1e8b64f2a0d9c7e5"
UP = "K7Q2X9M4P1W8Z6R3T5Y0N8B2C7D4F9G1H6J3L5S0A8E2U7V4Q9M1X6P3W0Z8R5T2Y7N4B9C1D6F3G8H0J5L2S7"


def _b64(doc: dict) -> str:
    return base64.b64encode(json.dumps(doc, separators=(",", ":")).encode()).decode().rstrip("=")


GRAFANA_KEY = _b64({"k": R62[:32], "n": "deploy", "id": 7})
REFERENCE = base64.b64encode(f"reftkn:01:1893456000:{R62[40:67]}".encode()).decode()
ONEPASSWORD = "ops_" + _b64({"signInAddress": "my.1password.com", "email": "kq3v9x1m7p@1passwordserviceaccounts.com",
                             "srpX": HEX[:64], "muk": {"k": R62[:43], "kid": "mp"}, "secretKey": "A3-K7Q2X9-M4P1W8-"
                             "Z6R3T-5Y0N8-B2C7D-4F9G1", "throttleSecret": {"seed": HEX[10:74]}, "deviceUuid": LOW[:26]})
FLY = "fm2_" + R62[:150] + "+" + R62[60:110].replace("K", "/") + "=="
TWITTER = "A" * 21 + "MLheAAAAAAAA0" + "%2B" + R62[:20] + "%2B" + R62[30:60] + "%3D" + R62[70:120]
YANDEX_IAM = "t1.9euelZq" + R62[:90].replace("Q", "-") + "." + R62[5:91].replace("W", "_")
AUTHRESS = (f"sc_{LOW[:22]}.{LOW[30:34]}.acc_{LOW[40:55]}."
            + base64.b64encode(bytes.fromhex("302e020100300506032b657004220420" + HEX[:64])).decode())

VALUES = [
    ONEPASSWORD,
    GRAFANA_KEY,
    REFERENCE,
    "CLOJARS_" + LOW[:60],
    "EZAK" + LOW[10:64],
    "EZTK" + R62[5:59],
    "FLWSECK-" + HEX[:32] + "-X",
    "FLWSECK_TEST-" + HEX[40:72] + "-X",
    "FLWSECK_TEST" + HEX[3:15],
    "fo1_" + R62[:40] + "_-k",
    FLY,
    "pat." + R62[:22] + "." + R62[30:54] + "." + R62[60:80],
    "sat." + R62[7:29] + "." + R62[33:57] + "." + R62[1:21],
    "api_org_" + "mpNnnUUslYHXcbprtRFhqbHbaVsXeWStSt",
    "s-s4t2ud-" + HEX[:64],
    "s-s4t2af-" + HEX[20:84],
    "API-" + UP[:26],
    "sha256~" + R62[:41] + "-_",
    "pnu_" + R62[12:48],
    "rdme_" + LOW[:70],
    "sm_pat_" + R62[:16],
    "sm_aat_" + R62[40:56],
    "sm_sat_" + R62[80:96],
    TWITTER,
    YANDEX_IAM,
    "xkeysib-" + HEX[:64] + "-" + R62[:16],
    "xsmtpsib-" + HEX[30:94] + "-" + R62[20:36],
    "dnkey-" + UP[:26] + "-" + UP[30:82],
    "LTAI" + R62[3:23],
    "LTAI" + R62[50:66],
    AUTHRESS,
]


@pytest.mark.parametrize("value", VALUES, ids=[v[:12] for v in VALUES])
@pytest.mark.parametrize("form", ["{}", "2025-06-11T04:12:09Z INFO replayed with {} in 12 ms",
                                  '{{"value": "{}"}}', "export TOKEN_VALUE={}\n"])
def test_found_whole_with_no_label(value: str, form: str) -> None:
    text = form.format(value)
    found = [(f.rule.name, f.value) for f in DETECTOR.find(text)]
    assert ("provider_token", value) in found, found


@pytest.mark.parametrize("value", [
    "glpat-" + R62[:36] + ".01" + LOW[:7],
    "glrt-t1_" + R62[:30] + ".01" + LOW[10:17],
])
def test_gitlab_routable_suffix_goes_with_it(value: str) -> None:
    text = f"2025-06-11 INFO cloned with {value}, ok"
    assert [f.value for f in DETECTOR.find(text)] == [value]


@pytest.mark.parametrize("text", [
    "pnu_" + "X" * 36,
    "sm_pat_0000000000000000",
    "API-ABCDEFGHIJKLMNOPQRSTUVWXYZ",
    "see API-V2GATEWAYCONFIGURATION1 in the docs",
    "sha256~" + "x" * 43,
    "CLOJARS_" + "0" * 60,
    "FLWSECK_TEST-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX-X",
    "FLWSECK-" + "0" * 32 + "-X",
    "rdme_" + "a" * 70,
    "xkeysib-" + "0" * 64 + "-" + "X" * 16,
    "the pnu_ prefix marks Prefect keys; sha256~ marks OpenShift's, EZAK EasyPost's",
    "api_org_ThisIsOurSharedOrganizationNameX",
    "release t1.2 shipped; pat.rollout is done",
    "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==",
    "LTAIxxxxxxxxxxxxxxxxxxxx",
])
def test_placeholders_and_words_are_no_token(text: str) -> None:
    assert [f for f in DETECTOR.find(text) if f.rule.name == "provider_token"] == []
