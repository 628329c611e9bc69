"""Values as LLM gateways, proxies and HTTP clients log request bodies (issue 40, the twenty-fifth corpus's causes):
multipart form fields, GraphQL variables, a Stripe person's id number, webhook URLs of any service, recovery codes
and setup keys in prose and forms, PKCE verifiers, a long token in a query string. Values written for these tests;
the near misses beside each form must stay."""

from __future__ import annotations

import base64
import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def test_a_multipart_fields_value_is_read_under_its_name() -> None:
    body = ("--XyZ\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nfine-tune\r\n--XyZ\r\n"
            "Content-Disposition: form-data; name=\"password\"\r\n\r\nMapleOrbit4471*\r\n--XyZ--")
    assert _values(body) == ["MapleOrbit4471*"]
    escaped = json.dumps({"log": body.replace("password", "api_key").replace("MapleOrbit4471*",
                                                                              "Qz7Rm2Xw9Lk4Tb8Vn1Hs6Jd3Pc0Fg5Ya")})
    assert "Qz7Rm2Xw9Lk4Tb8Vn1Hs6Jd3Pc0Fg5Ya" in _values(escaped)


def test_a_graphql_variable_takes_its_arguments_name() -> None:
    text = json.dumps({"query": "mutation SignIn($w: String!, $s: String!) { signIn(email: $w, password: $s) "
                                "{ jwt } }",
                       "variables": {"w": "dana", "s": "plum-copper-heron-lantern31"}})
    assert _values(text) == ["plum-copper-heron-lantern31"]
    assert _values(json.dumps({"log": text})) == ["plum-copper-heron-lantern31"]
    harmless = json.dumps({"query": "query Q($n: Int) { items(first: $n) { id } }", "variables": {"n": "50"}})
    assert _values(harmless) == []


@pytest.mark.parametrize("text", [
    "individual[first_name]=Ana&individual[id_number]=219099999&individual[address][country]=US",
    "representative%5Bid_number%5D=219099999&tos_acceptance%5Bdate%5D=1",
])
def test_a_stripe_persons_id_number(text: str) -> None:
    assert _values(text) == ["219099999"]
    assert _values("individual[id_number_provided]=true") == []


def test_any_incoming_webhooks_secret_path() -> None:
    token = "Ng4Kq8Zt2Wm6Yp0Rc5Lv9Hx3Bj7Fs1Da" * 3
    assert _values(f"POST https://webexapis.com/v1/webhooks/incoming/{token} -> 404") == [token]
    assert _values("https://hooks.acme.dev/webhooks/3fa94c1e7b2d4856a0c9e1f7b3d5a2c8 200") == [
        "3fa94c1e7b2d4856a0c9e1f7b3d5a2c8"]
    for text in ("POST /webhooks/stripe_checkout_session_completed_v2 200",
                 "https://n8n.acme.io/webhook/8f14e45f-ceea-467f-a9f0-1c3b3088a7e2",  # a workflow's id
                 "GET /api/hooks/deliveries/1234567890123456789012345 200"):
        assert _values(text) == [], text


@pytest.mark.parametrize(("text", "code"), [
    ("The user pasted their 2FA backup code QW7E-RT2Y-UI9O into the chat", "QW7E-RT2Y-UI9O"),
    ('{"login": "kim", "backup_code": "ZXCV-BNMQ-WERT"}', "ZXCV-BNMQ-WERT"),  # a code that drew no digit
    ("recovery_code=7152+0936&commit=Verify", "7152+0936"),                    # a form's `+` is a space
])
def test_recovery_codes_in_prose_and_forms(text: str, code: str) -> None:
    assert _values(text) == [code]


@pytest.mark.parametrize("text", ["backup codes were regenerated on 2024-11-05", "your backup code is ready",
                                  "Use a recovery code instead", "backup code NOT-SET-YET"])
def test_words_after_a_recovery_label_stay(text: str) -> None:
    assert _values(text) == []


def test_a_setup_key_of_four_groups_with_one_digit() -> None:
    assert _values("Can't scan? Enter this setup key: kq4w mzno pxrt vuyh, then the code") == ["kq4w mzno pxrt vuyh"]


def test_pkce_verifier_is_secret_and_challenge_public() -> None:
    verifier = "_k3Jd9Fh2Lw7Qp4Zt8Xm1Vb6Nc0Rs5Ya-Ge3Hu2Io9"
    challenge = base64.urlsafe_b64encode(bytes(range(7, 39))).decode().rstrip("=")
    assert _values(f"DEBUG auth: PKCE code_verifier={verifier} code_challenge={challenge} method=S256") == [
        verifier]
    assert _values("GET /authorize?response_type=code&state=Kp2Lx9Qm4Rt7Wz1Vb8Nc3Hd6Js0Fg5Ya2") == []


def test_a_token_longer_than_512_in_a_query_string_is_taken_whole() -> None:
    claims = base64.urlsafe_b64encode(json.dumps({"sub": "u" * 300, "iat": 1}).encode()).decode().rstrip("=")
    jwt = f"eyJhbGciOiJSUzI1NiJ9.{claims}.{'Ab3Cd5Ef7Gh9' * 30}"
    assert _values(f"GET wss://gw.internal/v1/realtime?model=m&token={jwt}&x=1") == [jwt]


def test_a_selectors_pseudo_class_is_no_password() -> None:
    assert _values('#login > input[name="password"]:nth-child(2)') == []
    assert _values('input[name="password"]:focus') == []
