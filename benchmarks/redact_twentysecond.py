"""The twenty-second blind redaction corpus: browser and computer-use agents, what an agent that drives a browser
or a desktop sees and records. Written from the formats' public specifications by someone who read neither the
detection rules nor the other corpora.

Carriers (the `form` head): DOM snapshots of forms (input `value=` and `data-` attributes), Playwright aria
snapshots, OCR text of screenshots (a label and its value on different lines, stray glyphs), Playwright and
Selenium action logs, `xdotool` shell sessions, clipboard logs, terminal screenshots as text, Chrome password CSV
exports, DevTools console output, form-submission logs, Session Storage panels, agent step transcripts and pages
turned into Markdown; in JSON: HAR 1.2 entries (headers, cookies, `postData`, query strings), Chrome DevTools
Protocol `Network.requestWillBeSent` events, Chrome AX tree nodes (`Accessibility.getFullAXTree`), localStorage
dumps, password-manager JSON exports (Bitwarden's unencrypted format), Anthropic `computer` tool `type` calls,
Playwright trace actions, rrweb input events and browser-use agent history steps. About a third is JSON carried
(`is_json`); labels come in the page's language (28 languages).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT) with each country's context
words, avoiding the ranges the regulators reserve for drama; AWS keys, IAM's documented AKIA/ASIA ids (base32
alphabet) and 40-character secrets; Slack, Discord, Teams (Office 365 connector and Power Automate `sig=`),
Google Chat, Zapier, Mattermost and Rocket.Chat webhook URLs (the secret is the token segment or query value
only); Stripe `whsec_` signing secrets (dashboard and CLI forms) and `sk_live_`/`rk_live_` keys; connection
strings (PostgreSQL/MongoDB/Redis/AMQP URIs, ADO.NET, JDBC, Azure Storage and Service Bus; the secret is the
password or key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750); OAuth 2.0 access and
refresh tokens in implicit-flow fragments and token requests (RFC 6749); session cookies as Django, Rails, PHP,
Express, Java EE, ASP.NET Core and NextAuth name and write them (RFC 6265); TOTP seeds (RFC 6238, Google
Authenticator's `otpauth://` key URI, RFC 4648 base32); recovery codes as GitHub, Google, Microsoft and 1Password
print them; PEM PKCS#8/SEC1 (RFC 5208/5915) and OpenSSH `openssh-key-v1` keys; provider tokens by their documented
prefixes: GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` (CRC32 checksum) and `github_pat_`, OpenAI `sk-`/`sk-proj-`
(`T3BlbkFJ` marker), Anthropic `sk-ant-api03-`, Slack `xoxb-`/`xoxp-`/`xapp-`, Google `AIza`; national ids
(outside the target): French NIR (97 - n mod 97 key), Swedish personnummer (Luhn), Finnish henkilotunnus (mod 31
character), Norwegian fodselsnummer (two mod 11 digits), Chinese resident id (ISO 7064 MOD 11-2), Belgian national
register number (97 - n mod 97, a 2 before the 2000s-born).

Judgements: a case's `secret` is only what must not survive, as written in the carrier (a webhook's token segment,
a connection string's password, a cookie's value, a percent-encoded form field's value as encoded, a disguised
token with its zero-width or full-width characters, an OCR'd value with the OCR's spacing). A browser-facing
Google Maps key is still a credential (its restriction is the owner's business). Providers' published test card
numbers are valid cards by format, so they are held neither as values nor as near misses. Near misses are what
browser agents record that is neither secret nor personal: element ids, CSS selectors, XPath, click coordinates,
viewport and pixel sizes, timestamps, CDP request and loader ids, cache-busting file hashes, subresource integrity
hashes, CSRF field names (without values), placeholders and format hints, masked values, browser and library
versions, businesses' published toll-free lines, Luhn-invalid numbers, order and tracking numbers, key chords and
aria refs: none of them identifies a person or opens anything.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from urllib.parse import quote

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519

from benchmarks.corpus_formats import (
    b64url,
    bban,
    crc_token,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 22
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"fr_nir", "se_pnr", "fi_hetu", "no_fnr", "cn_ric", "be_nrn"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
PW_SYMBOLS = "!#$%*+-=?@^_."
"""Password symbols; no quotes, backslashes, `&`, `<` or `>`, so HTML, CSV and JS carriers keep them as they are."""


@dataclass(frozen=True)
class Case:
    """One planted value: its kind, `carrier/style` form, the value as written, and the text carrying it."""

    kind: str
    form: str
    secret: str
    text: str
    is_json: bool

    @property
    def carried(self) -> str:
        """The text as it reaches redaction (the carrier already is the stored string)."""
        return self.text


Value = tuple[str, str, str, bool]
"""(style, secret, snippet holding the secret, raw_only: the snippet must not be re-escaped in JSON)."""


# ---- page languages -------------------------------------------------------------------------------------------

LABELS: dict[str, tuple[str, str, str, str, str, str]] = {
    "en": ("Password", "Email", "Phone", "Card number", "API key", "Secret key"),
    "de": ("Passwort", "E-Mail", "Telefon", "Kartennummer", "API-Schlüssel", "Geheimer Schlüssel"),
    "fr": ("Mot de passe", "Adresse e-mail", "Téléphone", "Numéro de carte", "Clé API", "Clé secrète"),
    "es": ("Contraseña", "Correo electrónico", "Teléfono", "Número de tarjeta", "Clave de API", "Clave secreta"),
    "it": ("Password", "Indirizzo email", "Telefono", "Numero della carta", "Chiave API", "Chiave segreta"),
    "pt": ("Senha", "E-mail", "Telefone", "Número do cartão", "Chave de API", "Chave secreta"),
    "nl": ("Wachtwoord", "E-mailadres", "Telefoonnummer", "Kaartnummer", "API-sleutel", "Geheime sleutel"),
    "pl": ("Hasło", "Adres e-mail", "Telefon", "Numer karty", "Klucz API", "Klucz tajny"),
    "sv": ("Lösenord", "E-postadress", "Telefon", "Kortnummer", "API-nyckel", "Hemlig nyckel"),
    "da": ("Adgangskode", "E-mailadresse", "Telefon", "Kortnummer", "API-nøgle", "Hemmelig nøgle"),
    "nb": ("Passord", "E-postadresse", "Telefon", "Kortnummer", "API-nøkkel", "Hemmelig nøkkel"),
    "fi": ("Salasana", "Sähköposti", "Puhelin", "Kortin numero", "API-avain", "Salainen avain"),
    "cs": ("Heslo", "E-mail", "Telefon", "Číslo karty", "Klíč API", "Tajný klíč"),
    "tr": ("Şifre", "E-posta", "Telefon", "Kart numarası", "API anahtarı", "Gizli anahtar"),
    "ru": ("Пароль", "Эл. почта", "Телефон", "Номер карты", "Ключ API", "Секретный ключ"),
    "uk": ("Пароль", "Електронна пошта", "Телефон", "Номер картки", "Ключ API", "Секретний ключ"),
    "ja": ("パスワード", "メールアドレス", "電話番号", "カード番号", "APIキー", "シークレットキー"),
    "zh": ("密码", "电子邮箱", "电话", "卡号", "API 密钥", "密钥"),
    "ko": ("비밀번호", "이메일", "전화번호", "카드 번호", "API 키", "비밀 키"),
    "ar": ("كلمة المرور", "البريد الإلكتروني", "الهاتف", "رقم البطاقة", "مفتاح API", "المفتاح السري"),
    "he": ("סיסמה", "דואר אלקטרוני", "טלפון", "מספר כרטיס", "מפתח API", "מפתח סודי"),
    "hi": ("पासवर्ड", "ईमेल", "फ़ोन", "कार्ड नंबर", "API कुंजी", "गुप्त कुंजी"),
    "el": ("Κωδικός πρόσβασης", "Email", "Τηλέφωνο", "Αριθμός κάρτας", "Κλειδί API", "Μυστικό κλειδί"),
    "hu": ("Jelszó", "E-mail-cím", "Telefonszám", "Kártyaszám", "API-kulcs", "Titkos kulcs"),
    "ro": ("Parolă", "Adresă de e-mail", "Telefon", "Număr card", "Cheie API", "Cheie secretă"),
    "vi": ("Mật khẩu", "Email", "Số điện thoại", "Số thẻ", "Khóa API", "Khóa bí mật"),
    "id": ("Kata sandi", "Email", "Nomor telepon", "Nomor kartu", "Kunci API", "Kunci rahasia"),
    "th": ("รหัสผ่าน", "อีเมล", "โทรศัพท์", "หมายเลขบัตร", "คีย์ API", "คีย์ลับ"),
}
LANGS = list(LABELS)
PW, MAIL, TEL, CARD, KEY, SECRET = range(6)


def _label(i: int, which: int) -> str:
    """The label `which` in the language of case `i` (cycling, so every kind meets every language)."""
    return LABELS[LANGS[i % len(LANGS)]][which]


SITES = ["accounts.shopwise.de", "portal.banque-horizon.fr", "app.linearflow.io", "mi.cuenta-luz.es",
         "checkout.mercatino.it", "conta.vivaloja.com.br", "mijn.energiek.nl", "konto.sklepik.pl", "dash.nordcloud.se",
         "my.tokyo-rail.jp", "console.hanbit.kr", "admin.sahayata.in", "portal.kuzey.com.tr", "app.crmly.com"]
DOMAINS = ["gmail.com", "outlook.com", "web.de", "gmx.de", "orange.fr", "free.fr", "yahoo.co.jp", "naver.com",
           "libero.it", "wp.pl", "yandex.ru", "seznam.cz", "icloud.com", "proton.me", "hotmail.co.uk", "rediffmail.com",
           "bol.com.br", "telia.com", "mail.ru", "qq.com"]
FIRST = ["anna", "lukas", "chloe", "mateo", "giulia", "joao", "sanne", "kasia", "elin", "mikkel", "aino", "tomas",
         "elif", "dmitri", "olena", "haruto", "wei", "minjun", "omar", "noa", "priya", "eleni", "bence", "ioana",
         "linh",
         "putri", "somchai", "grace"]
LAST = ["schmidt", "dubois", "garcia", "rossi", "silva", "dejong", "nowak", "lindqvist", "jensen", "virtanen",
        "novak", "yilmaz", "ivanov", "kovalenko", "tanaka", "zhang", "kim", "haddad", "cohen", "sharma", "papadopoulos",
        "nagy", "popescu", "nguyen", "santoso", "wongsa", "obrien", "martin"]
WORDS = ["Sommer", "soleil", "primavera", "Katze", "gato", "zielony", "kaffe", "Tiger", "montagne", "kirsikka",
         "mare", "Stern", "lua", "winter", "Falke", "nuvola", "sakura", "tulip", "Kuchen", "berlin"]


def _name(rng: random.Random) -> tuple[str, str]:
    return rng.choice(FIRST), rng.choice(LAST)


def _site(rng: random.Random) -> str:
    return rng.choice(SITES)


def _fid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _csv(field: str) -> str:
    """A CSV field quoted as RFC 4180 quotes it (the corpus' secrets hold no double quote, so they stay whole)."""
    return '"' + field.replace('"', '""') + '"'


# ---- carriers -------------------------------------------------------------------------------------------------

def _split_label(snip: str, secret: str) -> str:
    """OCR puts a label and its value on two lines; only where the value stays whole."""
    split = snip.replace(": ", ":\n", 1)
    return split if secret in split else snip


def t_html_form(rng: random.Random, snip: str, secret: str) -> str:
    return (f'<form id="f-{pick(rng, HEX, 6)}" action="https://{_site(rng)}/account" method="post" '
            f'class="space-y-4" data-step="{rng.randint(1, 5)}">\n  <div class="field" data-testid="field-'
            f'{rng.randint(1, 40)}">\n    {snip}\n  </div>\n  <button type="submit" class="btn btn-primary">Save'
            "</button>\n</form>")


def t_aria_snapshot(rng: random.Random, snip: str, secret: str) -> str:
    return (f'- banner:\n  - link "Home" [ref=e{rng.randint(2, 9)}]\n- main:\n  - heading "Account settings" '
            f"[level=1]\n  - text: {snip}\n  - button \"Save changes\" [ref=e{rng.randint(10, 99)}]")


def t_ocr_screenshot(rng: random.Random, snip: str, secret: str) -> str:
    return (f"[OCR step_{rng.randint(1, 60):03d}.png, {rng.choice(['1280x800', '1920x1080', '1440x900'])}]\n"
            f"{_site(rng)}  |  ☰  Q\nAccount | Security | Billing\n{_split_label(snip, secret)}\n© 2026  Privacy")


def t_playwright_log(rng: random.Random, snip: str, secret: str) -> str:
    return (f"  pw:api => page.goto https://{_site(rng)}/settings started +{rng.randint(1, 900)}ms\n"
            f"  pw:api <= page.goto succeeded +{rng.randint(100, 2000)}ms\n"
            f"  pw:api => locator.textContent(#main) started\n  pw:api <= \"{snip}\"")


def t_selenium_log(rng: random.Random, snip: str, secret: str) -> str:
    return (f"2026-03-{rng.randint(1, 28):02d} 10:{rng.randint(10, 59)}:01,{rng.randint(100, 999)} DEBUG "
            "selenium.webdriver.remote.remote_connection: POST http://localhost:4444/session/"
            f"{pick(rng, HEX, 32)}/element\nINFO agent.step: page text -> {snip}")


def t_xdotool_shell(rng: random.Random, snip: str, secret: str) -> str:
    return (f"$ xdotool search --onlyvisible --class firefox windowactivate --sync\n$ xdotool mousemove "
            f"{rng.randint(100, 1800)} {rng.randint(100, 1000)} click 1\n# typed via xdotool:\n{snip}\n"
            "$ xdotool key Tab")


def t_clipboard(rng: random.Random, snip: str, secret: str) -> str:
    return (f"[clipboard 14:{rng.randint(10, 59)}:{rng.randint(10, 59)}] copied {len(snip)} chars from "
            f"\"{rng.choice(['Google Chrome', 'Firefox', 'Safari', 'Microsoft Edge'])}\":\n{snip}")


def t_terminal_screen(rng: random.Random, snip: str, secret: str) -> str:
    return (f"agent@sandbox:~/work$ history | tail -n 3\n  {rng.randint(100, 999)}  ls -la\n"
            f"agent@sandbox:~/work$ cat notes.txt\n{snip}\nagent@sandbox:~/work$ ▮")


def t_chrome_passwords_csv(rng: random.Random, snip: str, secret: str) -> str:
    site = _site(rng)
    return f"name,url,username,password,note\n{site},https://{site}/login,,,{_csv(snip)}"


def t_devtools_console(rng: random.Random, snip: str, secret: str) -> str:
    return (f"main.{pick(rng, HEX, 8)}.js:{rng.randint(10, 900)} [auth] state restored\n"
            f"> document.querySelector('#settings').innerText\n< '{snip}'")


def t_form_submission(rng: random.Random, snip: str, secret: str) -> str:
    return (f"POST https://{_site(rng)}/account/update {rng.choice([200, 302, 303])} (form submission)\n"
            f"Content-Type: application/x-www-form-urlencoded\nForm Data (view source):\n{snip}")


def t_session_storage(rng: random.Random, snip: str, secret: str) -> str:
    return (f"Application > Session storage > https://{_site(rng)}\nKey                 Value\n"
            f"ui.sidebar          collapsed\nlast_route          /settings/{rng.randint(1, 9)}\n"
            f"form.draft          {snip}")


def t_agent_transcript(rng: random.Random, snip: str, secret: str) -> str:
    return (f"## Step {rng.randint(2, 40)}\n**Thought:** the field is filled, confirm what the page shows.\n"
            f"**Action:** screenshot()\n**Observation:**\n```\n{snip}\n```")


def t_page_markdown(rng: random.Random, snip: str, secret: str) -> str:
    return (f"# Account\n\n[Home](https://{_site(rng)}/) > Settings\n\n## Details\n\n{snip}\n\n"
            f"_Last saved {rng.randint(2, 59)} minutes ago_")


TEXT_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "html_form": t_html_form, "aria_snapshot": t_aria_snapshot, "ocr_screenshot": t_ocr_screenshot,
    "playwright_log": t_playwright_log, "selenium_log": t_selenium_log, "xdotool_shell": t_xdotool_shell,
    "clipboard": t_clipboard, "terminal_screen": t_terminal_screen, "chrome_passwords_csv": t_chrome_passwords_csv,
    "devtools_console": t_devtools_console, "form_submission": t_form_submission,
    "session_storage": t_session_storage, "agent_transcript": t_agent_transcript, "page_markdown": t_page_markdown,
}
"""Fourteen text carriers: prime to 3, so the two thirds of a kind's cases that are text meet every one."""


