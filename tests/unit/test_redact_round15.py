"""Precision and recall by cause on the fourteenth corpus's misses, on values written here: masks in brackets after a
password label, SIP's Call-ID, longer phrases before a label's colon, fields interchange formats define."""

from tracegym.redact.detect import Detector


def _found(text: str) -> list[str]:
    return [text[f.start:f.end] for f in Detector().find(text)]


def test_a_mask_in_brackets_after_a_password_label_is_no_password():
    for text in ('{"userPassword": "[REDACTED]"}', '{"password": "[MASKED]"}', "db_password = '(hidden)'",
                 'PASSWORD="[redacted by vault]"'):
        assert _found(text) == [], text
    assert _found('{"password": "[Xk29sLmq77]"}') == ["[Xk29sLmq77]"]


def test_a_sip_call_id_is_no_mailbox_but_its_addresses_are():
    invite = ("INVITE sip:bob@biloxi.example.com SIP/2.0\r\nFrom: Alice <sip:alice.w@atlanta.example.com>;tag=88\r\n"
              "Call-ID: 7c2e91ab04f3d5@pc33.atlanta.example.com\r\nCSeq: 314159 INVITE\r\n")
    found = _found(invite)
    assert "7c2e91ab04f3d5@pc33.atlanta.example.com" not in found
    assert "alice.w@atlanta.example.com" in found


def test_a_phrase_of_up_to_six_words_between_a_label_and_its_colon():
    assert _found("Passwort für den VPN-Zugang der Filiale Nord: Kq7wZ2mXp9") == ["Kq7wZ2mXp9"]
    assert _found("Mật khẩu VPN: Kq7wZ2mXp9") == ["Kq7wZ2mXp9"]
    key = "Tq7ZkP2mX9vLr4sWn8bY3cHd6Fg"
    assert _found(f"Clave de API del portal de reservas: {key}") == [key]
    assert _found(f"Klucz API do bramki SMS: {key}") == [key]


def test_fields_interchange_formats_define_for_passwords_and_ssns():
    assert _found("8=FIX.4.4\x019=98\x0135=A\x01553=ops_desk\x01554=Tr4de!Gate9\x0110=042\x01") == ["Tr4de!Gate9"]
    assert _found("ISA*00*          *01*Pw9x!kLm22*ZZ*SENDER         *ZZ*RECEIVER       *") == ["Pw9x!kLm22"]
    assert _found("NM1*IL*1*Rivera*Ana****34*219099999~") == ["219099999"]
    assert _found("REF*SY*219099998~DMG*D8*19800101*F~") == ["219099998"]
    assert _found("RA000000000\nRW219099997ANA        RIVERA      52000.00") == ["219099997"]


def test_the_same_codes_outside_their_formats_stay():
    for text in ("quote|554=100.25|size=3", "ISA*00*          *00*          *ZZ*SENDER         *",
                 "NM1*IL*1*Rivera*Ana****MI*219099999~", "order RW219099997 shipped"):
        assert _found(text) == [], text


def test_subscriber_numbers_of_telecom_records():
    assert _found("submit_sm dest_addr_ton=1 destination_addr=447700900461 short_message=\"hi\"") == ["447700900461"]
    assert _found('{"msisdn": "919820012345", "code": "*100#"}') == ["919820012345"]
    assert _found('Calling-Station-Id = "020 7946 0811"') == ["020 7946 0811"]
    assert _found('Calling-Station-Id = "00-1B-63-84-45-E6"\nsource_addr=CLINIC') == []


def test_oracle_user_password_connect_form():
    assert _found("url=jdbc:oracle:thin:edi_rw/Wq8!zLm2Rt@//db.example.org:1521/PDB") == ["Wq8!zLm2Rt"]
    assert _found("sqlplus -S scott/Tig3r!pw@orclpdb") == ["Tig3r!pw"]
    assert _found("jdbc:oracle:thin:@//db.example.org:1521/PDB") == []


def test_a_no_break_space_inside_a_key_is_no_break_but_between_words_it_is():
    key = "glpat-Rk8wZq2LmX7vTn4pYs3c"
    assert _found(f"rotated: {key[:12]}\u00a0{key[12:]}") == [f"{key[:12]}\u00a0{key[12:]}"]
    assert _found("Prix\u00a0: 10\u00a0000\u00a0€ pour 3\u00a0jours") == []


def test_greek_password_label_lftp_and_long_words_before_a_key_label_colon():
    assert _found("Κωδικός πρόσβασης VPN: Kq7wZ2mXp9") == ["Kq7wZ2mXp9"]
    assert _found("lftp -u edi_user,Zr7!kq2Lw9 sftp://mft.example.org") == ["Zr7!kq2Lw9"]
    assert _found("lftp -u anonymous sftp://mft.example.org") == []
    key = "Tq7ZkP2mX9vLr4sWn8bY3cHd6Fg"
    assert _found(f"API-Schlüssel für den Zahlungsverkehrsdienst: {key}") == [key]


def test_fields_of_saml_mt940_and_hl7_that_hold_personal_data():
    saml = ('<saml:Attribute Name="telephoneNumber"><saml:AttributeValue>020 7946 0322</saml:AttributeValue>'
            "</saml:Attribute>")
    assert _found(saml) == ["020 7946 0322"]
    assert _found(":86:166?00SEPA-UEBERWEISUNG?20EREF+4471?31DE89370400440532013000?32Rivera") \
        == ["DE89370400440532013000"]
    pid = "PID|1||4471^^^HOSP^MR||Rivera^Ana||19800101|F|||||||||||219099996|"
    assert _found(pid) == ["219099996"]


def test_card_numbers_in_track_data_and_emv_records():
    assert _found("5A 08 4539578763621486\n5F24 03 271231") == ["4539578763621486"]
    assert _found("57 13 4539578763621486D27122011554180000F") == ["4539578763621486"]
    assert _found(";4539578763621486=27121010000000000000?") == ["4539578763621486"]
    assert _found("%B4539578763621486^RIVERA/ANA^2712101000000000000?") == ["4539578763621486"]
    assert _found("9F02 06 000000010000\n5F2A 02 0978\n9A 03 241206") == []
