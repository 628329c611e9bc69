"""Secrets as security operations and penetration-testing tools print them (the thirty-ninth corpus's causes): NT
hashes in dumps, mimikatz and pass-the-hash command lines, passwords of Windows tools, Metasploit and spraying
tools' hits, national ids after a short name as a key or a scanner's finding, toll-free lines. Values written for
these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()

_NT = "3f9c0d2be71a4c58b6e0f1d2a3c4b5e6"
_LM = "e0fba38268d0ec66ef1cb452d5885e53"
_EMPTY_LM = "aad3b435b51404eeaad3b435b51404ee"


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize("text", [
    f"Guest:501:{_EMPTY_LM}:{_NT}:::",
    f"acme.local\\svc_backup:1107:{_EMPTY_LM}:{_NT}::: (status=Enabled)",
    f"\t * NTLM     : {_NT}",
    f"  Hash NTLM: {_NT}",
    f'{{"NThash": "{_NT}", "LMHash": null}}',
    f"NT hash = {_NT}",
    f"nxc smb 192.0.2.0/24 -u admin -H {_NT} --local-auth",
    f"crackmapexec winrm 192.0.2.7 -u admin -H {_EMPTY_LM}:{_NT}",
    f"evil-winrm -i 192.0.2.7 -u jonas --hash {_NT}",
    f"wmiexec.py -hashes {_EMPTY_LM}:{_NT} acme/jonas@192.0.2.7",
    f"secretsdump.py -hashes :{_NT} acme/jonas@192.0.2.7",
    f"Rubeus.exe asktgt /user:jonas /rc4:{_NT} /ptt",
    f"xfreerdp /v:192.0.2.7 /u:jonas /pth:{_NT}"])
def test_an_nt_hash_as_the_tools_print_and_take_it(text: str) -> None:
    assert _values(text) == [_NT]
    assert _values(json.dumps({"line": text})) == [_NT]


def test_a_pwdump_lines_lm_hash_goes_too_unless_it_is_the_empty_one() -> None:
    assert _values(f"legacy:1010:{_LM}:{_NT}:::") == [_LM, _NT]


@pytest.mark.parametrize("text", [
    f"MD5: {_NT} dropped by the loader",
    f"md5sum {_NT}  payload.bin",
    f"GuardDuty finding id {_NT} archived",
    f"traceparent: 00-{_NT}-00f067aa0ba902b7-01",
    "\t * NTLM     : 31d6cfe0d16ae931b73c59d7e0c089c0",
    f"\t * LM       : {_EMPTY_LM}",
    "NTLM: 00000000000000000000000000000000",
    "[*] Dumping local SAM hashes (uid:rid:lmhash:nthash)",
    "[*] Dumping Domain Credentials (domain\\uid:rid:lmhash:nthash)",
    "[*] Dumping cached credentials (domain/username:hash)",
    "curl -H 'Accept: */*' https://example.com"])
def test_digests_ids_and_the_empty_passwords_hashes_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("PsExec64.exe \\\\fs01 -u ACME\\jonas -p Birch!Lantern9 -accepteula cmd.exe", "Birch!Lantern9"),
    ("PsExec64.exe \\\\fs01 -u ACME\\tomas -p Birch!Lantern9 cmd.exe", "Birch!Lantern9"),
    ("psexec \\\\192.0.2.7 -u admin -p \"Lake side 44\" cmd", "Lake side 44"),
    ("cmdkey /generic:TERMSRV/fs01 /user:ACME\\tomas /pass:Qz7-mWx2kpL", "Qz7-mWx2kpL"),
    ("msf6 auxiliary(scanner/smb/smb_login) > set SMBPass gravel-Yn4-otter", "gravel-Yn4-otter"),
    ("msf6 exploit(multi/http/tomcat_mgr_upload) > setg HttpPassword Tmc4t!2024", "Tmc4t!2024")])
def test_passwords_windows_tools_and_metasploit_take(text: str, value: str) -> None:
    assert value in _values(text)
    assert value in _values(json.dumps({"line": text}))


@pytest.mark.parametrize("text", [
    "msf6 > set PASS_FILE /usr/share/wordlists/rockyou.txt",
    "msf6 > set BLANK_PASSWORDS true",
    "cmdkey /add:fs01 /user:jonas /pass"])
def test_options_naming_a_password_list_or_a_prompt_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("SMB         192.0.2.7       445    FS01             [+] acme.local\\jonas:Ravenwood#31 (Pwn3d!)",
     "Ravenwood#31"),
    ("WINRM  192.0.2.7  5985  FS01  [+] ACME\\nadia:Q9v-pLm2x%x", "Q9v-pLm2x%x"),
    ("2025/01/02 10:11:12 >  [+] VALID LOGIN:\t jonas@acme.test:Ravenwood#31", "Ravenwood#31")])
def test_passwords_of_logins_sprayers_report_valid(text: str, value: str) -> None:
    assert value in _values(text)
    assert value in _values(json.dumps({"line": text}))


@pytest.mark.parametrize("text", [
    "SMB  192.0.2.7  445  FS01  [+] Enumerated shares",
    "SMB  192.0.2.7  445  FS01  [+] Dumping SAM hashes",
    "[+] VALID USERNAME:\t jonas"])
def test_sprayer_lines_without_a_password_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("signup form: name=K. Lind&pnr=811218-9876", "811218-9876"),
    ("leaked row pnr=811218-9876;city=Lund", "811218-9876"),
    ("scanner alert, pnr detected: 811218-9876", "811218-9876"),
    ("DLP match, hetu found: 131052-308T", "131052-308T"),
    ("export line hetu=131052-308T", "131052-308T")])
def test_a_national_id_after_its_short_name_as_a_key_or_a_finding(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["pnr=811218-9875", "hetu detected: 131052-308A", "pnr found: 12 items"])
def test_short_names_before_values_failing_the_check_stay(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", ["Numéro Vert 0 800 41 27 63", "Numéro Vert 0805 41 27 63",
                                  json.dumps({"note": "numéro vert : 0 800 41 27 63"}),
                                  "Freephone number 0800 123 4567"])
def test_toll_free_lines_by_their_name_stay(text: str) -> None:
    assert _values(text) == []


def test_a_french_number_beside_a_phone_word_is_still_found() -> None:
    assert _values("Numéro de téléphone : 06 41 27 63 18") == ["06 41 27 63 18"]