def j_har_entry(rng: random.Random, snip: str, secret: str) -> str:
    site = _site(rng)
    started = f"2026-04-{rng.randint(1, 28):02d}T09:{rng.randint(10, 59)}:12.{rng.randint(100, 999)}Z"
    entry = {"startedDateTime": started,
             "time": round(rng.uniform(20, 900), 3),
             "request": {"method": "POST", "url": f"https://{site}/api/account", "httpVersion": "h2",
                         "headers": [{"name": "content-type", "value": "application/x-www-form-urlencoded"}],
                         "postData": {"mimeType": "application/x-www-form-urlencoded", "text": snip}},
             "response": {"status": 200, "statusText": "", "content": {"size": rng.randint(40, 4000)}}}
    return _dump({"log": {"version": "1.2", "creator": {"name": "WebInspector", "version": "537.36"},
                          "entries": [entry]}})


def j_cdp_event(rng: random.Random, snip: str, secret: str) -> str:
    return _dump({"method": "Network.requestWillBeSent",
                  "params": {"requestId": f"{rng.randint(1000, 99999)}.{rng.randint(1, 400)}",
                             "loaderId": pick(rng, HEX.upper(), 32), "documentURL": f"https://{_site(rng)}/",
                             "request": {"url": f"https://{_site(rng)}/graphql", "method": "POST",
                                         "headers": {"Accept": "*/*"}, "postData": snip},
                             "timestamp": round(rng.uniform(1000, 90000), 6),
                             "wallTime": round(rng.uniform(1.77e9, 1.78e9), 3), "type": "Fetch"}})


