"""Secrets as apps and devices print them (issue 40, the thirty-first corpus's causes): Matter and HomeKit setup
codes, Wi-Fi passphrases in wpa_supplicant, hostapd and AT commands, steamcmd's login, basic credentials under a
name that says so, cookies from a browser's database and Steam's. Values written for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("I (1843) chip[SVR]: Manual pairing code: [3497-011-2332]", "3497-011-2332"),
    ("$ chip-tool pairing code 1 34970112332", "34970112332"),
    ("HomeKit setup code: 031-45-154", "031-45-154"),
    (json.dumps({"detail": "Manual pairing code: [34970112332]"}), "34970112332"),
    ("Código de emparelhamento: 34970112332", "34970112332"), ("Code d'appairage : 031-45-154", "031-45-154"),
    ("Eşleştirme kodu: 3497-011-2332", "3497-011-2332"), ("ペアリングコード: 3497-011-2332", "3497-011-2332")])
def test_a_devices_setup_code_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["Manual pairing code: [3497-011-2333]", "HomeKit setup code: 123-45-678",
                                  "pair 12345678 devices", "key pair 2048 bits"])
def test_codes_failing_their_check_and_other_numbers_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ('network={\n    ssid="HomeNet-5G"\n    psk="Kiwilantern02#"\n    key_mgmt=WPA-PSK\n}', "Kiwilantern02#"),
    ("interface=wlan0\nssid=Cafe-Guest\nwpa_passphrase=Sunflowerzephyr747\n", "Sunflowerzephyr747"),
    ('AT+CWJAP="Office-2G","Falconzephyr48."\r\nWIFI CONNECTED', "Falconzephyr48."),
    ("steamcmd +login builduser Quartzwillow285_ +run_app_build ../scripts/app.vdf +quit", "Quartzwillow285_")])
def test_wifi_passphrases_and_steamcmd_logins(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values(json.dumps({"log": text})) == [value]


def test_basic_credentials_under_a_name_that_says_so() -> None:
    text = "I/flutter (17542): MATCH_GIT_BASIC_AUTHORIZATION=aG9tZWFzc2lzdGFudDpRdWFydHpyb2NrZXQzNDUj"
    assert _values(text) == ["aG9tZWFzc2lzdGFudDpRdWFydHpyb2NrZXQzNDUj"]


_STEAM = ("76561197960287930%7C%7CeyJ0eXAiOiJKV1QiLCJhbGciOiJFZERTQSJ9.eyJpc3MiOiJyOkM4RDQ0OTEwQzIzM0Y5OTIiLCJzdWIi"
          "OiI3NjU2MTE5Nzk2MDI4NzkzMCJ9.WuA3zgyxTJx08V17X1t3g8nzZWhn3Ix226D_QrmR0gNM9hQ9cKvsHPLmaj2es1IsJpRmkmOWo4YQ")


@pytest.mark.parametrize(("text", "value"), [
    ("sqlite> .mode line\nhost_key = .kitebyte.example\n    name = PHPSESSID\n   value = ijgb3j68jmrpr1ikkrvh2fnq5v",
     "ijgb3j68jmrpr1ikkrvh2fnq5v"),
    (f"java.lang.IllegalStateException: Set-Cookie: steamLoginSecure={_STEAM}; Path=/; HttpOnly", _STEAM)])
def test_cookies_from_a_browsers_database_and_steams(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values("host_key = .kitebyte.example\n    name = theme\n   value = dark-mode-v2") == []


@pytest.mark.parametrize("text", ["be_national_number=85.03.14-123.02", "national number: 85.03.14-123.02"])
def test_a_belgian_national_number_under_its_english_name(text: str) -> None:
    assert _values(text) == ["85.03.14-123.02"]
