"""Secrets of network devices and mobile networks as their configurations and tools write them (the
thirty-seventh corpus's causes): RADIUS and TACACS+ shared secrets, routing MD5 keys and Junos `$9$` secrets; SNMP
communities and SNMPv3 passphrases; a SIM's Ki, K and PUK and an eSIM's matching id; Wi-Fi passphrases in a QR
code's text, RouterOS' profile and prose. Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    (" radius-server shared-key cipher Harbor#4471kite", "Harbor#4471kite"),
    ("hwtacacs-server shared-key cipher Qv7pLm2xR9wT", "Qv7pLm2xR9wT"),
    ('set system radius-server 192.0.2.40 secret "Lantern_9021xy"', "Lantern_9021xy"),
    ('set access radius-server 192.0.2.41 secret Pelican-5310ab', "Pelican-5310ab"),
    ('set protocols bgp group upstream neighbor 203.0.113.9 authentication-key "mK4#tq9Zp2"', "mK4#tq9Zp2"),
    ('radius server 2 address 192.0.2.77 secret "Orchid-8812zz" hash2', "Orchid-8812zz"),
    ("radius-server host 192.0.2.5 auth-port 1812 acct-port 1813 key 0 Gx81mTq0Lw", "Gx81mTq0Lw"),
    ("tacacs-server host 192.0.2.6 key Willow7733Fern", "Willow7733Fern"),
    (" neighbor 198.51.100.3 password 7 0822455D0A16544541", "0822455D0A16544541"),
    ('{"note": "set system tacplus-server 192.0.2.8 secret \\"Birch_6620qq\\""}', "Birch_6620qq")])
def test_a_servers_shared_secret_after_its_configuration_keyword(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_a_junos_nine_secret_anywhere_but_not_ciscos_type_nine_hash() -> None:
    secret = "$9$Wq3LxNdbs4aZ.mT3nCtOBIcrKvMXN-dVw"
    assert _values(f'authentication-key "{secret}"; ## SECRET-DATA') == [secret]
    assert _values(f"the key was {secret} before the change") == [secret]
    assert _values("enable algorithm-type scrypt secret 9 $9$nhEmQVczB7dqsO$X.HsgL6x1il0RxkOSSvyQY") == []


@pytest.mark.parametrize(("text", "value"), [
    ('set snmp community "Granite-4410ro" authorization read-only', "Granite-4410ro"),
    ("snmp-agent community read cipher Marble7781Kq acl 2000", "Marble7781Kq"),
    ("snmp-agent community write Tz9wQ2mLr8", "Tz9wQ2mLr8"),
    ("snmp-server community Falcon_5502pw RO 10", "Falcon_5502pw"),
    ("snmp-server user nmsops NMSGROUP v3 auth sha Auth7731Pass priv aes 128 Priv9921Key", "Auth7731Pass"),
    ("/snmp community add name=Quartz2290zz addresses=192.0.2.0/24", "Quartz2290zz"),
    ("rocommunity Ember_3307rq 192.0.2.0/24", "Ember_3307rq"),
    ("rwcommunity6 Vx4bN8qLm2 fd00::/8", "Vx4bN8qLm2"),
    ("com2sec readonly default Slate9915kw", "Slate9915kw"),
    ('createUser monitor SHA-512 "Tundra-6610bb" AES', "Tundra-6610bb"),
    ("snmpwalk -v2c -c Cobalt8842xy 192.0.2.1 ifTable", "Cobalt8842xy"),
    ("snmpget -v3 -l authPriv -u ops -a SHA -A 'Glacier_2207q' 192.0.2.1 sysName.0", "Glacier_2207q"),
    ('community "Basalt-6654pp" access-permissions rw version v2c', "Basalt-6654pp"),
    ("SNMP community (read-write) for the pole cameras: Rk2#wq8Lm!", "Rk2#wq8Lm!"),
    ('{"snmp_community": "Nimbus4419kt"}', "Nimbus4419kt")])
def test_an_snmp_community_or_passphrase_after_its_keyword(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "rocommunity public 127.0.0.1",
    "snmp-server community private RW",
    "snmpwalk -v2c -c public localhost system",
    "set snmp community $COMMUNITY",
    "The community string is configured per site.",
    "SNMP community: see the vault"])
def test_no_snmp_community_in_defaults_references_or_prose(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("subscriber imsi 001010000012345 update aud2g comp128v1 ki 3f9a0b2c7d41e8f6a5b4c3d2e1f09876",
     "3f9a0b2c7d41e8f6a5b4c3d2e1f09876"),
    ("subscriber id 7 update aud3g milenage k 0c1d2e3f405162738495a6b7c8d9e0f1 opc 00112233445566778899aabbccddeeff",
     "0c1d2e3f405162738495a6b7c8d9e0f1"),
    ('"security": {"k": "7E1F2A3B4C5D6E7F8091A2B3C4D5E6F7", "amf": "8000", "op": null}',
     "7E1F2A3B4C5D6E7F8091A2B3C4D5E6F7"),
    ("security: { k: '4A5B6C7D 8E9F0A1B 2C3D4E5F 60718293', amf: '8000' }", "4A5B6C7D 8E9F0A1B 2C3D4E5F 60718293"),
    ("Ki: 9D8C7B6A5F4E3D2C1B0A99887766F5E4", "9D8C7B6A5F4E3D2C1B0A99887766F5E4"),
    ("ICCID,IMSI,KI,PIN1\n8944100000000000017,001010000000017,A1B2C3D4E5F60718293A4B5C6D7E8F90,1234",
     "A1B2C3D4E5F60718293A4B5C6D7E8F90"),
    ("Scan this: LPA:1$rsp.example.org$QW3RT-Y8UIO-P4ASD-F6GHJ", "QW3RT-Y8UIO-P4ASD-F6GHJ"),
    ("SIM locked after three tries, PUK1: 40918273", "40918273"),
    ('{"iccid": "8944100000000000017", "puk": "55120934"}', "55120934")])
def test_a_sims_secret_after_the_keyword_or_column_that_names_it(text: str, value: str) -> None:
    assert value in " ".join(_values(text))


@pytest.mark.parametrize("text", [
    "ki 00000000000000000000000000000000",
    "the KI column holds the key; see the batch file",
    "PUK requests go through the portal, ticket 123456789",
    "LPA:1$rsp.example.org$"])
def test_no_sim_secret_without_a_value_that_is_one(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("WIFI:T:WPA;S:Depot-Guest;P:Clover7715Moss#;;", "Clover7715Moss#"),
    ("WIFI:S:Yard\\;Net;T:WPA;P:tq8\\;Lm2xZw;H:false;;", "tq8\\;Lm2xZw"),
    ("/interface wireless security-profiles set maint wpa2-pre-shared-key=Heron4420Dusk_", "Heron4420Dusk_"),
    ("Guest network Depot-5, WPA2 key Cedar_8831wk", "Cedar_8831wk"),
    ("WPA2-PSK passphrase: r7Q#m2Lx9v", "r7Q#m2Lx9v")])
def test_a_wifi_passphrase_in_a_qr_codes_text_a_profile_or_prose(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "WPA2 key management uses the 4-way handshake",
    "WPA2 passphrase must be 8 to 63 characters",
    "authentication-types=wpa2-psk mode=dynamic-keys"])
def test_no_wifi_passphrase_in_prose_about_wpa(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Weather feed appid (storm alerts): 5c0e9a7b3d214f6e8a9b0c1d2e3f4a5b", "5c0e9a7b3d214f6e8a9b0c1d2e3f4a5b"),
    ('{"appid": "a1b2c3d4e5f60718293a4b5c6d7e8f90", "units": "metric"}', "a1b2c3d4e5f60718293a4b5c6d7e8f90")])
def test_an_appid_of_32_hex_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "steam appid: 570", "appid = com.example.meters", "appid: 00000000000000000000000000000000"])
def test_no_appid_that_is_a_number_a_name_or_a_mask(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Escalation: 09812345670 — mobile no.", "09812345670"),
    ("Duty engineer 98123 45670 – फ़ोन नंबर", "98123 45670")])
def test_a_national_phone_number_with_its_label_after_a_dash(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", ["Batch 20261104 — phone cases, 400 units", "step 3 — phone the depot"])
def test_no_phone_before_a_dash_that_is_no_number(text: str) -> None:
    assert _values(text) == []