def j_ax_tree(rng: random.Random, snip: str, secret: str) -> str:
    node = rng.randint(10, 900)
    return _dump({"nodes": [{"nodeId": str(node), "ignored": False, "role": {"type": "role", "value": "textbox"},
                             "name": {"type": "computedString", "value": "field"},
                             "value": {"type": "string", "value": snip}, "backendDOMNodeId": node + 40,
                             "parentId": str(node - 1)}]})


def j_local_storage(rng: random.Random, snip: str, secret: str) -> str:
    return _dump({"origin": f"https://{_site(rng)}", "localStorage": {"ui.theme": rng.choice(["dark", "light"]),
                                                                       "draft": snip, "schemaVersion": "3"}})


def j_password_manager(rng: random.Random, snip: str, secret: str) -> str:
    return _dump({"encrypted": False, "items": [{"id": _fid(rng), "type": 1, "name": _site(rng), "notes": snip,
                                                 "favorite": False, "login": {"uris": [{"match": None}]}}]})


def j_computer_use(rng: random.Random, snip: str, secret: str) -> str:
    return _dump({"type": "tool_use", "id": f"toolu_01{pick(rng, ALNUM, 22)}", "name": "computer",
                  "input": {"action": "type", "text": snip}})


def j_playwright_trace(rng: random.Random, snip: str, secret: str) -> str:
    return _dump({"type": "before", "callId": f"call@{rng.randint(10, 400)}",
                  "startTime": round(rng.uniform(1, 9e4), 3),
                  "apiName": "locator.fill", "class": "Frame", "method": "fill",
                  "params": {"selector": f"internal:testid=[data-testid=\"field-{rng.randint(1, 40)}\"s]",
                             "value": snip, "strict": True}})


def j_rrweb_input(rng: random.Random, snip: str, secret: str) -> str:
    return _dump({"type": 3, "data": {"source": 5, "text": snip, "isChecked": False, "id": rng.randint(20, 900)},
                  "timestamp": rng.randint(1_770_000_000_000, 1_780_000_000_000)})


def j_browser_use(rng: random.Random, snip: str, secret: str) -> str:
    return _dump({"model_output": {"current_state": {"evaluation_previous_goal": "Success",
                                                     "next_goal": "Fill the form and submit"},
                                   "action": [{"input_text": {"index": rng.randint(1, 60), "text": snip}}]},
                  "result": [{"is_done": False, "include_in_memory": True}]})


JSON_CARRIERS: dict[str, Callable[[random.Random, str, str], str]] = {
    "har_entry": j_har_entry, "cdp_event": j_cdp_event, "ax_tree": j_ax_tree, "local_storage": j_local_storage,
    "password_manager": j_password_manager, "computer_use": j_computer_use, "playwright_trace": j_playwright_trace,
    "rrweb_input": j_rrweb_input, "browser_use": j_browser_use,
}


# ---- values: shared pieces ------------------------------------------------------------------------------------

Styles = list[tuple[str, Callable[[], str]]]


def _choose(i: int, secret: str, styles: Styles, raw: frozenset[str] = frozenset()) -> Value:
    """Style `i` of `styles` (cycling) for `secret`; styles named in `raw` must stay raw (not re-escaped)."""
    style, make = styles[i % len(styles)]
    return style, secret, make(), style in raw


def _input(name: str, value: str, kind: str = "text") -> str:
    return f'<input type="{kind}" id="{name}" name="{name}" autocomplete="off" value="{value}">'


def _keyed(i: int, secret: str, env: str, which: int = KEY) -> Styles:
    """The ways a browser agent meets a provider key: a settings page, an env line, a header, a typed value."""
    return [
        ("label", lambda: f"{_label(i, which)}: {secret}"),
        ("env", lambda: f"export {env}={secret}"),
        ("input_value", lambda: _input("api-key", secret)),
        ("header", lambda: f"authorization: Bearer {secret}"),
        ("fill", lambda: f"await page.getByLabel('{_label(i, which)}').fill('{secret}')"),
        ("xdotool", lambda: f"# {_label(i, which)}\nxdotool type --delay 40 '{secret}'"),
        ("dotenv", lambda: f"# .env (copied from the dashboard)\n{env}=\"{secret}\""),
        ("aria", lambda: f'textbox "{_label(i, which)}": {secret}'),
    ]


# ---- values: issue kinds --------------------------------------------------------------------------------------

def v_password(rng: random.Random, i: int) -> Value:
    first, last = _name(rng)
    user = f"{first}.{last}{rng.randint(1, 99)}"
    shape = i % 4
    if shape == 0:
        pw = pick(rng, ALNUM + "-_", 15)
    elif shape == 1:
        pw = f"{rng.choice(WORDS).capitalize()}{rng.randint(1970, 2025)}{rng.choice('!?#.$')}"
    elif shape == 2:
        pw = "-".join(rng.choice(WORDS).lower() for _ in range(4)) + str(rng.randint(1, 9))
    else:
        pw = pick(rng, ALNUM + PW_SYMBOLS, 20)
    site = _site(rng)
    return _choose(i, quote(pw, safe="") if i % 11 == 6 else pw, [
        ("label", lambda: f"{_label(i, PW)}: {pw}"),
        ("input_value", lambda: _input("password", pw, "password")),
        ("fill", lambda: f"page.fill('#password', '{pw}')"),
        ("get_by_label", lambda: f"await page.getByLabel('{_label(i, PW)}').fill('{pw}')"),
        ("send_keys", lambda: f'driver.find_element(By.NAME, "passwd").send_keys("{pw}")'),
        ("xdotool", lambda: f"# focus: {_label(i, PW)}\nxdotool type --delay 60 '{pw}'"),
        ("post_data", lambda: f"login={user}&password={quote(pw, safe='')}&remember=on"),
        ("chrome_csv_row", lambda: f"{site},https://{site}/login,{user},{pw},"),
        ("firefox_csv_row", lambda: f'"https://{site}","{user}","{pw}",,"https://{site}","{{{_fid(rng)}}}",'
                                    f"{rng.randint(1_700_000_000_000, 1_770_000_000_000)}"),
        ("aria", lambda: f'textbox "{_label(i, PW)}": {pw}'),
        ("computer_type", lambda: f'{{"action": "type", "text": "{pw}"}}  // into {_label(i, PW)}'),
    ])


def v_aws_secret(rng: random.Random, i: int) -> Value:
    key_id = rng.choice(["AKIA", "ASIA"]) + pick(rng, BASE32, 16)
    secret = pick(rng, B64, 40)
    return _choose(i, secret, [
        ("credentials_file", lambda: f"[default]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}\n"
                                     "region = eu-central-1"),
        ("env", lambda: f"export AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={secret}"),
        ("console_page", lambda: f"Access key\n{key_id}\nSecret access key\n{secret}\nHide"),
        ("keys_csv", lambda: f"Access key ID,Secret access key\n{key_id},{secret}"),
        ("sts_json", lambda: f'{{"Credentials": {{"AccessKeyId": "{key_id}", "SecretAccessKey": "{secret}", '
                             '"Expiration": "2026-05-01T12:00:00Z"}}'),
        ("label", lambda: f"AWS {_label(i, SECRET)}: {secret}"),
        ("input_value", lambda: f'<input id="aws-secret" name="secretAccessKey" value="{secret}" '
                                f'data-access-key-id="{key_id}">'),
        ("xdotool", lambda: f"# AWS secret for {key_id}\nxdotool type '{secret}'"),
        ("boto3", lambda: f"boto3.client('s3', aws_access_key_id='{key_id}', aws_secret_access_key='{secret}')"),
        ("beside_id", lambda: f"{key_id} {secret}"),
    ])


