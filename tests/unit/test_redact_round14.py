"""The round on the thirteenth corpus's misses, by cause, on values written here: IBANs of the registry's newer and
national countries, generated passwords with brackets, identifier-joined and post-modified labels, Tamil and Hindi
phone words, rich-text lists with bare strings (Telegram's export), XML values named by an attribute or a key
element."""

import json

from tracegym.redact.detect import Detector


def _iban(country: str, bban: str) -> str:
    """`country` + ISO 7064 MOD 97-10 check digits + `bban`."""
    digits = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{country}{98 - int(digits) % 97:02d}{bban}"


def _found(text: str) -> list[str]:
    return [text[f.start:f.end] for f in Detector().find(text)]


def test_ibans_of_newer_registry_and_national_countries_are_found():
    for country, bban in (("IR", "0170000000112233445566"), ("RU", "04452560040702810412345678901"),
                          ("OM", "0180000001299123456"), ("MA", "011519000001205000534921"),
                          ("LY", "002048000020100120361")):
        iban = _iban(country, bban)
        grouped = " ".join(iban[i:i + 4] for i in range(0, len(iban), 4))
        assert _found(f"IBAN {grouped} please") == [grouped], country
        assert _found(f"wire it to {iban}.") == [iban], country


def test_lower_case_compact_saudi_and_iranian_ibans_hold_their_bban_structure():
    sa = _iban("SA", "80ABCD00000608010167").lower()
    ir = _iban("IR", "0620000000203443585001").lower()
    assert _found(f"sheba {ir} / {sa}") == [ir, sa]
    broken = sa[:-1] + ("0" if sa[-1] != "0" else "1")
    assert _found(f"ref {broken}") == []


def test_generated_passwords_with_brackets_braces_and_semicolons_are_found_whole():
    for label, value in (("Password: ", "p]Q7{x;Lm}2w"), ("the password is ", "{Zr8]k!vB;q"),
                         ("mot de passe : ", "[h3Ld;o}Wq9"), ("密码：", "Xy7];kq{Pz"), ("Password - ", "a(B3;c]D4e")):
        assert _found(f"{label}{value} thanks") == [value], value


def test_placeholders_references_and_code_after_a_password_label_are_not_passwords():
    for text in ("password: [REDACTED]", "password: [MASKED-BY-OPS]", "password: {{ vault_db_pw }}",
                 "password: <hidden>", "password: ${DB_PASS}", "password: os.environ[DB_PASSWORD]",
                 "password: getpass(prompt);", "password: (see vault) ok", "password: (stored-in-vault)",
                 "The password is required (min 8 chars).", "password: cfg[prod];"):
        assert _found(text) == [], text


def test_a_password_word_joined_as_an_identifier_labels_its_value():
    assert _found("│ mot_de_passe = 'Qw7vLp2Xs9' │") == ["Qw7vLp2Xs9"]
    assert _found('{"mot-de-passe": "Hiver2024!x"}') == ["Hiver2024!x"]
    assert _found("CLAVE_DE_ACCESO=Rt5mWq81zz") == ["Rt5mWq81zz"]


def test_a_key_noun_modified_after_it_labels_a_key_without_a_separator():
    key = "Tq7ZkP2mX9vLr4sWn8bY3cHd"
    for label in ("токен доступа", "chave da API", "token di accesso", "المفتاح السري", "توکن دسترسی",
                  "API 金鑰", "秘密金鑰", "API விசை"):
        assert _found(f"{label} {key}") == [key], label
    assert _found(f"the cache key for layer {'ab12' * 16}") == []


def test_phone_words_of_tamil_and_hindi():
    for text, number in (("கைபேசி எண் 98765 43210", "98765 43210"), ("மொபைல்: 0091 98450 12345", "0091 98450 12345"),
                         ("कॉल करें 020 7946 0018", "020 7946 0018"), ("कृपया संपर्क करें: 98201-54321", "98201-54321")):
        assert _found(text) == [number], text


def _telegram(label: str, value: str, style: str = "code") -> str:
    """A message as Telegram Desktop's JSON export writes it: `text` as plain strings between styled entities."""
    return json.dumps({"id": 7, "type": "message", "from": "Ana", "text": [label, {"type": style, "text": value}, ""],
                       "text_entities": [{"type": "plain", "text": label}, {"type": style, "text": value},
                                         {"type": "plain", "text": ""}]}, ensure_ascii=False, indent=1)


def test_a_code_entity_after_a_label_in_a_rich_text_list_is_labelled_by_it():
    for label, value in (("mật khẩu ", "Wq8zLm2Rt5"), ("Hallo, Tel.: ", "0171 2345678"), ("SSN ", "219-09-9999"),
                         ("AWS aws_secret_access_key=", "Gh7kP2x/Lq9vWm4Rz8Tn3Bc6Yd1Fs5Ja0Ke+Ux7i")):
        text = _telegram(label, value)
        assert set(_found(text)) == {value}, label


def test_plain_entities_and_words_that_are_no_label_stay():
    assert _found(_telegram("build ", "v2.14.0-rc1")) == []
    assert _found(_telegram("Password ", "Wq8zLm2Rt5", style="plain")) == []
    assert _found(_telegram("see the ", "deploy_docs")) == []


def test_xml_values_named_by_an_attribute_or_a_key_element_beside_them():
    key = "Kq3vXw9LmZ2pR7tY5bN8cD4f"
    assert _found(f'<EventData><Data Name="X-API-Key">{key}</Data><Data Name="Status">0x0</Data></EventData>') \
        == [key]
    assert _found('<String><Key>Title</Key><Value>ACME</Value></String><String><Key>adminPwd</Key>'
                  '<Value ProtectInMemory="True">s3cr3t-Pa55!</Value></String>') == ["s3cr3t-Pa55!"]
    assert _found("<dict>\n\t<key>password</key>\n\t<string>Tr0ub4dor&amp;3x</string>\n</dict>") \
        == ["Tr0ub4dor&amp;3x"]
    assert _found('<Data Name="ProcessId">0x1f40</Data><Key>Title</Key><Value>Quarterly report</Value>') == []


def test_htpasswd_batch_flag_apart_from_the_others():
    for cmd in ("htpasswd -b -c /etc/nginx/.htpasswd ops Zr7;kq2Lw!", "htpasswd -c -b .htpasswd ops Zr7;kq2Lw!"):
        assert _found(cmd) == ["Zr7;kq2Lw!"], cmd
    assert _found("htpasswd -c /etc/nginx/.htpasswd ops") == []


def test_a_card_ending_a_log_line_is_found_when_the_next_line_opens_with_digits():
    text = "feedback submitted: card 3714 496353 98431\n765  12/06/2024 10:02:12 Fatal Exception"
    assert _found(text) == ["3714 496353 98431"]
    assert _found("4111 1111 1111 1112\n3 retries") == []


def test_an_aws_key_pair_across_a_quoted_reply_line():
    secret = "Vb3nQ8/xLw2+Kp7sRt5yZm1Hc9Df4Gj6Nq0Ue2Wa"
    text = f"On Mon, Ana wrote:\n> > AWS: AKIAQ7X2M4N6P8R3T5V7\n> > {secret} thanks\n"
    assert secret in _found(text)
