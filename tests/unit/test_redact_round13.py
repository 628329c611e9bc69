"""Redaction's misses by cause (the round on the twelfth corpus's other misses): issuers' documented token formats
(Salesforce, Docker Hub, HubSpot, Plaid, Asana, Adyen's last part), values whose name stands on another line or in
another field (YAML `- name:`/`value:` items, a `Key  Value` table, Terraform state's `id`), "call me" and column
headers in Czech, Greek, Hebrew and Thai, and what is not a phone, a card or a value: a CRM contact's id, a product
code, a label under a label. Values and texts written for these tests, each cause with near misses that stay."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("value", [
    "00D5e000001AbCd!AQ4AQMxq2Zr7Yt.Lw9Vb3Nc6Hp1Jk8Gf5Ds2Ea0Uo7Ri4Tq_Sx3Wy6Zv9Mb",
    "00D5e000001AbCdEFG!ARcAQPz8Kq1Lm3Nn5Bb7Vv9Cc2Xx4Zz6Aa8Ss0Dd2Ff4Gg6Hh8Jj0Kk",
    "dckr_pat_Q7fz2LmX9-kRt4Wb_8Ny3Vs1Ha6",
    "dckr_oat_Bp3Rm8Tz1Lq6Wx9-Kc2Vn5Yh7Js0",
    "pat-na1-5c2d8e4f-1a3b-4c5d-9e8f-7a6b5c4d3e2f",
    "pat-eu1-0f9e8d7c-6b5a-4f3e-8d2c-1b0a9f8e7d6c",
    "access-sandbox-8b7a6c5d-4e3f-4a2b-9c1d-0e9f8a7b6c5d",
    "access-production-1f2e3d4c-5b6a-4798-8a6b-5c4d3e2f1a0b",
    "1/1203948576102938:8f3c1e7a9b2d4f6e0a1c3e5b7d9f2a4c",
    "2/1203948576102938/1209876543210987:0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d",
])
def test_issuer_token_found_bare_in_prose(value: str) -> None:
    for text in (f"use {value} for now", f"<p>here it is: {value}</p>", json.dumps({"body": f"try {value}"})):
        assert value in _values(text), text


def test_adyen_key_with_angle_bracket_in_its_last_part() -> None:
    value = "AQEpHmfxLI7NbB5Kw0m/n3Q5qf3VaY9UCJ14XWZE03G/k2NFiimXPh4qbS1OMhDBXVsNvuR83LVYjEgiTGAH-Kt7" \
            "c0hUQZ1xWm8Tf4ZqYv3aBnE9rLs2Dp6Jg0Hk5Uw=-a<Zr9}q?Ks%2Lm7Vx"
    assert value in _values(f"<p>{value}</p>")


@pytest.mark.parametrize("text", [
    "pat-na1-00000000-0000-0000-0000-000000000000",
    "see access-sandbox-docs for the flow",
    "step 1/1234567890123456:deadbeef",
    "ratio 1/2 and 3/4",
    "org id 00D5e000001AbCd in the setup page",
    "docker image dckr_pat_short",
])
def test_issuer_token_near_misses_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text,value", [
    ("env:\n  - name: LOG_LEVEL\n    value: info\n  - name: SMTP_PASSWORD\n    value: \"Quill7-Orbit-22\"\n",
     "Quill7-Orbit-22"),
    ("      parameters:\n        - name: secrets.webhookSigningSecret\n          value: \"Tz8vQm2LrX5nKb7Wc4Hy9Ps1\"\n",
     "Tz8vQm2LrX5nKb7Wc4Hy9Ps1"),
    ("params:\n- name: auth.apiToken\n  value: 'c91f4e7a2b6d8305f1e9a7c3b5d20e48'\n",
     "c91f4e7a2b6d8305f1e9a7c3b5d20e48"),
])
def test_yaml_list_item_names_its_value(text: str, value: str) -> None:
    assert value in _values(text)


def test_vault_key_value_table_labels_each_row() -> None:
    text = ("======= Metadata =======\nKey                Value\n---                -----\ncreated_time       "
            "2025-11-02T09:14:00Z\nversion            4\n\n====== Data ======\nKey                  Value\n"
            "---                  -----\nm2m_client_secret    Hq4-Zr8Lw2Nx6Bt0Kp5Vy9Jc3Ms7Fd1Ga_Ue4Ri8To2Wq6Ex0Yb\n"
            "smtp_password        Pelican-Drift-73\nregion               eu-west-1\n")
    found = _values(text)
    assert "Hq4-Zr8Lw2Nx6Bt0Kp5Vy9Jc3Ms7Fd1Ga_Ue4Ri8To2Wq6Ex0Yb" in found
    assert "Pelican-Drift-73" in found
    assert not any(v in found for v in ("eu-west-1", "4", "2025-11-02T09:14:00Z"))


def test_terraform_state_attribute_named_by_its_id() -> None:
    state = {"resources": [{"type": "aws_ssm_parameter", "instances": [{"attributes": {
        "id": "sms_auth_token", "value": "7e2c9a41f8b36d05c1e4a97f2b8d6c30"}}]}, {"type": "github_actions_secret",
        "instances": [{"attributes": {"id": "billing_api_token", "plaintext_value": "Rv8Nq3Lx7Kt2Wm5Bz9Hc4Jy6"}}]}]}
    found = _values(json.dumps(state))
    assert "7e2c9a41f8b36d05c1e4a97f2b8d6c30" in found and "Rv8Nq3Lx7Kt2Wm5Bz9Hc4Jy6" in found


@pytest.mark.parametrize("text,value", [
    ("E1KNA1M  KUNNR=0000104522  STCD1=Wk7Rb2Nq9Lz4Hx6Tc1Vm8Js3Pd5Fg0  (API key)", "Wk7Rb2Nq9Lz4Hx6Tc1Vm8Js3Pd5Fg0"),
    ("E1KNA1M  STCD2=512389047  (SSN)", "512389047"),
    ('[{"key": "OKTA_SSWS", "value": "00Rb5Tn9Lw3Kq7Xz1Vc4Hm8Jd2Gs6Fp0Ya3Ue7Io5N"}]',
     "00Rb5Tn9Lw3Kq7Xz1Vc4Hm8Jd2Gs6Fp0Ya3Ue7Io5N"),
    ('{"data_json": "{\\"okta_ssws\\": \\"00Xq4Lm8Rt2Vb6Nc0Jh3Ws7Kd1Fp5Gz9Ty2Ue6Ia4O\\"}"}',
     "00Xq4Lm8Rt2Vb6Nc0Jh3Ws7Kd1Fp5Gz9Ty2Ue6Ia4O"),
])
def test_field_glossed_in_parentheses_and_escaped_okta_name(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", [
    "E1KNA1M  KUNNR=0000104522  (Customer)  LAND1=DE  (Country)",
    "env:\n  - name: LOG_LEVEL\n    value: debug\n  - name: REPLICAS\n    value: \"3\"\n",
    "Key          Value\n---          -----\nregion       eu-west-1\nrole         reader\n",
    '{"attributes": {"id": "i-0abc12345def67890", "value": "running"}}',
])
def test_names_that_name_nothing_sensitive_give_nothing(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text,value", [
    ("Zavolejte mi prosím na 731 204 586, děkuji", "731 204 586"),
    ("Καλέστε με στο 694 812 3307 αύριο", "694 812 3307"),
    ("אפשר להתקשר אליי ל-052-418-7730 בערב", "052-418-7730"),
    ("ID;Jméno;Κινητό;Odd.\n4411;A. B.;697 530 1184;FIN\n", "697 530 1184"),
    ("id,name,נייד,dept\n7,A B,054-771-2093,OPS\n", "054-771-2093"),
    ("Period,Employee,มือถือ,Gross\n2026-02,A B,081-442-7719,4100.00\n", "081-442-7719"),
    ("Period,Employee,Телефон,Gross\n2026-02,A B,8-916-204-37-58,4100.00\n", "8-916-204-37-58"),
    ("ID;Nama;Telepon;Divisi\n88;A B;0812-4471-3390;OPS\n", "0812-4471-3390"),
    ("oncall:\n  name: A B\n  hp: \"0857-2210-4436\"\n", "0857-2210-4436"),
])
def test_phone_after_call_me_and_under_headers_of_more_scripts(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", [
    "Account 0015e00000ZyXwVu, CRM contact 734019265, ticket #5512",
    "merged contact 612345678 into 612345679",
    "EAN 4006381333931 qty 3",
    '{"gtin": "4012345678901", "qty": 1}',
    "UPC-A 036000291452",
    "Zavolejte mi prosím zítra",
    "HP LaserJet 1020, hp 100, 300 hp at 6500 rpm",
])
def test_record_ids_and_product_codes_stay(text: str) -> None:
    assert _values(text) == []


def test_contact_with_a_separator_or_groups_is_still_a_phone() -> None:
    assert "612 345 678" in _values("contact: 612 345 678")
    assert "06 12 34 56 78" in _values("contact 06 12 34 56 78")


def test_a_label_under_a_label_is_no_value() -> None:
    assert _values("Password:\nPassword:\nPassword:\n") == []
    assert "Marlin-Cobalt-58" in _values("Username:\nPassword:\n    Marlin-Cobalt-58\n")



@pytest.mark.parametrize("text,value", [
    ('2026-03-01T10:00:00.3Z echo "::add-mask::Rk5Vw9Lq2Nz7Bt4Hx8Mc3"', "Rk5Vw9Lq2Nz7Bt4Hx8Mc3"),
    ("::add-mask::tundra-Maple-61", "tundra-Maple-61"),
])
def test_value_a_github_actions_mask_command_masks(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", [
    'echo "::add-mask::$DEPLOY_TOKEN"',
    'echo "::add-mask::${{ secrets.NPM_TOKEN }}"',
    "::add-mask::***",
])
def test_mask_commands_of_references_give_nothing(text: str) -> None:
    assert _values(text) == []