def _webhook(rng: random.Random, i: int) -> tuple[str, str]:
    """(token, URL) for service i % 8, as each service's docs print its incoming-webhook URL."""
    service = i % 8
    if service == 0:
        token = pick(rng, ALNUM, 24)
        return token, f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 10)}/B" \
                      f"{pick(rng, UPPER + string.digits, 10)}/{token}"
    if service == 1:
        token = pick(rng, URLSAFE, 68)
        return token, f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
    if service == 2:
        token = pick(rng, HEX, 32)
        return token, (f"https://{rng.choice(['contoso', 'fabrikam', 'northwind'])}.webhook.office.com/webhookb2/"
                       f"{_fid(rng)}@{_fid(rng)}/IncomingWebhook/{token}/{_fid(rng)}")
    if service == 3:
        token = pick(rng, URLSAFE, 43)
        return token, (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/"
                       f"{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers"
                       f"%2Fmanual%2Frun&sv=1.0&sig={token}")
    if service == 4:
        token = pick(rng, URLSAFE, 43) + "%3D"
        return token, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
                       f"{pick(rng, URLSAFE, 33)}&token={token}")
    if service == 5:
        token = pick(rng, LOWER + string.digits, 7)
        return token, f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{token}/"
    if service == 6:
        token = pick(rng, LOWER + string.digits, 26)
        return token, f"https://chat.{rng.choice(['acme.io', 'example.org', 'team.dev'])}/hooks/{token}"
    token = pick(rng, ALNUM, 48)
    return token, f"https://rocket.{rng.choice(['acme.io', 'team.dev'])}/hooks/{pick(rng, ALNUM, 17)}/{token}"


def v_webhook(rng: random.Random, i: int) -> Value:
    token, url = _webhook(rng, i)
    return _choose(i // 8, token, [
        ("label", lambda: f"Webhook URL: {url}"),
        ("input_readonly", lambda: f'<input readonly aria-label="Webhook URL" value="{url}">'),
        ("curl", lambda: f"curl -X POST -H 'Content-type: application/json' --data '{{\"text\":\"deploy ok\"}}' {url}"),
        ("goto", lambda: f"page.goto('{url}')"),
        ("env", lambda: f"ALERT_WEBHOOK_URL={url}"),
        ("copied_toast", lambda: f"Copied to clipboard ✓\n{url}"),
        ("fetch", lambda: f"await fetch('{url}', {{ method: 'POST', body: JSON.stringify(msg) }})"),
    ])


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, HEX, 64) if i % 3 == 1 else pick(rng, ALNUM, 32))
    return _choose(i, secret, [
        ("dashboard", lambda: f"Signing secret\n{secret}\nRoll secret…"),
        ("cli", lambda: f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                        f"{secret} (^C to quit)"),
        ("env", lambda: f"STRIPE_WEBHOOK_SECRET={secret}"),
        ("input_value", lambda: _input("endpoint-secret", secret)),
        ("construct_event", lambda: f"stripe.webhooks.constructEvent(body, sig, '{secret}')"),
        ("label", lambda: f"Stripe {_label(i, SECRET)}: {secret}"),
        ("aria", lambda: f'text "Signing secret" text "{secret}" button "Reveal"'),
    ])


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = pick(rng, ALNUM + "-_.", rng.randint(12, 24))
    host = rng.choice(["db.internal.acme.io", "10.0.3.17", "pg-prod.cluster-abc.eu-west-1.rds.amazonaws.com",
                       "cluster0.x1y2z.mongodb.net", "redis-12345.c1.eu-central-1.ec2.cloud.redislabs.com"])
    user = rng.choice(["app", "svc_orders", "readonly", "admin", "etl"])
    shape = i % 9
    if shape == 6:
        pw = pick(rng, B64, 86) + "=="
        conn = (f"DefaultEndpointsProtocol=https;AccountName=st{pick(rng, LOWER, 8)};AccountKey={pw};"
                "EndpointSuffix=core.windows.net")
    elif shape == 7:
        pw = pick(rng, B64, 43) + "="
        conn = (f"Endpoint=sb://{pick(rng, LOWER, 8)}.servicebus.windows.net/;SharedAccessKeyName="
                f"RootManageSharedAccessKey;SharedAccessKey={pw}")
    else:
        conn = [f"postgresql://{user}:{pw}@{host}:5432/shop?sslmode=require",
                f"mongodb+srv://{user}:{pw}@{host}/app?retryWrites=true&w=majority",
                f"redis://default:{pw}@{host}:6379/0",
                f"amqps://{user}:{pw}@{host}:5671/prod",
                f"Server=tcp:{host},1433;Database=Orders;User ID={user};Password={pw};Encrypt=True;",
                f"jdbc:mysql://{host}:3306/billing?user={user}&password={pw}&useSSL=true",
                "", "", f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Uid={user};Pwd={pw};"][shape]
    return _choose(i // 9, pw, [
        ("env", lambda: f"DATABASE_URL={conn}"),
        ("label", lambda: f"Connection string: {conn}"),
        ("input_value", lambda: _input("conn", conn)),
        ("code_block", lambda: f"<pre><code>{conn}</code></pre>"),
        ("xdotool", lambda: f"xdotool type '{conn}'"),
        ("settings_json", lambda: f'"ConnectionStrings": {{ "Default": "{conn}" }}'),
    ])


def v_labelled_key(rng: random.Random, i: int) -> Value:
    key = [pick(rng, HEX, 32), pick(rng, ALNUM, 40), _fid(rng), "live_" + pick(rng, ALNUM, 32),
           "key-" + pick(rng, HEX, 32), pick(rng, B64, 43) + "="][i % 6]
    return _choose(i // 6, key, [
        ("label", lambda: f"{_label(i, KEY)}: {key}"),
        ("header", lambda: f"x-api-key: {key}"),
        ("js_config", lambda: f"window.__CONFIG__ = {{ apiKey: '{key}', region: 'eu' }}"),
        ("input_value", lambda: f'<label for="k">{_label(i, KEY)}</label>{_input("k", key)}'),
        ("query", lambda: f"GET /v2/search?q=shoes&api_key={key} HTTP/1.1"),
        ("data_attr", lambda: f'<div id="widget" data-api-key="{key}" data-theme="light"></div>'),
        ("aria", lambda: f'textbox "{_label(i, KEY)}": {key}'),
    ])


def _token(rng: random.Random, i: int) -> str:
    """A provider token to disguise, by its documented prefix."""
    return [crc_token(rng, "ghp_"), f"sk-proj-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}",
            "sk_live_" + pick(rng, ALNUM, 24), f"sk-ant-api03-{pick(rng, URLSAFE, 93)}AA",
            f"xoxb-{rng.randint(10 ** 10, 10 ** 12)}-{rng.randint(10 ** 10, 10 ** 12)}-{pick(rng, ALNUM, 24)}"][i % 5]


def _disguise(rng: random.Random, token: str, how: int) -> str:
    if how == 0:
        cut = rng.randint(4, len(token) - 4)
        return token[:cut] + rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]) + token[cut:]
    if how == 1:
        return "".join(chr(ord(c) + 0xFEE0) for c in token)
    if how == 2:
        return "".join(f"%{ord(c):02X}" for c in token)
    if how == 3:
        return "".join(f"%{ord(c):02X}" if n % 3 == 0 else c for n, c in enumerate(token))
    return "".join(f"\\u{ord(c):04x}" for c in token[:12]) + token[12:]


