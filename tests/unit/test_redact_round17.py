"""Passwords in home and small-business IT (Cisco IOS, pfSense and OpenLDAP, game servers' cfg, PowerShell,
mosquitto), Home Assistant Cloud webhooks, phone numbers after "rang from" and "voicemail from", and word
boundaries after a JSON escape."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()
PW = "tulip4417river"  # one case, no symbol: no shape of its own, only its place makes it a password


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text", [
    f"hostname EDGE\n!\nusername ops privilege 15 password 0 {PW}\n!",
    f"enable secret 0 {PW}\nline vty 0 4",
    f"<authserver><ldap_bindpw>{PW}</ldap_bindpw></authserver>",
    f"rootpw {PW}",
    f'hostname "LAN"\nrcon_password "{PW}"\nsv_lan 1',
    f'$cred = ConvertTo-SecureString "{PW}" -AsPlainText -Force',
    f"mosquitto_pub -h 10.0.0.5 -u iot -P '{PW}' -t home/door -m open",
    f'{{"text": "@echo off\\nnet user helpdesk {PW} /add"}}',  # `\\n` then `net`: a JSON escape, then a word
])
def test_passwords_of_devices_and_admin_scripts(text: str) -> None:
    assert PW in _values(text), text


def test_a_home_assistant_cloud_webhook_keeps_its_host() -> None:
    token = "gAAAAABlx7QpZk3VhR2mNw9TtY4cJd8sLq"
    assert _values(f"url: https://hooks.nabu.casa/{token}") == [token]


@pytest.mark.parametrize(("text", "number"), [("Patient rang from 07700 954321, please call back", "07700 954321"),
                                              ("New voicemail from 020 7946 0321 about the lease", "020 7946 0321")])
def test_a_number_someone_rang_from(text: str, number: str) -> None:
    assert number in _values(text), text


@pytest.mark.parametrize("text", [
    '$pw = Get-Content .\\pw.txt', "export PGPASSWORD=${PGPASSWORD:?unset}", "enable secret 9 $9$abc",
    "the handler was called from line 42",
    "doi:10.8819/j.cell-2024-37113-4",  # a DOI whose journal is Cell: no phone word
])
def test_code_and_messages_around_a_password_label_stay(text: str) -> None:
    assert _values(text) == [], text
