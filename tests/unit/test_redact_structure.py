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
    "x-request-id: req_81f410fb7115b7bf9311d102db868786",       # OpenAI's request ids: hex behind req_
    '"mlflow.traceRequestId": "tr-6f73df4d8b8d617c305cea11e5e76d07"',  # MLflow's trace ids
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


PW = "Vb7#qT2!mZ9x"
KEY = "Hk4Rw9Tz2Lq7Np3Vx8Mc1Bd6Fs0Gy5Ja"


@pytest.mark.parametrize("text", [
    f'{{"env": [{{"name": "SMTP_PASSWORD", "value": "{PW}"}}]}}',                        # Kubernetes env list
    f'{{"headers": [{{"name": "X-Service-Secret", "value": "{KEY}"}}]}}',                # HAR header
    f'{{"variable": [{{"key": "signing_secret", "value": "{KEY}", "type": "string"}}]}}', # Postman variable
    f'{{"Outputs": [{{"OutputKey": "AdminPassword", "OutputValue": "{PW}", "Description": "x"}}]}}',  # CFN
    f'{{"Parameters": [{{"ParameterKey": "ApiKey", "ParameterValue": "{KEY}"}}]}}',
    f'{{"outputs": {{"db_pass": {{"value": "{PW}", "type": "string"}}}}}}',           # Terraform: the key above
    f'{{"outputs": {{"conn": {{"value": "{PW}", "type": "string", "sensitive": true}}}}}}',  # marked sensitive
    f'[{{"type": "text", "text": "Password: "}}, {{"type": "text", "text": "{PW}", "style": {{"code": true}}}}]',
    f'{{"doc": "{{\\"name\\": \\"DB_PASSWORD\\", \\"value\\": \\"{PW}\\"}}"}}',           # JSON inside JSON text
])
def test_values_labelled_by_a_sibling_json_field_are_found(text: str) -> None:
    values = [v for _, v in _rules(text)]
    assert any(PW in v or KEY in v for v in values), (text, values)


@pytest.mark.parametrize("text", [
    '{"env": [{"name": "color", "value": "Xq7Lm2Vb9Tz4Rk8Wp3"}]}',      # a sibling label that is not secret
    '{"variable": [{"key": "baseUrl", "value": "https://api.example.test/v2"}]}',
    '{"outputs": {"region": {"value": "eu-west-1", "type": "string"}}}',
    '[{"type": "text", "text": "Status: "}, {"type": "text", "text": "Qx7Lm2Vb9Tz4Rk8Wp3"}]',
    '[{"type": "text", "text": "Password: "}, {"type": "text", "text": "see the vault"}]',
])
def test_sibling_json_near_misses_stay(text: str) -> None:
    assert _rules(text) == []


def test_sql_insert_values_take_their_column_as_label() -> None:
    text = ("INSERT INTO `accounts` (`id`, `full_name`, `db_password`, `contact_phone`, `order_id`) VALUES "
            f"(17,'Ana O\\'Neil','{PW}','0171 555 0199','40417262'),(18,'Bo',NULL,NULL,'52930417');")
    values = [v for _, v in _rules(text)]
    assert PW in values and "0171 555 0199" in values
    assert not any(v in ("40417262", "52930417", "17", "18") for v in values)


def test_sql_near_misses_stay() -> None:
    assert _rules("INSERT INTO orders (order_id, sku, amount) VALUES (40417262, 'AB-77812', 19.99);") == []


@pytest.mark.parametrize("text", [
    f"Password:\n    {PW}\nThanks",                                           # the value indented below its label
    f"Invoice of May            API key:\nterms and conditions      {KEY}\nplease see",  # two columns (PDF)
    f"Account notes             Password -\\nfor the portal            {PW}\\nend",     # JSON-escaped lines
])
def test_values_below_their_label_are_found(text: str) -> None:
    values = [v for _, v in _rules(text)]
    assert any(PW in v or KEY in v for v in values), (text, values)