def v_disguised(rng: random.Random, i: int) -> Value:
    how = (i // 5) % 5
    value = _disguise(rng, _token(rng, i), how)
    style = ["zero_width", "full_width", "percent_all", "percent_some", "json_u_escape"][how]
    snip = [f"{_label(i, KEY)}: {value}", f"xdotool type '{value}'", _input("token", value),
            f'"token": "{value}"', f"Authorization: Bearer {value}"][i % 5]
    return style, value, snip, how == 4


def v_email(rng: random.Random, i: int) -> Value:
    first, last = _name(rng)
    domain = rng.choice(DOMAINS)
    local = [f"{first}.{last}", f"{first[0]}{last}", f"{first}_{last}{rng.randint(1, 99)}",
             f"{first}.{last}+{rng.choice(['shop', 'news', 'bank'])}", f"{last}.{first}{rng.randint(70, 99)}"][i % 5]
    email = f"{local}@{domain}"
    styles: Styles = [
        ("label", lambda: f"{_label(i, MAIL)}: {email}"),
        ("input_value", lambda: _input("email", email, "email")),
        ("signed_in", lambda: f"Signed in as {email}"),
        ("mailto", lambda: f'<a href="mailto:{email}">{first.capitalize()} {last.capitalize()}</a>'),
        ("fill", lambda: f"page.fill('input[type=email]', '{email}')"),
        ("aria", lambda: f'textbox "{_label(i, MAIL)}": {email}'),
        ("post_data", lambda: f"email={quote(email, safe='')}&newsletter=0"),
        ("ocr_space", lambda: f"{_label(i, MAIL)}\n{local}@ {domain}"),
        ("account_menu", lambda: f"{first.capitalize()} {last.capitalize()}\n{email}\nManage your account"),
    ]
    written = {"post_data": quote(email, safe=""), "ocr_space": f"{local}@ {domain}"}
    style = styles[i % len(styles)][0]
    return _choose(i, written.get(style, email), styles)


def _phone_value(i: int, number: str, words: list[str]) -> Value:
    """A phone number beside one of its country's context words, in the ways a form or a page shows it."""
    word = words[i % len(words)]
    return _choose(i // len(words), number, [
        ("label", lambda: f"{word}: {number}"),
        ("input_tel", lambda: f'<label>{word}</label> <input type="tel" name="phone" value="{number}">'),
        ("get_by_label", lambda: f"await page.getByLabel('{word}').fill('{number}')"),
        ("aria", lambda: f'textbox "{word}": {number}'),
        ("tel_link", lambda: f'<a href="tel:{number.replace(" ", "")}">{word} {number}</a>'
                             if number.startswith("+") else f"{word} {number}"),
        ("autofill", lambda: f"Autofill profile\nName: —\n{word}: {number}"),
    ])


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    area = rng.choice(["212", "415", "312", "617", "206", "305", "512", "720", "404", "416", "604", "514", "403",
                       "613", "902"])
    exchange = str(rng.randint(2, 9)) + digits(rng, 2)
    while exchange[1:] == "11" or exchange == "555":
        exchange = str(rng.randint(2, 9)) + digits(rng, 2)
    line = digits(rng, 4)
    number = [f"({area}) {exchange}-{line}", f"{area}-{exchange}-{line}", f"{area}.{exchange}.{line}",
              f"+1 {area} {exchange} {line}", f"1-{area}-{exchange}-{line}", f"+1 ({area}) {exchange}-{line}"][i % 6]
    return _phone_value(i, number, ["Phone", "Mobile phone", "Cell", "Daytime phone", "Téléphone", "Contact number"])


DRAMA = ("07700900", "02079460", "01614960", "01214960", "01314960", "019900", "026191", "035301", "046571",
         "053649", "063998", "03023125", "06990009", "04066969", "08999998")
"""Ranges Ofcom, ARCEP and BNetzA set aside for fiction, as national compact numbers: no real subscriber's."""


def _drama(number: str) -> bool:
    compact = "".join(ch for ch in number.replace("(0)", "") if ch.isdigit())
    for cc in ("44", "33", "49"):
        if number.startswith("+" + cc):
            compact = "0" + compact[len(cc):]
    return compact.startswith(DRAMA)


def _real(make: Callable[[], str]) -> str:
    """`make()` again until its number is outside the fiction ranges."""
    number = make()
    while _drama(number):
        number = make()
    return number


def _uk(rng: random.Random, shape: int) -> str:
    if shape < 3:
        body = f"7{rng.choice('1234579')}{digits(rng, 2)}"
        rest = digits(rng, 6)
        return [f"0{body} {rest}", f"+44 {body} {rest}", f"0{body} {rest[:3]} {rest[3:]}"][shape]
    area, sub = rng.choice([("20", f"{rng.choice('78')}{digits(rng, 3)} {digits(rng, 4)}"),
                            ("161", f"{rng.randint(2, 8)}{digits(rng, 2)} {digits(rng, 4)}"),
                            ("121", f"{rng.randint(2, 8)}{digits(rng, 2)} {digits(rng, 4)}"),
                            ("131", f"{rng.randint(2, 8)}{digits(rng, 2)} {digits(rng, 4)}")])
    return f"0{area} {sub}" if shape == 3 else f"+44 (0){area} {sub}"


def v_phone_uk(rng: random.Random, i: int) -> Value:
    number = _real(lambda: _uk(rng, i % 5))
    return _phone_value(i, number, ["Mobile", "Tel", "Phone number", "Contact number", "Mobile number"])


def _fr(rng: random.Random, shape: int) -> str:
    lead = rng.choice(["6", "7", "1", "2", "3", "4", "5"])
    second = rng.randint(1, 8) if lead in "67" else rng.randint(1, 9)
    pairs = [f"{second}{rng.randint(0, 9)}"] + [digits(rng, 2) for _ in range(3)]
    return [f"0{lead} {' '.join(pairs)}", f"+33 {lead} {' '.join(pairs)}", f"0{lead}.{'.'.join(pairs)}",
            f"0{lead}{''.join(pairs)}", f"+33 (0){lead} {' '.join(pairs)}"][shape]


def v_phone_fr(rng: random.Random, i: int) -> Value:
    number = _real(lambda: _fr(rng, i % 5))
    return _phone_value(i, number, ["Téléphone", "Tél. portable", "Numéro de téléphone", "Mobile", "Tél."])


def _de(rng: random.Random, shape: int) -> str:
    if shape < 3:
        prefix = rng.choice(["151", "152", "160", "162", "170", "171", "172", "175", "176", "177", "179"])
        sub = digits(rng, 8 if prefix.startswith("15") else 7)
        return [f"0{prefix} {sub}", f"+49 {prefix} {sub}", f"0{prefix}/{sub}"][shape]
    area = rng.choice(["30", "89", "40", "221", "69", "711"])
    sub = str(rng.randint(2, 8)) + digits(rng, 6 if len(area) == 2 else 5)
    return f"0{area} {sub}" if shape == 3 else f"+49 (0){area} {group(sub, 2, ' ')}"


def v_phone_de(rng: random.Random, i: int) -> Value:
    number = _real(lambda: _de(rng, i % 5))
    return _phone_value(i, number, ["Telefon", "Mobil", "Handynummer", "Tel.", "Rufnummer", "Telefonnummer"])


def v_phone_in(rng: random.Random, i: int) -> Value:
    shape = i % 5
    if shape < 4:
        mobile = str(rng.randint(6, 9)) + digits(rng, 9)
        number = [f"+91 {mobile[:5]} {mobile[5:]}", f"0{mobile[:5]} {mobile[5:]}", mobile, f"+91-{mobile}"][shape]
    else:
        std, sub = rng.choice([("11", 8), ("22", 8), ("80", 8), ("44", 8), ("33", 8)])
        line = str(rng.randint(2, 6)) + digits(rng, sub - 1)
        number = f"0{std}-{line[:4]} {line[4:]}"
    return _phone_value(i, number, ["Mobile No.", "मोबाइल नंबर", "Contact No.", "फ़ोन", "Mobile", "Phone"])


def v_ssn(rng: random.Random, i: int) -> Value:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    compact = f"{area:03d}{rng.randint(1, 99):02d}{rng.randint(1, 9999):04d}"
    ssn = [f"{compact[:3]}-{compact[3:5]}-{compact[5:]}", f"{compact[:3]} {compact[3:5]} {compact[5:]}",
           compact][i % 3]
    return _choose(i // 3, ssn, [
        ("label", lambda: f"Social Security number: {ssn}"),
        ("input_value", lambda: f'<label for="ssn">SSN</label>{_input("ssn", ssn)}'),
        ("fill", lambda: f"page.fill('#ssn', '{ssn}')"),
        ("aria", lambda: f'textbox "Social Security Number (SSN)": {ssn}'),
        ("tax_form", lambda: f"Taxpayer identification number (SSN or ITIN)\n{ssn}"),
        ("post_data", lambda: f"applicant[ssn]={ssn}&applicant[dob]=1984-07-12"),
        ("xdotool", lambda: f"# SSN field\nxdotool type '{ssn}'"),
    ])


TEST_CARDS = frozenset({"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005",
                        "6011111111111117", "3566002020360505", "4000056655665556", "5105105105105100"})


def _card_number(rng: random.Random, brand: int) -> str:
    head, length = [("4", 16), (f"5{rng.randint(1, 5)}", 16), (str(rng.randint(2221, 2720)), 16),
                    (rng.choice(["34", "37"]), 15), ("6011", 16), (str(rng.randint(3528, 3589)), 16), ("36", 14),
                    ("62", 16), ("65", 16)][brand]
    body = head + digits(rng, length - len(head) - 1)
    return body + luhn_digit(body)


