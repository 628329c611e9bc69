"""Secrets as infrastructure tools print them (issue 40, the twenty-ninth corpus's causes): a Kubernetes Secret's
base64 values, Terraform's `random_password`, AWS STS session tokens, Google access tokens, Vault's unseal keys,
values commands print on the next line, HAProxy and RabbitMQ passwords, framework cookies. Values written for
these tests."""

from __future__ import annotations

import base64
import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
_URL = base64.b64encode(b"postgresql://app:Wq7-vLx2pRt9@db.prod.svc:5432/app").decode()
_USER = base64.b64encode(b"admin").decode()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text", [
    f"apiVersion: v1\nkind: Secret\ndata:\n  DATABASE_URL: {_URL}\n  USERNAME: {_USER}\ntype: Opaque\n",
    f"$ kustomize build overlays/prod | grep -A2 '^data:'\ndata:\n  DATABASE_URL: {_URL}\n  USERNAME: \"{_USER}\"\n",
    json.dumps({"apiVersion": "v1", "kind": "Secret", "data": {"DATABASE_URL": _URL, "USERNAME": _USER}}, indent=2),
    json.dumps({"message": f"$ kubectl get secret app -o yaml\ndata:\n  DATABASE_URL: {_URL}\n  USERNAME: {_USER}"})])
def test_a_kubernetes_secrets_values_whatever_their_keys(text: str) -> None:
    assert _values(text) == [_URL, _USER]


def test_a_config_maps_plain_values_stay() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\ndata:\n  LOG_LEVEL: debug\n  PORT: \"8080\"\n  FLAGS: checkout_v2\n"
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    (f"$ kubectl get secret app -o jsonpath='{{.data.DATABASE_URL}}'\n{_URL}\n", _URL),
    ("$ sudo cat /var/lib/jenkins/secrets/initialAdminPassword\ncbeac12189e80a1b5e70ea89fa470b19\n",
     "cbeac12189e80a1b5e70ea89fa470b19"),
    ("$ argocd admin initial-password -n argocd\nbi*YvT@Sy=Vt.=d*aA\n\n This password must be only used once",
     "bi*YvT@Sy=Vt.=d*aA"),
    ("$ cat ~/.vault-token\ns.N22DLnMQxuJueP369lmcfgSv\n", "s.N22DLnMQxuJueP369lmcfgSv")])
def test_a_value_a_command_prints_on_the_next_line(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("$ cat README.md\nHello from the example\n") == []


def test_a_terraform_random_passwords_result() -> None:
    state = {"type": "random_password", "name": "db",
             "instances": [{"attributes": {"length": 22, "special": True, "result": "delta-harbor-quartz-37"}}]}
    assert _values(json.dumps(state, indent=4)) == ["delta-harbor-quartz-37"]


_STS = "FwoGZXIvYXdzEWski9MKx33L8ZskGu9eb8zkOfu3LZYkRGr12KPZ+5dM/cfLYcy7qq2gK2dc99aa86XpUQRc6NxJCGGxQf4BOGOmt" \
       "mYURRcwH2J6g8ueig1wwyixptv9/ciyW5R3rPsTMTTaVBGX3HfbFtDp/kuDHekq6oD+NZm5rqLwlTujgS8dx7Oj1xz=="
_YA29 = "ya29.a0AfB_byC7JK8RoWFhRDFVgvSr-GH-lv8DvqPOu8NLm2RfbAnrkj8ZwsQw7-h8wZVFDIf0SBYXaB00iQ8G0oJf8JbyhWg6v"


@pytest.mark.parametrize(("text", "value"), [
    (f'{{"RoleArn": "arn:aws:iam::123456789012:role/task", "Token": "{_STS}"}}', _STS),
    (f"> x-amz-security-token: {_STS}\n", _STS),
    (f"$ aws sts get-session-token --query Credentials.SessionToken --output text\n{_STS}\n", _STS),
    (f"$ gcloud auth print-access-token\n{_YA29}\n", _YA29),
    (json.dumps({"Env": ["PATH=/usr/bin", f"$ gcloud auth application-default print-access-token\n{_YA29}"]}),
     _YA29)])
def test_cloud_session_and_access_tokens_by_their_prefix(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("Unseal Key 5: /+JsWp8FoQuPEYgiOVpjdL+U6V/QazbIIygmSjTKIc8a", "/+JsWp8FoQuPEYgiOVpjdL+U6V/QazbIIygmSjTKIc8a"),
    ("Recovery Key 2: f83b6776c6f2ad112bafaf6177ec355c0c6920eee6c27876de81c695ce639cd1c9",
     "f83b6776c6f2ad112bafaf6177ec355c0c6920eee6c27876de81c695ce639cd1c9"),
    ("$ vault operator unseal +zupCRoWGFrnMkobIQ7ZckCzsfMyuK68CcsmsykrHBtP\nKey    Value",
     "+zupCRoWGFrnMkobIQ7ZckCzsfMyuK68CcsmsykrHBtP")])