@pytest.mark.parametrize("text", [
    "Order id:\n    40417262\n",                                     # a label that names no secret
    "Invoice of May            Order number:\nterms and conditions      Xq7Lm2Vb9Tz4Rk8Wp3\n",
    "Password:\n    see the vault\n",                                 # prose under a password label
    "left column text          Password:\nsecond line                \nthird",  # nothing below it
])
def test_previous_line_near_misses_stay(text: str) -> None:
    assert _rules(text) == []


@pytest.mark.parametrize("text", ["write to mara.ostrow&#64;example.org today", "mara.ostrow&#x40;example.org",
                                  "<a href='mailto:mara.ostrow&#X40;example.org'>mail</a>"])
def test_html_character_references_in_emails_are_normalised(text: str) -> None:
    found = DETECTOR.find(text)
    assert [(f.rule.name, f.key) for f in found] == [("email", "mara.ostrow@example.org")]


@pytest.mark.parametrize(("text", "secret"), [
    ("<tr><td>Password</td><td>Kv8#mw&amp;Tz2!q</td></tr>", "Kv8#mw&amp;Tz2!q"),      # a page's table: `&` escaped
    ("<pre>DB_PASSWORD=Lr4&lt;9xQ&gt;wZ7</pre>", "Lr4&lt;9xQ&gt;wZ7"),
    ("SSN 536\u202f22\u202f8719 on file", "536\u202f22\u202f8719"),                  # narrow no-break spaces
    ("tél. 06\u202f71\u202f82\u202f93\u202f04", "06\u202f71\u202f82\u202f93\u202f04"),
    ("write to mara.ostrow\ufe6bexample.org", "mara.ostrow\ufe6bexample.org")])       # a small commercial at
def test_named_references_narrow_spaces_and_small_forms_are_normalised(text: str, secret: str) -> None:
    found = DETECTOR.find(text)
    at = text.index(secret)
    assert any(f.start <= at and at + len(secret) <= f.end for f in found), (text, _rules(text))


@pytest.mark.parametrize(("text", "secret"), [
    ("write to tomas.vrba&commat;seznam&period;cz", "tomas.vrba&commat;seznam&period;cz"),  # HTML5's named ones
    ("<td>DB_PASSWORD</td><td>Hq7&excl;vR2&num;mW9</td>", "Hq7&excl;vR2&num;mW9"),
    ("Tél&nbsp;: 06&nbsp;48&nbsp;27&nbsp;15&nbsp;90", "06&nbsp;48&nbsp;27&nbsp;15&nbsp;90"),
    ("GET /unsubscribe?next=%2Fok%3Fu%3Dnoor.haddad%2540outlook.com", "noor.haddad%2540outlook.com"),  # twice encoded
    ("b'owner=ines.moreau\\x40laposte.net'", "ines.moreau\\x40laposte.net"),  # a bytes repr's escape
    ('{"log": "contact: ren\\\\xc3\\\\xa9.dubois\\\\x40orange.fr"}', "ren\\\\xc3\\\\xa9.dubois\\\\x40orange.fr")])
def test_named_references_double_encoding_and_byte_escapes_are_read(text: str, secret: str) -> None:
    found = DETECTOR.find(text)
    at = text.index(secret)
    assert any(f.start <= at and at + len(secret) <= f.end for f in found), (text, _rules(text))


@pytest.mark.parametrize("text", [
    "\\x1b[31mERROR\\x1b[0m retry 3 of 5",  # a terminal colour's escapes
    "pattern = re.compile(r'[\\x20-\\x7e]+')",
    "progress 100%25 done, see &lt;docs&gt; &amp; &nbsp; notes",
    "raw bytes b'\\xff\\xfe\\x00\\x41' in the header"])
def test_escapes_that_hide_no_value_find_nothing(text: str) -> None:
    assert DETECTOR.find(text) == [], _rules(text)


@pytest.mark.parametrize("unit", ["wg-quick@wg0.service", "serial-getty@ttyS0.service", "backup@daily.timer",
                                  "sshd@3-10.0.0.2:22.socket", "container@web.target", "ceph-osd@12.mount"])
def test_systemd_unit_instance_names_are_not_emails(unit: str) -> None:
    assert _rules(f"Started {unit} after restart") == []
    assert _rules("contact ops@acme-example.com")  # an address beside them still is one