def v_card(rng: random.Random, i: int) -> Value:
    number = _card_number(rng, i % 9)
    while number in TEST_CARDS:
        number = _card_number(rng, i % 9)
    card = [group_card(number, " "), group_card(number, "-"), number][(i // 9) % 3]
    return _choose(i, card, [
        ("label", lambda: f"{_label(i, CARD)}: {card}"),
        ("input_value", lambda: f'<input autocomplete="cc-number" inputmode="numeric" value="{card}">'),
        ("fill", lambda: f"await page.frameLocator('iframe[title=\"Secure card number input frame\"]')"
                         f".getByPlaceholder('1234 1234 1234 1234').fill('{card}')"),
        ("aria", lambda: f'textbox "{_label(i, CARD)}": {card}'),
        ("xdotool", lambda: f"# {_label(i, CARD)}\nxdotool type --delay 80 '{card}'"),
        ("ocr_split", lambda: f"{_label(i, CARD)}\n{card}\nMM / YY   CVC"),
        ("post_data", lambda: f"card[number]={card}&card[exp_month]=0{rng.randint(1, 9)}&card[exp_year]=2029"),
        ("autofill", lambda: f"Payment methods\n{_label(i, CARD)}: {card}\nExpires 0{rng.randint(1, 9)}/29"),
    ])


IBAN_STRUCTURES = {
    "DE": "18n", "FR": "5n5n11c2n", "ES": "20n", "IT": "1a5n5n12c", "NL": "4a10n", "BE": "12n", "AT": "16n",
    "CH": "5n12c", "GB": "4a6n8n", "IE": "4a6n8n", "PL": "24n", "PT": "21n", "SE": "20n", "DK": "14n", "FI": "14n",
    "NO": "11n", "CZ": "20n", "HU": "24n", "RO": "4a16c", "TR": "5n1n16c", "GR": "3n4n16c", "SA": "2n18c",
    "AE": "3n16n", "BR": "8n5n10n1a1c", "LU": "3n13c", "HR": "7n10n",
}
"""BBAN structures from the SWIFT IBAN registry."""


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    account = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, account) + account
    iban = group(compact, 4, " ") if i % 3 else compact
    return _choose(i // 2, iban, [
        ("label", lambda: f"IBAN: {iban}"),
        ("input_value", lambda: f'<label for="iban">IBAN</label>{_input("iban", iban)}'),
        ("sepa_mandate", lambda: f"SEPA-Lastschriftmandat\nIBAN des Zahlungspflichtigen: {iban}"),
        ("fill", lambda: f"page.getByLabel('IBAN').fill('{iban}')"),
        ("aria", lambda: f'textbox "IBAN": {iban}'),
        ("payout", lambda: f"Payout account ({country})\n{iban}\nVerified ✓"),
        ("post_data", lambda: f"payout[iban]={iban}&payout[currency]=EUR"),
    ])


# ---- values: further kinds of the domain ----------------------------------------------------------------------

def v_auth_header(rng: random.Random, i: int) -> Value:
    if i % 2:
        user = rng.choice(["admin", "deploy", "ci-bot", "grafana", "jenkins"])
        cred = base64.b64encode(f"{user}:{pick(rng, ALNUM + '-_.!', rng.randint(10, 20))}".encode()).decode()
        scheme = "Basic"
    else:
        cred = rng.choice(["ya29.a0" + pick(rng, URLSAFE, 150), pick(rng, URLSAFE, 43), "EAA" + pick(rng, ALNUM, 160)])
        scheme = "Bearer"
    return _choose(i // 2, cred, [
        ("har_header", lambda: f'{{"name": "authorization", "value": "{scheme} {cred}"}}'),
        ("curl", lambda: f"curl -H 'Authorization: {scheme} {cred}' https://{_site(rng)}/api/me"),
        ("fetch", lambda: f"fetch(url, {{ headers: {{ Authorization: '{scheme} {cred}' }} }})"),
        ("raw_request", lambda: f"GET /api/v1/me HTTP/1.1\nHost: {_site(rng)}\nAuthorization: {scheme} {cred}"),
        ("proxy", lambda: f"Proxy-Authorization: {scheme} {cred}"),
        ("route_log", lambda: f"[route] continue {{ headers: {{ authorization: '{scheme} {cred}' }} }}"),
    ])


def v_oauth_token(rng: random.Random, i: int) -> Value:
    refresh = i % 3 == 2
    token = ("1//0" + pick(rng, URLSAFE, 100)) if refresh else rng.choice(
        ["ya29.a0" + pick(rng, URLSAFE, 160), pick(rng, URLSAFE, 43), "EAAG" + pick(rng, ALNUM, 180)])
    name = "refresh_token" if refresh else "access_token"
    return _choose(i // 3, token, [
        ("fragment", lambda: f"https://{_site(rng)}/callback#{name}={token}&token_type=Bearer&expires_in=3599"),
        ("token_request", lambda: f"grant_type=refresh_token&{name}={token}&client_id={rng.randint(10 ** 11, 10 ** 12)}"
                                  "-abc.apps.googleusercontent.com"),
        ("storage", lambda: f'oidc.user:https://auth.{_site(rng)}:spa = {{"{name}":"{token}","scope":"openid"}}'),
        ("label", lambda: f"{name.replace('_', ' ').capitalize()}: {token}"),
        ("goto", lambda: f"page.waitForURL('**/callback#{name}={token}&state=xyz')"),
    ])


COOKIES = [("sessionid", lambda r: pick(r, LOWER + string.digits, 32)),
           ("_shop_session", lambda r: f"{pick(r, B64, 120)}--{pick(r, HEX, 40)}"),
           ("PHPSESSID", lambda r: pick(r, "0123456789abcdefghijklmnopqrstuv", 26)),
           ("connect.sid", lambda r: f"s%3A{pick(r, URLSAFE, 32)}.{pick(r, B64, 43)}"),
           ("JSESSIONID", lambda r: pick(r, HEX.upper(), 32)),
           (".AspNetCore.Cookies", lambda r: "CfDJ8" + pick(r, URLSAFE, 180)),
           ("__Secure-next-auth.session-token",
            lambda r: f"eyJhbGciOiJkaXIiLCJlbmMiOiJBMjU2R0NNIn0..{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 200)}."
                      f"{pick(r, URLSAFE, 22)}")]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIES[i % len(COOKIES)]
    value = make(rng)
    site = _site(rng)
    return _choose(i // len(COOKIES), value, [
        ("cookie_header", lambda: f"cookie: theme=dark; {name}={value}; lang=en"),
        ("set_cookie", lambda: f"set-cookie: {name}={value}; Path=/; Secure; HttpOnly; SameSite=Lax"),
        ("document_cookie", lambda: f"> document.cookie\n< 'consent=yes; {name}={value}'"),
        ("cdp_cookie", lambda: f'{{"name": "{name}", "value": "{value}", "domain": ".{site}", "httpOnly": true}}'),
        ("add_cookies", lambda: f"context.add_cookies([{{'name': '{name}', 'value': '{value}', 'url': 'https://{site}'}}])"),
        ("netscape", lambda: f"# Netscape HTTP Cookie File\n.{site}\tTRUE\t/\tTRUE\t1798761600\t{name}\t{value}"),
    ])


def _jwt(rng: random.Random) -> str:
    header = {"alg": rng.choice(["HS256", "ES256"]), "typ": "JWT"}
    now = rng.randint(1_770_000_000, 1_780_000_000)
    claims = {"sub": str(rng.randint(10 ** 5, 10 ** 9)), "iss": f"https://auth.{_site(rng)}/", "aud": "web",
              "iat": now, "exp": now + 3600, "sid": _fid(rng)}
    sig = rng.randbytes(32 if header["alg"] == "HS256" else 64)
    return ".".join(b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, claims)) \
        + "." + b64url(sig)


