"""Redaction that generalises (issue 40, a fifth corpus): tokens of issuers no rule names, found by their shape
(a short prefix, then a long random body), and values whose label stands away from them (a sibling JSON field,
a column header, the line before). Values and structures written for these tests; the near misses beside each
mechanism must stay."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
B62_40 = "Qm7Zt2Rk9Wx4Lp1Vn6Hc3Jd8Gs5Fb0Ye2Ua7To4X"
HEX32 = "5d0e8a3f71c94b26e8d07f1a4c9b3e62"


def _rules(text: str) -> list[tuple[str, str]]:
    return [(f.rule.name, f.value) for f in DETECTOR.find(text)]


@pytest.mark.parametrize("token", [
    f"acme_{B62_40}",                      # an issuer no rule names, base62 body
    f"zt_live_{B62_40}",                   # prefix of two words
    f"qwx_v2_{HEX32}{HEX32}",              # versioned prefix, hex body
    f"tok-{HEX32}",                        # dash, hex
    f"ab.cd.{B62_40}",                     # dotted prefix (Doppler-like)
    f"ZAPK-{HEX32[:24]}-{B62_40[:34]}",    # upper-case prefix, body in two parts (Postman-like)
    f"pkg-Ag{B62_40}_x-{B62_40}",          # base64url body with _ and - inside (a macaroon)
])
@pytest.mark.parametrize("frame", ["{}", "token is {} thanks", "`{}`", '"value": "{}"', "::add-mask::{}",
                                   "key={}&page=2", "{}."])
def test_prefixed_tokens_of_unknown_issuers_are_found_anywhere(token: str, frame: str) -> None:
    found = _rules(frame.format(token))
    assert found, frame.format(token)
    assert found[0][1] == token


@pytest.mark.parametrize("text", [
    "integrity sha512-z4PhNX7vuL3xVChQ1m2AB9Yg5AULVxXcg/SpIdNs6c5H0NE8XYXysP+DGNKHfuwvY7kxvUR0ZSp0J6rGGa3hBQ==",
    f"sri sha256-{HEX32}{HEX32}",           # a digest's name glued to digits
    f"git-{HEX32}abcd1234",                 # a revision behind git-
    f"commit_{HEX32}",
    "request req_8f14e45f-ceea-467f-a9f0-1c3b3088a7e2 failed",  # a UUID behind an object's name
    "charge pi_3MtwBwLkdIwHu7ix28a3tqPa and cus_NffrFeUfNV2Hib",  # ids shorter than 32
    "test_refund_is_rejected_when_the_order_was_cancelled_2",   # words joined by _
    "my-service-deployment-production-eu-west-1-canary-42",       # words joined by -
    "self.someVeryLongCamelCaseIdentifierName2x",                 # an identifier
    f"release-{HEX32[:8]}",                                       # a short build id
    f"files: ['flash_{HEX32}.zip']",                              # a file name
    f"data:image/png;base64,iVBORw0KGgo/ab_{B62_40}+AAAA",        # inside a base64 blob
    "acme_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1",            # no randomness
])
def test_prefixed_token_near_misses_stay(text: str) -> None:
    assert [r for r in _rules(text) if r[0] == "api_token"] == []


def test_known_providers_keep_their_own_kind() -> None:
    assert _rules("ghp_" + B62_40[:36])[0][0] == "github_token"