def test_vault_unseal_and_recovery_keys(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_vault_inits_json_list_of_unseal_keys() -> None:
    keys = ["+sPpiYL+8yMEDBTtAGl1XP38eT1VtWbBG2UKFM8jFU2z", "zupCRoWGFrnMkobIQ7ZckCzsfMyuK68CcsmsykrHBtP1"]
    found = _values(json.dumps({"unseal_threshold": 3, "unseal_keys_b64": keys}, indent=2))
    assert len(found) == 1 and all(k in found[0] for k in keys)


@pytest.mark.parametrize(("text", "value"), [
    ("listen stats\n    bind :8404\n    stats auth admin:Juniper2026*quartz\n", "Juniper2026*quartz"),
    ("userlist ops\n  user bob insecure-password Tr0ub4dor-x9\n", "Tr0ub4dor-x9"),
    ("$ rabbitmqctl add_user svc_orders 'harbor-delta-saffron-54'\nAdding user", "harbor-delta-saffron-54")])
def test_haproxy_and_rabbitmq_passwords(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("    stats auth admin:%[env(STATS_PW)]\n") == []


_OAUTH2_PROXY = "Ijq4kg8QNns5LCpjiDnVJNTR_eMEhofcVGSZjqpjs2NMjsfKa8-saPM7f" * 12 \
    + "|1777664314|LiO0YNu19gDlY2fosBkNqEc-IVR8BNoXgM71rMKDuhA="


@pytest.mark.parametrize(("text", "value"), [
    ("> Cookie: JSESSIONID.a740529e=node0o6rkh7fxcstdoikej1q5di4hyg788.node0",
     "node0o6rkh7fxcstdoikej1q5di4hyg788.node0"),
    ("$ curl -sk -b 'sid=Fe26.2**ec9dd704f18a204fa11138a125ad82ee984142df22402695d9505b6ec1cc15f6*ol4hdwWSeY8"
     "JvIrdM284qQ*YScvsOQ36rSZm2ZviCnifFD2*1767225600000*4a4cMgxUzTGg5JjwLiN8HIiF*p8_-AUPowVvA5Qtx7caBgQ' https://x",
     "Fe26.2**ec9dd704f18a204fa11138a125ad82ee984142df22402695d9505b6ec1cc15f6*ol4hdwWSeY8JvIrdM284qQ*YScvsOQ36rSZm2"
     "ZviCnifFD2*1767225600000*4a4cMgxUzTGg5JjwLiN8HIiF*p8_-AUPowVvA5Qtx7caBgQ"),
    ("set-cookie: _oauth2_proxy=" + _OAUTH2_PROXY + "; Path=/; HttpOnly", _OAUTH2_PROXY)])
def test_framework_cookies_jetty_iron_and_oauth2_proxy(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("$ aws iam create-virtual-mfa-device --virtual-mfa-device-name root --outfile seed.txt "
     "--bootstrap-method Base32StringSeed && cat seed.txt\nLSJGDGJEYSHNMYPC\n", "LSJGDGJEYSHNMYPC"),
    ("Can't scan the QR code? Enter this key instead:\ntrs4 x3sv 2asd s5jw\nTime based", "trs4 x3sv 2asd s5jw")])
def test_authenticator_seeds_an_aws_device_or_a_setup_page_prints(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize(("text", "value"), [
    ("LOG:  execute <unnamed>: SELECT * FROM people WHERE national_id = 'X5672272N'", "X5672272N"),
    ("id_number: 12345678Z", "12345678Z")])
def test_a_spanish_nie_or_dni_under_a_label_that_names_no_country(text: str, value: str) -> None:
    assert _values(text) == [value]