def v_jwt(rng: random.Random, i: int) -> Value:
    token = _jwt(rng)
    return _choose(i, token, [
        ("local_storage", lambda: f"localStorage.setItem('access_token', '{token}')"),
        ("bearer", lambda: f"authorization: Bearer {token}"),
        ("cookie", lambda: f"cookie: id_token={token}; path=/"),
        ("query", lambda: f"wss://{_site(rng)}/socket?token={token}"),
        ("form_post", lambda: f"id_token={token}&state={pick(rng, HEX, 16)}"),
        ("label", lambda: f"Token: {token}"),
        ("session_storage", lambda: f"msal.idtoken    {token}"),
    ])


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, rng.choice([16, 32]))
    issuer = rng.choice(["GitHub", "Stripe", "AWS", "Cloudflare", "Dropbox", "Okta"])
    account = rng.choice(["ops-admin", "deploy", "finance-team", "root"])
    spaced = group(seed.lower(), 4, " ")
    uri = f"otpauth://totp/{issuer}:{account}?secret={seed}&issuer={issuer}&algorithm=SHA1&digits=6&period=30"
    styles: Styles = [
        ("otpauth_uri", lambda: uri),
        ("setup_key", lambda: f"Can't scan the QR code? Enter this setup key:\n{spaced}"),
        ("qr_decoded", lambda: f"zbarimg qr.png\nQR-Code:{uri}"),
        ("label", lambda: f"{_label(i, SECRET)} (TOTP): {seed}"),
        ("input_value", lambda: _input("totp_secret", seed)),
        ("pyotp", lambda: f"pyotp.TOTP('{seed}').now()"),
    ]
    return _choose(i, spaced if styles[i % len(styles)][0] == "setup_key" else seed, styles)


def v_recovery_code(rng: random.Random, i: int) -> Value:
    code = [f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}", f"{digits(rng, 4)} {digits(rng, 4)}",
            "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(5)),
            f"A3-{pick(rng, UPPER + string.digits, 6)}-{pick(rng, UPPER + string.digits, 6)}-"
            + "-".join(pick(rng, UPPER + string.digits, 5) for _ in range(4))][i % 4]
    word = ["Recovery code", "Backup code", "Wiederherstellungscode", "Code de récupération", "Código de recuperación",
            "Secret Key", "リカバリーコード"][i % 7]
    return _choose(i // 4, code, [
        ("label", lambda: f"{word}: {code}"),
        ("fill", lambda: f"page.getByLabel('{word}').fill('{code}')"),
        ("codes_page", lambda: f"Save your {word.lower()}s\n{code}\nDownload  Print  Copy"),
        ("input_value", lambda: f'<label>{word}</label>{_input("recovery_code", code)}'),
        ("xdotool", lambda: f"# {word}\nxdotool type '{code}'"),
    ])


def _pem_body(der: bytes, width: int) -> str:
    return group(base64.b64encode(der).decode(), width, "\n")


def v_private_key(rng: random.Random, i: int) -> Value:
    shape = i % 3
    if shape == 2:
        seed, check = rng.randbytes(32), rng.randbytes(4)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        body = _pem_body(openssh_ed25519_blob(seed, public, check, b"agent@sandbox"), 70)
        marker = "OPENSSH PRIVATE KEY"
    else:
        key = ec.derive_private_key(rng.getrandbits(255) | 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.PKCS8 if shape == 0 else serialization.PrivateFormat.TraditionalOpenSSL
        der = key.private_bytes(serialization.Encoding.DER, fmt, serialization.NoEncryption())
        body = _pem_body(der, 64)
        marker = "PRIVATE KEY" if shape == 0 else "EC PRIVATE KEY"
    pem = f"-----BEGIN {marker}-----\n{body}\n-----END {marker}-----"
    return _choose(i // 3, body, [
        ("cat", lambda: f"$ cat ~/.ssh/deploy_key\n{pem}"),
        ("textarea", lambda: f'<textarea name="private_key" rows="8">{pem}</textarea>'),
        ("computer_type", lambda: pem),
        ("clipboard", lambda: f"Copied key:\n{pem}"),
    ])


def v_github_token(rng: random.Random, i: int) -> Value:
    prefix = ["ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"][i % 6]
    token = (f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}" if prefix == "github_pat_"
             else crc_token(rng, prefix))
    styles = _keyed(i // 6, token, "GH_TOKEN") + [
        ("clone_url", lambda: f"git clone https://x-access-token:{token}@github.com/acme/app.git"),
        ("copy_now", lambda: f"Make sure to copy your personal access token now. You won't be able to see it again!"
                             f"\n{token}"),
    ]
    return _choose(i // 6, token, styles)


def v_openai_key(rng: random.Random, i: int) -> Value:
    token = [f"sk-proj-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}",
             f"sk-{pick(rng, ALNUM, 20)}T3BlbkFJ{pick(rng, ALNUM, 20)}",
             f"sk-svcacct-{pick(rng, URLSAFE, 74)}T3BlbkFJ{pick(rng, URLSAFE, 74)}"][i % 3]
    return _choose(i // 3, token, _keyed(i, token, "OPENAI_API_KEY"))


def v_anthropic_key(rng: random.Random, i: int) -> Value:
    token = f"sk-ant-api03-{pick(rng, URLSAFE, 93)}AA"
    styles = _keyed(i, token, "ANTHROPIC_API_KEY")
    styles[3] = ("header", lambda: f"x-api-key: {token}")
    return _choose(i, token, styles)


def v_slack_token(rng: random.Random, i: int) -> Value:
    team, user = rng.randint(10 ** 10, 10 ** 13), rng.randint(10 ** 10, 10 ** 13)
    token = [f"xoxb-{team}-{user}-{pick(rng, ALNUM, 24)}",
             f"xoxp-{team}-{user}-{rng.randint(10 ** 10, 10 ** 13)}-{pick(rng, HEX, 32)}",
             f"xapp-1-A{pick(rng, UPPER + string.digits, 10)}-{team}-{pick(rng, HEX, 64)}"][i % 3]
    return _choose(i // 3, token, _keyed(i, token, "SLACK_BOT_TOKEN"))


def v_google_api_key(rng: random.Random, i: int) -> Value:
    key = "AIza" + pick(rng, URLSAFE, 35)
    return _choose(i, key, [
        ("maps_script", lambda: f'<script async src="https://maps.googleapis.com/maps/api/js?key={key}'
                                '&callback=initMap"></script>'),
        ("firebase_config", lambda: f'const firebaseConfig = {{ apiKey: "{key}", authDomain: '
                                    '"shop-42.firebaseapp.com" }};'),
        ("har_query", lambda: f"GET https://www.googleapis.com/youtube/v3/search?part=snippet&q=cats&key={key}"),
        ("label", lambda: f"{_label(i, KEY)}: {key}"),
        ("created_dialog", lambda: f"API key created\nYour API key\n{key}\nRestrict key"),
    ])


def v_stripe_key(rng: random.Random, i: int) -> Value:
    key = [f"sk_live_{pick(rng, ALNUM, 24)}", f"sk_live_51{pick(rng, ALNUM, 97)}", f"rk_live_51{pick(rng, ALNUM, 97)}",
           f"sk_test_51{pick(rng, ALNUM, 97)}"][i % 4]
    return _choose(i // 4, key, _keyed(i, key, "STRIPE_SECRET_KEY", SECRET))


# ---- national ids (outside the target) ------------------------------------------------------------------------

def _birth(rng: random.Random) -> tuple[int, int, int]:
    """(year, month, day) of a birth date, days up to 28 so every month holds them."""
    return rng.randint(1940, 2008), rng.randint(1, 12), rng.randint(1, 28)


def id_fr_nir(rng: random.Random) -> str:
    year, month, _day = _birth(rng)
    dept = rng.choice([n for n in range(1, 96) if n != 20])
    body = f"{rng.randint(1, 2)}{year % 100:02d}{month:02d}{dept:02d}{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}"
    key = 97 - int(body) % 97
    return f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:]} {key:02d}"


def id_se_pnr(rng: random.Random) -> str:
    year, month, day = _birth(rng)
    body = f"{year % 100:02d}{month:02d}{day:02d}{rng.randint(1, 999):03d}"
    return f"{body[:6]}-{body[6:]}{luhn_digit(body)}"


def id_fi_hetu(rng: random.Random) -> str:
    year, month, day = _birth(rng)
    date, serial = f"{day:02d}{month:02d}{year % 100:02d}", f"{rng.randint(2, 899):03d}"
    return date + ("-" if year < 2000 else "A") + serial + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(date + serial) % 31]


def id_no_fnr(rng: random.Random) -> str:
    while True:
        year, month, day = _birth(rng)
        year = min(year, 1999)
        base = [int(c) for c in f"{day:02d}{month:02d}{year % 100:02d}{rng.randint(0, 499):03d}"]
        k1 = (11 - sum(w * d for w, d in zip([3, 7, 6, 1, 8, 9, 4, 5, 2], base, strict=True)) % 11) % 11
        k2 = (11 - sum(w * d for w, d in zip([5, 4, 3, 2, 7, 6, 5, 4, 3, 2], base + [k1], strict=True)) % 11) % 11
        if k1 < 10 and k2 < 10:
            return "".join(map(str, base + [k1, k2]))


def id_cn_ric(rng: random.Random) -> str:
    year, month, day = _birth(rng)
    area = rng.choice(["110101", "310104", "440305", "330106", "510107", "420111", "320102", "610113"])
    body = f"{area}{year}{month:02d}{day:02d}{rng.randint(1, 999):03d}"
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return body + "10X98765432"[sum(w * int(d) for w, d in zip(weights, body, strict=True)) % 11]


def id_be_nrn(rng: random.Random) -> str:
    year, month, day = _birth(rng)
    body = f"{year % 100:02d}{month:02d}{day:02d}{rng.randint(1, 997):03d}"
    check = 97 - int(("2" if year >= 2000 else "") + body) % 97
    return f"{body[:2]}.{body[2:4]}.{body[4:6]}-{body[6:]}.{check:02d}"


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "fr_nir": (id_fr_nir, ["N° de sécurité sociale", "NIR", "Numéro de sécurité sociale"]),
    "se_pnr": (id_se_pnr, ["Personnummer", "Personnr"]),
    "fi_hetu": (id_fi_hetu, ["Henkilötunnus", "HETU"]),
    "no_fnr": (id_no_fnr, ["Fødselsnummer", "Fnr."]),
    "cn_ric": (id_cn_ric, ["公民身份号码", "身份证号"]),
    "be_nrn": (id_be_nrn, ["Rijksregisternummer", "Numéro de registre national", "INSZ"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """The value generator of national id `kind`: its number beside its label in the country's language."""
    make, words = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        number, word = make(rng), words[i % len(words)]
        return _choose(i // len(words), number, [
            ("label", lambda: f"{word}: {number}"),
            ("input_value", lambda: f"<label>{word}</label>{_input('national_id', number)}"),
            ("fill", lambda: f"page.getByLabel('{word}').fill('{number}')"),
            ("ocr_split", lambda: f"{word}\n{number}"),
        ])
    return gen


# ---- kinds and cases ------------------------------------------------------------------------------------------

KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "auth_header": v_auth_header, "oauth_token": v_oauth_token, "session_cookie": v_session_cookie, "jwt": v_jwt,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code, "private_key": v_private_key,
    "github_token": v_github_token, "openai_key": v_openai_key, "anthropic_key": v_anthropic_key,
    "slack_token": v_slack_token, "google_api_key": v_google_api_key, "stripe_key": v_stripe_key,
    **{kind: national_id(kind) for kind in IDS}}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    _style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[i % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip, secret), False


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ----------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random) -> str:
    body = "4" + digits(rng, 14)
    return group(body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10), 4, " ")


def _toll_free(r: random.Random) -> str:
    return r.choice([f"Customer service: 1-800-{r.randint(200, 999)}-{digits(r, 4)} (toll-free)",
                     f"Freephone 0800 {digits(r, 3)} {digits(r, 4)}",
                     f"Service client : 0 800 {digits(r, 2)} {digits(r, 2)} {digits(r, 2)} (appel gratuit)",
                     f"Kostenlose Hotline: 0800 {digits(r, 7)}",
                     f"Toll free: 1800-{digits(r, 3)}-{digits(r, 4)}"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_id": lambda r: f'<input id="email-input-{pick(r, HEX, 6)}" data-testid="login-password" '
                            f'class="form-control" aria-describedby="hint-{r.randint(1, 99)}">',
    "css_selector": lambda r: f"div.checkout > form#payment-{r.randint(1, 9)} input[name=\"cardnumber\"]"
                              f":nth-child({r.randint(1, 6)})",
    "xpath": lambda r: f'//*[@id="root"]/div[{r.randint(1, 5)}]/form/div[{r.randint(1, 12)}]/input[@type="password"]',
    "coordinates": lambda r: f'{{"action": "left_click", "coordinate": [{r.randint(0, 1919)}, {r.randint(0, 1079)}]}}'
                             f" then mouse_move({r.randint(0, 1919)}, {r.randint(0, 1079)})",
    "pixel_size": lambda r: f"viewport {r.choice(['1280x720', '1366x768', '1920x1080'])} deviceScaleFactor "
                            f"{r.choice([1, 2])}, screenshot {r.randint(800, 3840)}x{r.randint(600, 2160)} px",
    "timestamp": lambda r: f'"timestamp": {r.uniform(1000, 99999):.6f}, "wallTime": {r.uniform(1.77e9, 1.78e9):.3f},'
                           f' started 2026-0{r.randint(1, 9)}-{r.randint(10, 28)}T1{r.randint(0, 9)}:0{r.randint(0, 9)}'
                           f":{r.randint(10, 59)}.{r.randint(100, 999)}Z",
    "request_id": lambda r: f'requestId "{r.randint(1000, 99999)}.{r.randint(1, 900)}" loaderId '
                            f'"{pick(r, HEX.upper(), 32)}" frameId "{pick(r, HEX.upper(), 32)}"',
    "cache_bust": lambda r: f'<script src="/static/js/main.{pick(r, HEX, 8)}.chunk.js?v='
                            f'{r.randint(10 ** 9, 10 ** 10)}"></script>'
                            f'<link href="/assets/app-{pick(r, HEX, 20)}.css">',
    "sri_hash": lambda r: f'<script src="https://cdn.jsdelivr.net/npm/bootstrap@5.3.{r.randint(0, 3)}/dist/js/'
                          f'bootstrap.min.js" integrity="sha384-{pick(r, B64, 64)}" crossorigin="anonymous"></script>',
    "csrf_field_name": lambda r: r.choice(['<input type="hidden" name="csrfmiddlewaretoken">',
                                           "Access-Control-Allow-Headers: Content-Type, X-CSRF-Token, X-Requested-With",
                                           'form field "authenticity_token" missing (422)',
                                           '<meta name="csrf-param" content="authenticity_token">',
                                           f"expected header X-XSRF-TOKEN on POST /api/{r.randint(1, 9)}"]),
    "placeholder": lambda r: r.choice(['<input type="email" placeholder="you@example.com">',
                                       '<input type="password" placeholder="••••••••">',
                                       'textbox "Password" [placeholder="Enter your password"]',
                                       "Card number  MM / YY  CVC", 'placeholder="name@company.com"',
                                       "API key: ********************************", "Passwort: ********"]),
    "masked": lambda r: r.choice([f"Visa •••• {digits(r, 4)}", f"j•••@{r.choice(DOMAINS)}",
                                  f"+44 •••• ••{digits(r, 4)}", f"IBAN DE•• •••• •••• •••• ••{digits(r, 2)} ••",
                                  f"sk-...{pick(r, ALNUM, 4)}", f"SSN ***-**-{digits(r, 4)}"]),
    "version_string": lambda r: f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/"
                                f"{r.randint(120, 134)}.0.{r.randint(6000, 6999)}.{r.randint(10, 200)} Safari/537.36; "
                                f"playwright {r.randint(1, 1)}.{r.randint(40, 50)}.{r.randint(0, 3)}",
    "service_number": _toll_free,
    "luhn_invalid": lambda r: f"Reference {_luhn_bad(r)} (not a card)",
    "order_number": lambda r: f"Order #{r.randint(100, 999)}-{digits(r, 7)}-{digits(r, 7)} placed, invoice "
                              f"INV-{r.randint(2024, 2026)}-{digits(r, 6)}",
    "tracking_number": lambda r: r.choice([f"UPS 1Z{pick(r, UPPER + string.digits, 6)}{digits(r, 10)}",
                                           f"DHL JJD{digits(r, 18)}", f"FedEx tracking {digits(r, 12)}",
                                           f"USPS 9400 {digits(r, 4)} {digits(r, 4)} {digits(r, 4)} {digits(r, 4)} "
                                           f"{digits(r, 2)}"]),
    "key_combo": lambda r: r.choice(["xdotool key ctrl+shift+t", '{"action": "key", "text": "ctrl+l"}',
                                     "page.keyboard.press('Meta+A')", "xdotool key --clearmodifiers Return",
                                     f"press Tab x{r.randint(2, 9)}"]),
    "aria_ref": lambda r: f'- textbox "Password" [ref=e{r.randint(2, 99)}]\n- button "Sign in" '
                          f'[ref=e{r.randint(100, 199)}]\n- link "Forgot password?" [ref=e{r.randint(200, 299)}]',
    "http_meta": lambda r: f"status {r.choice([200, 204, 304])} encodedDataLength {r.randint(100, 99999)} "
                           f'content-length: {r.randint(100, 99999)} etag: '
                           f'W/"{r.randint(16, 4000):x}-{pick(r, HEX, 27)}" z-index: 2147483647',
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), some inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
