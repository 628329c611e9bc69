"""The fifty-first blind redaction corpus: nonprofits, unions, clubs, churches and event ticketing in Central and
Eastern Europe and Central Asia, what an agent that runs donations, memberships and events sees. Written from the
formats' public specifications by someone who read neither the detection rules nor the other corpora (only the
twenty-first's interface).

Carriers (the `form` head): payment-gateway notifications (Przelewy24 `transaction/register` and status
notifications, PayU `OrderNotify`, Stripe events, Adyen standard notifications, YooKassa `payment.succeeded`,
LiqPay callbacks once decoded), donor CRM records (CiviCRM APIv4 results, CRM CSV exports), newsletter tools
(Mailchimp list members, MailerLite webhooks), ticketing (pretix-style check-in scans, scanner logs), volunteer
sign-ups (Typeform `form_response` webhooks, plain form e-mails), membership rolls, grant applications (JSON and
text), SEPA (GoCardless-style mandates, pain.008 `<Ustrd>`, MT940 `:86:` lines), board minutes in Markdown, the
agent's messages to members in their language, chat transcripts, `.env` files, YAML settings, gateway logs and
agent tool results. About a third is JSON carried (`is_json`); labels come in Polish, Czech, Slovak, Hungarian,
Romanian, Bulgarian, Serbian (Cyrillic and Latin), Croatian, Slovenian, Macedonian, Ukrainian, Russian,
Belarusian, Lithuanian, Latvian, Estonian, Georgian, Armenian, Kazakh, Uzbek, Azerbaijani, Mongolian, English,
German, French and Hindi.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Mir 2200-2204,
Amex 34/37, Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the
SWIFT IBAN registry's BBAN structures for PL CZ SK HU RO BG RS HR SI UA LT LV EE GE AZ KZ BY MD DE AT (MOD 97-10);
SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000); phones, the numbering plans of NANP,
Ofcom, ARCEP, BNetzA and TRAI/DoT (outside Ofcom's drama ranges and NANP's 555) with context words in each country's
language; AWS, IAM's AKIA/ASIA ids and 40-character secrets; webhooks as Slack, Discord, Power Automate (Teams),
Google Chat, Mattermost and Zapier document them (the secret is the token segment or `sig`/`token` value only);
Telegram Bot API tokens (`<bot id>:<35 characters>`); Stripe `whsec_`, `sk_live_`/`sk_test_`/`rk_live_`;
Przelewy24 CRC (16 hex) and API keys (32 hex), PayU second keys and OAuth `client_secret` (32 hex), YooKassa
secret keys (`live_`/`test_` and 43 characters), LiqPay private keys, Adyen HMAC keys (64 hex) and `AQE` API keys;
Mailchimp API keys (32 hex and `-usN`), SendGrid (`SG.` 22.43), Brevo (`xkeysib-`); GitHub `ghp_` (CRC32);
JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750; PayU's access tokens are UUIDs, Google's `ya29.`);
session cookies as Django, PHP, Express (`connect.sid=s%3A...`), Drupal (`SESS<hex>`) and Laravel set them;
TOTP seeds (RFC 4226/6238 base32, Google Authenticator's `otpauth://` key URI); recovery codes as GitHub and
Google print them; PEM PKCS#8 EC and OpenSSH Ed25519 private keys. Connection strings: PostgreSQL/MySQL/MongoDB/
Redis/AMQP URIs, ADO.NET, JDBC and Azure Storage/Service Bus (the secret is the password or key only).
Kaspi publishes no merchant-key format, so its keys come only under a label (`labelled_key`).

National ids (outside the target): Polish PESEL (weights 1-3-7-9, month + 20 after 2000), Czech/Slovak rodne
cislo (divisible by 11, women's month + 50), Bulgarian EGN (weights 2-4-8-5-10-9-7-3-6 mod 11), Serbian JMBG (mod
11, region 71-89), Romanian CNP (key 279146358279), Ukrainian RNOKPP (days since 31.12.1899, weights -1 5 7 9 4 6
10 5 7), Kazakh IIN (two weight rounds mod 11), Lithuanian asmens kodas and Estonian isikukood (the same two
rounds).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a header's credential, a PEM key's base64 body, one recovery code). Near misses are what this
domain holds that is neither secret nor personal: element ids, CSS selectors, XPath, venue coordinates, pixel
sizes, timestamps, request ids, cache-busting file hashes, CSRF field NAMES, placeholders and input hints, masked
values, version strings, the EU's harmonised 116 numbers and 112, Luhn-invalid numbers, order numbers, UPU S10
parcel numbers, organisations' registry numbers (KRS, ICO, a foundation's adoszam), gateway object ids (Stripe
`pi_`/`evt_`, payment UUIDs without their key), scripture references, seat labels and amounts: none of them
identifies a person or opens anything.
"""

from __future__ import annotations

import base64
import datetime as dt
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

SEED = 51
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"pl_pesel", "cz_rodne_cislo", "bg_egn", "rs_jmbg", "ro_cnp", "ua_rnokpp", "kz_iin",
                            "lt_asmens_kodas", "ee_isikukood"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
UPPER_DIGITS = string.ascii_uppercase + string.digits


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


# ---- small helpers --------------------------------------------------------------------------------------------

def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _stamp(rng: random.Random) -> str:
    """An ISO 8601 UTC time in 2024-2025."""
    when = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=rng.randrange(730 * 86400))
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _birth(rng: random.Random, first: int = 1940, last: int = 2008) -> dt.date:
    """A birth date between `first` and `last` (inclusive years)."""
    start = dt.date(first, 1, 1)
    return start + dt.timedelta(days=rng.randrange((dt.date(last, 12, 31) - start).days + 1))


NAMES = ["Agnieszka Nowak", "Jan Dvořák", "Zsófia Kiss", "Ioana Popescu", "Георги Иванов", "Марко Петровић",
         "Ivana Horvat", "Оксана Коваленко", "Дмитрий Смирнов", "Аляксандр Шэўчык", "Rūta Kazlauskienė",
         "Jānis Bērziņš", "Kadri Tamm", "ნინო ბერიძე", "Անի Հակոբյան", "Айгерім Сейтқали", "Dilnoza Karimova",
         "Leyla Məmmədova", "Батбаяр Дорж", "Martina Kováčová", "Tomasz Wiśniewski", "Petra Novotná"]
ORGS = ["Fundacja Pomocy Sąsiedzkiej", "Spolek Přátel Šumavy", "Magyar Kórus Egyesület", "Asociația Salvați Dunărea",
        "Читалище „Светлина“", "Klub planinara Velebit", "ГО «Світло надії»", "Bažnyčios bendruomenė",
        "Eesti Laulupeo Sõbrad", "Kazakh Youth Union", "OZ Zelená Bratislava", "Związek Zawodowy Nauczycieli"]


# ---- carriers: JSON ---------------------------------------------------------------------------------------------

def c_p24(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"merchantId": rng.randint(100000, 999999), "posId": rng.randint(100000, 999999),
                  "sessionId": f"darowizna-{rng.randint(10000, 99999)}", "amount": rng.choice([2000, 5000, 10000]),
                  "currency": "PLN", "description": snip, "country": "PL", "language": "pl",
                  "urlReturn": "https://fundacja.example.pl/dziekujemy", "timeLimit": 15})


def c_payu(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"order": {"orderId": pick(rng, UPPER_DIGITS, 20),
                            "extOrderId": f"SKL-{rng.randint(1000, 9999)}", "orderCreateDate": _stamp(rng),
                            "merchantPosId": str(rng.randint(300000, 499999)), "description": snip,
                            "currencyCode": "PLN", "totalAmount": str(rng.choice([1500, 3000, 12000])),
                            "status": "COMPLETED"}, "localReceiptDateTime": _stamp(rng)})


def c_stripe(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": "evt_" + pick(rng, ALNUM, 24), "object": "event", "type": "checkout.session.completed",
                  "data": {"object": {"id": "cs_live_" + pick(rng, ALNUM, 40), "mode": "subscription",
                                      "amount_total": rng.choice([500, 1000, 2500]), "currency": "eur",
                                      "metadata": {"campaign": "zima-2024", "donor_note": snip}}}})


def c_adyen(rng: random.Random, snip: str, _s: str) -> str:
    item = {"eventCode": "AUTHORISATION", "success": "true", "pspReference": pick(rng, UPPER_DIGITS, 16),
            "merchantAccountCode": "ChoirFoundationECOM", "merchantReference": f"TIX-{rng.randint(10000, 99999)}",
            "amount": {"value": rng.choice([1900, 4500]), "currency": "CZK"},
            "additionalData": {"shopperStatement": "Koncert", "memo": snip}}
    return _dump({"live": "false", "notificationItems": [{"NotificationRequestItem": item}]})


def c_yookassa(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "notification", "event": "payment.succeeded",
                  "object": {"id": _uuid(rng), "status": "succeeded", "paid": True,
                             "amount": {"value": f"{rng.choice([300, 500, 1000])}.00", "currency": "RUB"},
                             "description": snip, "metadata": {"campaign": "pomoshch"}}})


def c_liqpay(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"action": "pay", "payment_id": rng.randint(10 ** 9, 10 ** 10), "status": "success",
                  "version": 3, "amount": rng.choice([100, 200, 500]), "currency": "UAH",
                  "order_id": f"donate_{rng.randint(1000, 9999)}", "description": snip})


def c_civicrm(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"values": [{"id": rng.randint(100, 99999), "contact_type": "Individual",
                              "display_name": rng.choice(NAMES), "source": "Donation form",
                              "details": snip}], "entity": "Contact", "action": "get", "count": 1})


def c_mailchimp(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": pick(rng, HEX, 32), "status": "subscribed", "list_id": pick(rng, HEX, 10),
                  "language": rng.choice(["pl", "cs", "hu", "ro", "uk"]),
                  "merge_fields": {"FNAME": rng.choice(NAMES).split()[0], "NOTE": snip}, "tags_count": 2})


def c_mailerlite(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"events": [{"type": "subscriber.created", "data": {"subscriber": {
        "id": rng.randint(10 ** 16, 2 * 10 ** 16), "status": "active", "fields": {"note": snip}}}}]})


def c_checkin(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"status": "ok", "require_attention": False, "position": {
        "id": rng.randint(1000, 99999), "order": pick(rng, UPPER_DIGITS, 5),
        "item": rng.randint(10, 99), "attendee_name": rng.choice(NAMES),
        "answers": [{"question": rng.randint(1, 9), "answer": snip}]}, "list": {"id": rng.randint(1, 20)}})


def c_typeform(rng: random.Random, snip: str, _s: str) -> str:
    field = {"id": pick(rng, ALNUM, 12), "type": "long_text", "ref": "volunteer_notes"}
    return _dump({"event_type": "form_response", "form_response": {
        "form_id": pick(rng, ALNUM, 8), "submitted_at": _stamp(rng),
        "answers": [{"type": "text", "text": snip, "field": field}]}})


def c_grant_json(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"application_id": f"ACF-{rng.randint(2021, 2025)}-{rng.randint(100, 999)}",
                  "programme": rng.choice(["Active Citizens Fund", "CERV", "Erasmus+ KA2", "Visegrad Fund"]),
                  "applicant": rng.choice(ORGS), "section": rng.choice(["budget", "team", "annexes"]),
                  "text": snip})


def c_tool(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"role": "tool", "tool_call_id": "call_" + pick(rng, ALNUM, 24),
                  "name": rng.choice(["crm_lookup", "read_inbox", "fetch_gateway_log", "read_sheet"]),
                  "content": snip})


def c_roll(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"member_no": f"{rng.randint(1, 40):02d}/{rng.randint(1, 9999):04d}", "chapter": rng.choice(ORGS),
                  "status": rng.choice(["active", "lapsed", "honorary"]), "dues_paid_until": "2025-12-31",
                  "notes": snip})


def c_mandate(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"mandates": {"id": "MD" + pick(rng, UPPER_DIGITS, 12),
                               "scheme": "sepa_core", "status": "active",
                               "reference": f"DAR-{rng.randint(100000, 999999)}", "metadata": {"note": snip}}})


# ---- carriers: text ---------------------------------------------------------------------------------------------

def c_crm_csv(rng: random.Random, snip: str, _s: str) -> str:
    row = f"{rng.randint(100, 9999)};{rng.choice(NAMES)};{rng.choice([50, 100, 250])};{snip}"
    return "contact_id;name;last_gift;notes\n" + row


def c_gateway_log(rng: random.Random, snip: str, _s: str) -> str:
    tag = rng.choice(["p24-client", "payu-sdk", "stripe-webhook", "adyen-notify", "liqpay", "yookassa"])
    return f"{_stamp(rng)} INFO [{tag}] req={_uuid(rng)[:8]} {snip}"


MINUTES = ["Protokół z posiedzenia zarządu", "Zápis z jednání výboru", "Jegyzőkönyv az elnökségi ülésről",
           "Proces-verbal al ședinței consiliului", "Протокол от заседание на УС", "Протокол засідання правління",
           "Valdybos posėdžio protokolas", "Juhatuse koosoleku protokoll", "Board minutes"]


def c_minutes(rng: random.Random, snip: str, _s: str) -> str:
    return f"## {rng.choice(MINUTES)} {rng.randint(1, 28)}.{rng.randint(1, 12)}.2024\n\n1. ...\n2. {snip}\n3. ..."


GREET = {"pl": ("Dzień dobry,", "Dziękujemy za wsparcie!"), "cs": ("Dobrý den,", "Děkujeme za podporu!"),
         "sk": ("Dobrý deň,", "Ďakujeme za podporu!"), "hu": ("Kedves Tagunk!", "Köszönjük a támogatást!"),
         "ro": ("Bună ziua,", "Vă mulțumim pentru sprijin!"), "bg": ("Здравейте,", "Благодарим за подкрепата!"),
         "sr": ("Поштовани,", "Хвала на подршци!"), "sr-Latn": ("Poštovani,", "Hvala na podršci!"),
         "hr": ("Poštovani,", "Hvala na potpori!"), "sl": ("Pozdravljeni,", "Hvala za podporo!"),
         "mk": ("Почитувани,", "Ви благодариме за поддршката!"), "uk": ("Добрий день,", "Дякуємо за підтримку!"),
         "ru": ("Здравствуйте,", "Спасибо за поддержку!"), "be": ("Добры дзень,", "Дзякуй за падтрымку!"),
         "lt": ("Laba diena,", "Dėkojame už paramą!"), "lv": ("Labdien,", "Paldies par atbalstu!"),
         "et": ("Tere,", "Aitäh toetuse eest!"), "ka": ("გამარჯობა,", "გმადლობთ მხარდაჭერისთვის!"),
         "hy": ("Բարև Ձեզ,", "Շնորհակալություն աջակցության համար։"), "kk": ("Сәлеметсіз бе,", "Қолдауыңызға рахмет!"),
         "uz": ("Assalomu alaykum,", "Qo'llab-quvvatlaganingiz uchun rahmat!"),
         "az": ("Salam,", "Dəstəyiniz üçün təşəkkür edirik!"), "mn": ("Сайн байна уу,", "Дэмжлэгт баярлалаа!"),
         "en": ("Hello,", "Thank you for your support!"), "de": ("Hallo,", "Danke für Ihre Unterstützung!")}


def c_member_msg(rng: random.Random, snip: str, _s: str) -> str:
    hello, thanks = GREET[rng.choice(list(GREET))]
    return f"{hello}\n\n{snip}\n\n{thanks}\n— {rng.choice(ORGS)}"


def c_sepa_xml(rng: random.Random, snip: str, _s: str) -> str:
    return (f"<DrctDbtTxInf><PmtId><EndToEndId>E2E{digits(rng, 10)}</EndToEndId></PmtId>"
            f"<InstdAmt Ccy=\"EUR\">{rng.choice([5, 10, 20])}.00</InstdAmt>"
            f"<RmtInf><Ustrd>{snip}</Ustrd></RmtInf></DrctDbtTxInf>")


def c_mt940(rng: random.Random, snip: str, _s: str) -> str:
    return (f":61:24{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}C{rng.randint(10, 900)},00NTRFNONREF\n"
            f":86:166^00PRZELEW PRZYCHODZACY^20{snip}")


def c_newsletter(rng: random.Random, snip: str, _s: str) -> str:
    head = rng.choice(["# Biuletyn", "# Zpravodaj", "# Hírlevél", "# Бюлетин", "# Розсилка", "# Uudiskiri"])
    return f"{head} {rng.randint(1, 12)}/2024\n\n> draft, do not send\n\n{snip}\n\n[Wypisz się]({{{{unsubscribe}}}})"


def c_volunteer(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: Nowe zgłoszenie wolontariusza #{rng.randint(100, 999)}\n\nImię i nazwisko: "
            f"{rng.choice(NAMES)}\nDyżur: {rng.choice(['sobota', 'niedziela'])}\nUwagi: {snip}")


def c_grant_txt(rng: random.Random, snip: str, _s: str) -> str:
    sec = rng.choice(["Section 4. Budget", "Część C. Zespół projektu", "Část 3: Rozpočet", "Розділ 5. Команда"])
    return f"GRANT APPLICATION {rng.choice(ORGS)}\n{sec}\n{snip}\n(continued)"


def c_scan_log(rng: random.Random, snip: str, _s: str) -> str:
    return f"SCAN {_stamp(rng)} gate={rng.choice('ABCD')} device=scanner-{rng.randint(1, 9)} result=valid note={snip}"


def c_env(rng: random.Random, snip: str, _s: str) -> str:
    return f"# donations site, {rng.choice(['prod', 'staging'])}\nAPP_ENV=production\nLOCALE=pl_PL\n{snip}\n"


def c_chat(rng: random.Random, snip: str, _s: str) -> str:
    who = rng.choice(["koordynator", "koordinátor", "скарбник", "treasurer", "pastor", "sekretarz"])
    return f"[{rng.randint(8, 22):02d}:{rng.randint(0, 59):02d}] {who}: {snip}"


def c_yaml(rng: random.Random, snip: str, _s: str) -> str:
    return f"crm:\n  sync_interval: {rng.choice([5, 15, 60])}m\n  notes: |\n    {snip}\n"


def c_email(rng: random.Random, snip: str, _s: str) -> str:
    subj = rng.choice(["Re: darowizna", "Re: členský příspěvek", "Re: tagdíj", "Re: квиток", "Re: membership"])
    return f"Subject: {subj}\nDate: {_stamp(rng)}\n\n{snip}\n\n-- \n{rng.choice(ORGS)}"


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "p24_register": c_p24, "payu_notify": c_payu, "stripe_event": c_stripe, "adyen_notify": c_adyen,
    "yookassa_notify": c_yookassa, "liqpay_callback": c_liqpay, "civicrm_api4": c_civicrm,
    "mailchimp_member": c_mailchimp, "mailerlite_hook": c_mailerlite, "checkin_scan": c_checkin,
    "typeform_hook": c_typeform, "grant_json": c_grant_json, "agent_tool": c_tool, "membership_roll": c_roll,
    "sepa_mandate": c_mandate}
TEXT_CARRIERS: dict[str, Carrier] = {
    "crm_csv": c_crm_csv, "gateway_log": c_gateway_log, "board_minutes": c_minutes, "member_msg": c_member_msg,
    "pain008_xml": c_sepa_xml, "mt940": c_mt940, "newsletter_md": c_newsletter, "volunteer_mail": c_volunteer,
    "grant_txt": c_grant_txt, "scanner_log": c_scan_log, "env_file": c_env, "chat": c_chat, "yaml": c_yaml,
    "email": c_email}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Put a value's snippet in a carrier: every third in a JSON one (unless raw_only), each carrier in turn."""
    _style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[(i // 3) % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[(i + i // 3) % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip, secret), False


# ---- the issue's kinds ------------------------------------------------------------------------------------------

PW_LABELS = ["Hasło", "Heslo", "Jelszó", "Parolă", "Парола", "Лозинка", "Lozinka", "Geslo", "Лозинка за најава",
             "Пароль", "Пароль", "Пароль", "Slaptažodis", "Parole", "Parool", "პაროლი", "Գաղտնաբառ", "Құпия сөз",
             "Parol", "Şifrə", "Нууц үг", "Password", "Passwort", "Kennwort"]
PW_SENTENCES = ["Twoje tymczasowe hasło to {v} — zmień je po zalogowaniu.", "Vaše nové heslo do portálu: {v}",
                "Az ideiglenes jelszava: {v}", "Parola temporară pentru platformă este {v}",
                "Тимчасовий пароль до кабінету члена спілки: {v}", "Временный пароль от личного кабинета — {v}",
                "Wi-Fi в салата на читалището: мрежа Chitalishte, парола {v}", "Bendruomenės Wi-Fi slaptažodis {v}",
                "Login do panelu bramki: skarbnik / hasło {v}", "Admin login for the ticket shop: admin, pw {v}",
                "Das Passwort für den Vereins-Account lautet {v}", "ლოგინი: volunteer2, პაროლი: {v}"]
PW_WORDS = ["Kościół", "Zlatá", "Dunărea", "Світло", "Sõprus", "Balaton", "Velebit", "Чайка", "Ąžuolas", "Tbilisi",
            "Ararat", "Altai", "Jesień", "Hvězda", "Лавина", "Koncert", "Chór", "Bratstvo", "Vasara", "Meža"]


def password_value(rng: random.Random) -> str:
    """A password as people set them: word + year or digits + a symbol, sometimes random characters."""
    style = rng.randrange(4)
    if style == 0:
        return f"{rng.choice(PW_WORDS)}{rng.randint(1950, 2025)}{rng.choice('!#$%&*?')}"
    if style == 1:
        return f"{rng.choice(PW_WORDS).lower()}.{rng.choice(PW_WORDS)}{digits(rng, 2)}"
    if style == 2:
        return pick(rng, ALNUM + "!#%*-_", rng.randint(12, 20))
    return f"{rng.choice(PW_WORDS)}_{pick(rng, ALNUM, 6)}"


def v_password(rng: random.Random, i: int) -> Value:
    v = password_value(rng)
    if i % 3 == 0:
        return "sentence", v, rng.choice(PW_SENTENCES).format(v=v), False
    label = rng.choice(PW_LABELS)
    sep = rng.choice([": ", " = ", " — ", ":\t"])
    return "label", v, f"{label}{sep}{v}", False


def aws_secret_value(rng: random.Random) -> str:
    return pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret = aws_secret_value(rng)
    key_id = rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)
    forms = [("ini", f"[tickets-backup]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}"),
             ("env", f"AWS_ACCESS_KEY_ID={key_id}\nAWS_SECRET_ACCESS_KEY={secret}"),
             ("pair", f"{key_id} / {secret}"),
             ("sentence", f"Klucze do S3 z archiwum zdjęć: {key_id} i sekret {secret}"),
             ("csv", f"User name,Access key ID,Secret access key\nbackup-bot,{key_id},{secret}"),
             ("label", f"Секретний ключ AWS: {secret}"),
             ("export", f"export AWS_SECRET_ACCESS_KEY=\"{secret}\"")]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    kind = i % 6
    if kind == 0:
        token = pick(rng, ALNUM, 24)
        url = (f"https://hooks.slack.com/services/T{pick(rng, UPPER_DIGITS, 10)}/"
               f"B{pick(rng, UPPER_DIGITS, 10)}/{token}")
        style = "slack"
    elif kind == 1:
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{token}"
        style = "discord"
    elif kind == 2:
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"
               f"&sig={token}")
        style = "power_automate"
    elif kind == 3:
        token = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
               f"{pick(rng, URLSAFE, 33)}&token={quote(token, safe='')}")
        style = "google_chat"
    elif kind == 4:
        token = pick(rng, LOWER + string.digits, 26)
        url = f"https://chat.{rng.choice(['zwiazek', 'spolek', 'klub'])}.example.org/hooks/{token}"
        style = "mattermost"
    else:
        token = pick(rng, LOWER + string.digits, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(1000000, 9999999)}/{token}/"
        style = "zapier"
    lead = rng.choice(["Webhook do kanału #darowizny:", "Notifikace na Slack:", "Webhook URL:", "Вебхук для чату:",
                       "POST", "Értesítési webhook:", "Webhook-ul pentru voluntari:", "webhook_url ="])
    return style, token, f"{lead} {url}", False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    v = "whsec_" + pick(rng, ALNUM, 32)
    forms = [f"STRIPE_WEBHOOK_SECRET={v}", f"Signing secret: {v}", f"endpoint_secret = '{v}'",
             f"stripe listen → Ready! Your webhook signing secret is {v} (^C to quit)",
             f"Sekret podpisu webhooka Stripe: {v}", f"Stripe webhook secret (prod): {v}"]
    return "whsec", v, forms[i % len(forms)], False


def v_connection_string(rng: random.Random, i: int) -> Value:
    user = rng.choice(["crm", "civicrm", "tickets", "donations_app", "pretix", "wp_fundacja"])
    host = rng.choice(["db.fundacja.internal", "10.0.3.12", "pg-prod.spolek.cz", "mysql.club.local"])
    pw = pick(rng, ALNUM, rng.randint(12, 24))
    key = pick(rng, B64, 86) + "=="
    sas = pick(rng, B64, 43) + "="
    forms = [("postgres", pw, f"postgresql://{user}:{pw}@{host}:5432/crm"),
             ("mysql", pw, f"mysql://{user}:{pw}@{host}:3306/civicrm"),
             ("mongo", pw, f"mongodb+srv://{user}:{pw}@cluster0.ab1cd.mongodb.net/tickets?retryWrites=true"),
             ("redis", pw, f"redis://:{pw}@{host}:6379/0"),
             ("amqp", pw, f"amqp://{user}:{pw}@{host}:5672/%2F"),
             ("adonet", pw, f"Server={host};Database=Members;User Id={user};Password={pw};Encrypt=True"),
             ("jdbc", pw, f"jdbc:postgresql://{host}:5432/crm?user={user}&password={pw}&ssl=true"),
             ("azure_storage", key, "DefaultEndpointsProtocol=https;AccountName=fundacjadocs;"
                                    f"AccountKey={key};EndpointSuffix=core.windows.net"),
             ("service_bus", sas, "Endpoint=sb://tickets-bus.servicebus.windows.net/;"
                                  f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sas}")]
    style, secret, conn = forms[i % len(forms)]
    lead = rng.choice(["DATABASE_URL=", "ConnectionStrings__Crm=", "Połączenie z bazą: ", "conn = ",
                       "Строка подключения: ", ""])
    return style, secret, lead + conn, False


KEY_LABELS = ["API key: {v}", "Klucz API: {v}", "API klíč: {v}", "API kľúč: {v}", "API kulcs: {v}",
              "Cheie API: {v}", "API ключ: {v}", "Ключ API: {v}", "API ključ: {v}", "API raktas: {v}",
              "API atslēga: {v}", "API võti: {v}", "API გასაღები: {v}", "API բանալի: {v}", "API кілті: {v}",
              "API kaliti: {v}", "API açarı: {v}", "API түлхүүр: {v}", "API-Schlüssel: {v}", "Kaspi merchant key: {v}",
              "X-Api-Key: {v}", "access key = {v}", "Token API do systemu biletowego: {v}", "apiKey: \"{v}\""]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    shape = i % 4
    v = [pick(rng, ALNUM, 32), pick(rng, HEX, 40), _uuid(rng), pick(rng, URLSAFE, 48)][shape]
    return ["alnum32", "hex40", "uuid", "urlsafe48"][shape], v, KEY_LABELS[i % len(KEY_LABELS)].format(v=v), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def v_disguised(rng: random.Random, i: int) -> Value:
    base = [password_value(rng), "sk_live_" + pick(rng, ALNUM, 24), aws_secret_value(rng),
            crc_token(rng, "ghp_")][i % 4]
    way = (i // 4) % 4
    if way == 0:
        at = rng.randint(2, len(base) - 2)
        v = base[:at] + rng.choice(ZW) + base[at:]
        return "zero_width", v, f"{rng.choice(PW_LABELS)}: {v}", False
    if way == 1:
        v = _fullwidth(base)
        return "fullwidth", v, f"{rng.choice(KEY_LABELS).format(v=v)}", False
    if way == 2:
        v = "".join(f"%{ord(c):02X}" for c in base)
        return "percent", v, f"https://panel.example.org/login?user=skarbnik&password={v}", False
    v = "".join(f"\\u{ord(c):04x}" for c in base)
    return "json_u", v, f"{{\"secret\": \"{v}\"}}", True


FIRST = ["anna.kowalska", "jan.novak", "kiss.zsofi", "ioana.pop", "g.ivanov", "marko.petrovic", "ivana.h",
         "oksana.k", "d.smirnov", "ruta.kaz", "janis.b", "kadri.tamm", "nino.beridze", "ani.hakobyan", "aigerim.s",
         "dilnoza", "leyla.m", "batbayar", "t.wisniewski", "petra.n"]
MAIL_DOMAINS = ["wp.pl", "onet.pl", "o2.pl", "seznam.cz", "centrum.sk", "freemail.hu", "yahoo.ro", "abv.bg",
                "gmail.com", "ukr.net", "mail.ru", "yandex.kz", "inbox.lv", "gmx.de", "tut.by", "posteo.de",
                "fundacja-pomocy.org.pl", "zvaz.sk"]
IDN_MAILS = ["марія@приклад.укр", "иван@почта.рф", "zsófia@példa.hu", "łucja@przykład.pl", "ნინო@მაგალითი.გე",
             "Šárka@příklad.cz", "ана@пример.срб"]
MAIL_CTX = ["e-mail", "Adres e-mail", "E-mailová adresa", "e-mail cím", "Adresa de e-mail", "Имейл", "Е-пошта",
            "E-pošta", "Е-пошта за контакт", "Ел. пошта", "Эл. почта", "Электронная пошта", "El. paštas", "E-pasts",
            "E-post", "ელ-ფოსტა", "Էլ. փոստ", "Электрондық пошта", "Elektron pochta", "E-poçt", "И-мэйл",
            "email", "E-Mail"]


def v_email(rng: random.Random, i: int) -> Value:
    if i % 10 == 9:
        v = IDN_MAILS[(i // 10) % len(IDN_MAILS)]
        style = "idn"
    else:
        v = f"{rng.choice(FIRST)}{rng.choice(['', str(rng.randint(1, 99))])}@{rng.choice(MAIL_DOMAINS)}"
        style = "plain"
    forms = [f"{rng.choice(MAIL_CTX)}: {v}", f"<{v}>", f"mailto:{v}", f"Darczyńca {v} prosi o potwierdzenie.",
             f"Volunteer signed up as {v}", f"{rng.choice(MAIL_CTX)} — {v}"]
    return style, v, forms[i % len(forms)], False


PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "{c} — {n} (po 17:00)", "({c} {n})", "{c}:\t{n}"]


def phone_case(rng: random.Random, i: int, forms: list[tuple[str, Callable[[random.Random], str]]],
               ctx: list[str]) -> Value:
    style, make = forms[i % len(forms)]
    n = make(rng)
    return style, n, rng.choice(PHONE_TEMPLATES).format(c=rng.choice(ctx), n=n), False


NANP_AREAS = ["773", "312", "708", "630", "718", "347", "212", "917", "201", "973", "216", "313", "412", "416",
              "647", "905", "514", "438", "604", "778", "403", "780"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    while True:
        exchange = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if exchange[1:] != "11" and exchange != "555":
            return rng.choice(NANP_AREAS), exchange, digits(rng, 4)


US_FORMS = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
            ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("plus1", lambda r: "+1 {} {} {}".format(*_nanp(r))),
            ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r)))]
US_CTX = ["phone", "cell", "mobile", "call", "tel.", "reach me at", "home phone", "daytime phone"]


def _uk_mobile(r: random.Random) -> str:
    while True:
        number = f"07{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"
        if not number.startswith("07700 900"):
            return number


def _uk_city(r: random.Random, code: str) -> str:
    while True:
        local = f"{r.randint(2, 9)}{digits(r, 2)}"
        if local != "496":
            return f"{code} {local} {digits(r, 4)}"


def _london(r: random.Random) -> str:
    while True:
        first = r.choice("378")
        rest = digits(r, 7)
        if not (first == "7" and rest.startswith("946")):
            return f"020 {first}{rest[:3]} {rest[3:]}"


UK_FORMS = [("mobile", _uk_mobile), ("london", _london),
            ("manchester", lambda r: _uk_city(r, "0161")), ("birmingham", lambda r: _uk_city(r, "0121")),
            ("intl_mobile", lambda r: "+44 " + _uk_mobile(r)[1:]),
            ("intl_london", lambda r: "+44 (0)" + _london(r)[1:])]
UK_CTX = ["mobile", "phone", "tel", "ring me on", "landline", "contact number"]


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    return [first] + [digits(r, 2) for _ in range(4)]


FR_FORMS = [("mobile_space", lambda r: "0" + " ".join(_fr_pairs(r, r.choice("67")))),
            ("paris_dot", lambda r: "01." + ".".join(digits(r, 2) for _ in range(4))),
            ("geo_space", lambda r: f"0{r.choice('2345')} " + " ".join(digits(r, 2) for _ in range(4))),
            ("intl", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))),
            ("intl_paren", lambda r: "+33 (0)1 " + " ".join(digits(r, 2) for _ in range(4)))]
FR_CTX = ["tél.", "téléphone", "portable", "joignable au", "numéro de téléphone", "mobile"]

DE_FORMS = [("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
            ("munich", lambda r: f"089 {r.randint(2, 9)}{digits(r, 6)}"),
            ("hamburg_slash", lambda r: f"040/{r.randint(2, 9)}{digits(r, 6)}"),
            ("mobile", lambda r: f"01{r.choice(['51', '52', '57', '60', '62', '70', '71', '76'])} {digits(r, 8)}"),
            ("intl_mobile", lambda r: f"+49 1{r.choice(['51', '60', '71', '76'])} {digits(r, 7)}"),
            ("intl_geo", lambda r: f"+49 (0)30 {r.randint(2, 9)}{digits(r, 7)}")]
DE_CTX = ["Telefon", "Tel.", "Handy", "Mobil", "Rufnummer", "erreichbar unter", "Festnetz"]

IN_FORMS = [("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
            ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
            ("national_zero", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
            ("bare", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
            ("delhi", lambda r: f"011-2{digits(r, 7)}"),
            ("mumbai", lambda r: f"022 2{digits(r, 3)} {digits(r, 4)}")]
IN_CTX = ["mobile", "mobile no.", "contact no.", "phone", "मोबाइल", "फ़ोन नंबर", "संपर्क", "WhatsApp"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, US_CTX)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, UK_CTX)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, FR_CTX)


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, DE_CTX)


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, IN_CTX)


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


SSN_CTX = ["SSN", "Social Security No.", "SSN (W-9)", "donor SSN for the US matching gift", "Soc. Sec. #",
           "Numer SSN darczyńcy z USA"]


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_value(rng)
    style, v = [("dash", f"{a}-{g}-{s}"), ("space", f"{a} {g} {s}"), ("compact", f"{a}{g}{s}")][i % 3]
    return style, v, f"{rng.choice(SSN_CTX)}: {v}", False


CARD_BRANDS = ["visa", "mc", "mc2", "mir", "amex", "discover", "discover65", "jcb", "diners", "unionpay"]


def card_number(rng: random.Random, brand: str) -> str:
    prefix, length = {"visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16),
                      "mc2": (str(rng.randint(2221, 2720)), 16), "mir": (str(rng.randint(2200, 2204)), 16),
                      "amex": (rng.choice(["34", "37"]), 15), "discover": ("6011", 16), "discover65": ("65", 16),
                      "jcb": (str(rng.randint(3528, 3589)), 16), "diners": ("36", 14),
                      "unionpay": ("62", 16)}[brand]
    body = prefix + digits(rng, length - len(prefix) - 1)
    return body + luhn_digit(body)


CARD_CTX = ["Numer karty", "Číslo karty", "Kártyaszám", "Numărul cardului", "Номер на карта", "Број картице",
            "Broj kartice", "Номер картки", "Номер карты", "Kortelės numeris", "Kartes numurs", "Kaardi number",
            "ბარათის ნომერი", "Քարտի համար", "Карта нөмірі", "Karta raqami", "Kart nömrəsi", "Картын дугаар",
            "Card number", "Kartennummer"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    sep = ["", " ", "-"][(i // len(CARD_BRANDS)) % 3]
    v = group_card(number, sep) if sep else number
    return f"{brand}_{'compact' if not sep else 'grouped'}", v, f"{rng.choice(CARD_CTX)}: {v}", False


IBAN_BBAN = {"PL": "24n", "CZ": "20n", "SK": "20n", "HU": "24n", "RO": "4a16c", "BG": "4a4n2n8c", "RS": "18n",
             "HR": "17n", "SI": "15n", "UA": "6n19c", "LT": "16n", "LV": "4a13c", "EE": "16n", "GE": "2a16n",
             "AZ": "4a20c", "KZ": "3n13c", "BY": "4c4n16c", "MD": "2c18c", "DE": "18n", "AT": "16n"}
IBAN_CTX = ["IBAN", "Numer rachunku", "Číslo účtu (IBAN)", "Számlaszám", "Cont IBAN", "Банкова сметка",
            "Рачун", "Račun", "Рахунок IBAN", "Счёт", "Sąskaitos nr.", "Konta numurs", "Arvelduskonto",
            "ანგარიში", "Hesab", "ИИК", "Kontonummer (IBAN)", "Bank account"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, b) + b
    v = group(compact, 4, " ") if (i // len(IBAN_BBAN)) % 2 else compact
    return f"{country.lower()}_{'grouped' if ' ' in v else 'compact'}", v, f"{rng.choice(IBAN_CTX)}: {v}", False


# ---- more kinds this domain holds --------------------------------------------------------------------------------

def _rand_bytes(rng: random.Random, n: int) -> bytes:
    return rng.getrandbits(8 * n).to_bytes(n, "big")


def v_jwt(rng: random.Random, i: int) -> Value:
    header = b64url(_dump({"alg": rng.choice(["HS256", "RS256"]), "typ": "JWT"}).encode())
    iat = 1704067200 + rng.randrange(63072000)
    claims = {"sub": str(rng.randint(1000, 999999)), "role": rng.choice(["member", "volunteer", "treasurer"]),
              "org": rng.choice(["fundacja-pomocy", "spolek-sumava", "chitalishte"]), "iat": iat, "exp": iat + 3600}
    v = f"{header}.{b64url(_dump(claims).encode())}.{b64url(_rand_bytes(rng, 32))}"
    forms = [("bearer", f"Authorization: Bearer {v}"), ("cookie", f"Cookie: access_token={v}; lang=pl"),
             ("label", f"Токен доступу до кабінету: {v}"), ("query", f"https://bilety.example.pl/scan?jwt={v}"),
             ("field", f"id_token={v}")]
    style, snip = forms[i % len(forms)]
    return style, v, snip, False


def _express_sid(rng: random.Random) -> str:
    return f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, ALNUM, 43)}"


def _laravel(rng: random.Random) -> str:
    payload = {"iv": base64.b64encode(_rand_bytes(rng, 16)).decode(),
               "value": base64.b64encode(_rand_bytes(rng, 48)).decode(), "mac": pick(rng, HEX, 64), "tag": ""}
    return quote(base64.b64encode(_dump(payload).encode()).decode(), safe="")


def v_session_cookie(rng: random.Random, i: int) -> Value:
    shape = i % 6
    if shape == 0:
        v = pick(rng, LOWER + string.digits, 32)
        return "django", v, f"Cookie: sessionid={v}; django_language=pl", False
    if shape == 1:
        v = pick(rng, string.digits + "abcdefghijklmnopqrstuv", 26)
        return "php", v, f"Set-Cookie: PHPSESSID={v}; path=/; HttpOnly", False
    if shape == 2:
        v = _express_sid(rng)
        return "express", v, f"Cookie: connect.sid={v}", False
    if shape == 3:
        v = pick(rng, URLSAFE, 43)
        return "drupal", v, f"Set-Cookie: SESS{pick(rng, HEX, 32)}={v}; path=/; secure; HttpOnly", False
    if shape == 4:
        v = _laravel(rng)
        return "laravel", v, f"Cookie: laravel_session={v}; locale=cs", False
    v = f"skarbnik%7C{1735689600 + rng.randrange(10 ** 7)}%7C{pick(rng, ALNUM, 43)}%7C{pick(rng, HEX, 64)}"
    return "wordpress", v, f"Cookie: wordpress_logged_in_{pick(rng, HEX, 32)}={v}", False


def v_bearer_token(rng: random.Random, i: int) -> Value:
    shape = i % 5
    v = [_uuid(rng), "ya29.a0" + pick(rng, URLSAFE, 150), "EAA" + pick(rng, ALNUM, 180), pick(rng, HEX, 32),
         pick(rng, ALNUM, 40)][shape]
    style = ["payu_uuid", "google_ya29", "facebook_page", "mailchimp_oauth", "opaque"][shape]
    forms = [f"Authorization: Bearer {v}",
             f"{{\"access_token\":\"{v}\",\"token_type\":\"bearer\",\"expires_in\":43199}}",
             f"curl -H 'Authorization: Bearer {v}' https://api.example.org/v1/members",
             f"access_token={v}&token_type=Bearer"]
    return style, v, forms[(i // 5) % len(forms)], False


def v_basic_auth(rng: random.Random, i: int) -> Value:
    user = rng.choice(["skarbnik", "admin", "bilety", "api", "wolontariusz"])
    pw = password_value(rng)
    shape = i % 3
    if shape == 0:
        v = base64.b64encode(f"{user}:{pw}".encode()).decode()
        return "header", v, f"Authorization: Basic {v}", False
    if shape == 1:
        return "curl_u", pw, f"curl -u {user}:'{pw}' https://crm.example.org/api/contacts", False
    return "python_auth", pw, f"requests.get(url, auth=(\"{user}\", \"{pw}\"))", False


P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def _pem_body(pem: str) -> str:
    lines = pem.strip().splitlines()
    return "\n".join(lines[1:-1])


def v_private_key(rng: random.Random, i: int) -> Value:
    if i % 2 == 0:
        key = ec.derive_private_key(rng.randrange(1, P256_ORDER), ec.SECP256R1())
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
        style = "pkcs8_ec"
    else:
        seed = _rand_bytes(rng, 32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, _rand_bytes(rng, 4), b"deploy@fundacja")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----\n"
        style = "openssh_ed25519"
    lead = rng.choice(["Klucz do serwera z bazą darczyńców:", "deploy key:", "Приватний ключ:", ""])
    return style, _pem_body(pem), f"{lead}\n{pem}", False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = base64.b32encode(_rand_bytes(rng, rng.choice([10, 20]))).decode().rstrip("=")
    shape = i % 4
    if shape == 0:
        return "otpauth", seed, (f"otpauth://totp/Fundacja:skarbnik?secret={seed}&issuer=Fundacja"
                                 "&algorithm=SHA1&digits=6&period=30"), False
    if shape == 1:
        v = group(seed.lower(), 4, " ")
        return "grouped", v, f"Klucz konfiguracyjny: {v}", False
    if shape == 2:
        return "label", seed, f"{rng.choice(['TOTP seed', '2FA secret', 'Секрет 2FA', 'Klíč 2FA'])}: {seed}", False
    return "env", seed, f"OTP_SECRET={seed}", False


RECOVERY_CTX = ["Kod odzyskiwania", "Záložní kód", "Helyreállítási kód", "Cod de recuperare", "Резервен код",
                "Резервний код", "Резервный код", "Atsarginis kodas", "Rezerves kods", "Varukood", "Recovery code",
                "Wiederherstellungscode", "სარეზერვო კოდი", "Backup code"]


def v_recovery_code(rng: random.Random, i: int) -> Value:
    shape = i % 3
    if shape == 0:
        v = f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
        style = "github"
    elif shape == 1:
        v = f"{digits(rng, 4)} {digits(rng, 4)}"
        style = "google"
    else:
        v = f"{pick(rng, LOWER + string.digits, 4)}-{pick(rng, LOWER + string.digits, 4)}"
        style = "discord"
    return style, v, f"{rng.choice(RECOVERY_CTX)}: {v}", False


def v_stripe_key(rng: random.Random, i: int) -> Value:
    head = ["sk_live_", "sk_test_", "rk_live_"][i % 3]
    v = head + (pick(rng, ALNUM, 24) if i % 2 else "51" + pick(rng, ALNUM, 97))
    forms = [f"STRIPE_SECRET_KEY={v}", f"Stripe.api_key = \"{v}\"", f"curl https://api.stripe.com/v1/charges -u {v}:",
             f"Klucz tajny Stripe: {v}", f"stripe: {{ secretKey: '{v}' }}"]
    return head.rstrip("_"), v, forms[(i // 3) % len(forms)], False


def v_gateway_secret(rng: random.Random, i: int) -> Value:
    shape = i % 8
    if shape == 0:
        v = pick(rng, HEX, 16)
        return "p24_crc", v, f"{rng.choice(['P24_CRC=', 'Klucz do CRC: ', 'crc: '])}{v}", False
    if shape == 1:
        v = pick(rng, HEX, 32)
        return "p24_api", v, f"Przelewy24 klucz do raportów (API): {v}", False
    if shape == 2:
        v = pick(rng, HEX, 32)
        return "payu_md5", v, f"PayU drugi klucz (MD5): {v}", False
    if shape == 3:
        v = pick(rng, HEX, 32)
        body = f"grant_type=client_credentials&client_id={rng.randint(300000, 499999)}&client_secret={v}"
        return "payu_oauth", v, body, False
    if shape == 4:
        v = rng.choice(["live_", "test_"]) + pick(rng, URLSAFE, 43)
        return "yookassa", v, f"curl https://api.yookassa.ru/v3/payments -u {rng.randint(100000, 999999)}:{v}", False
    if shape == 5:
        v = rng.choice(["", "sandbox_"]) + pick(rng, ALNUM, 40)
        return "liqpay", v, f"LIQPAY_PUBLIC_KEY=i{digits(rng, 11)}\nLIQPAY_PRIVATE_KEY={v}", False
    if shape == 6:
        v = pick(rng, "0123456789ABCDEF", 64)
        return "adyen_hmac", v, f"Adyen HMAC key (webhook): {v}", False
    v = "AQE" + pick(rng, B64, 100) + "="
    return "adyen_api", v, f"X-API-Key: {v}", False


def v_newsletter_key(rng: random.Random, i: int) -> Value:
    shape = i % 3
    if shape == 0:
        v = f"{pick(rng, HEX, 32)}-us{rng.randint(1, 21)}"
        return "mailchimp", v, rng.choice([f"MAILCHIMP_API_KEY={v}", f"Mailchimp API key: {v}"]), False
    if shape == 1:
        v = f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"
        return "sendgrid", v, rng.choice([f"SENDGRID_API_KEY={v}", f"sg = SendGridAPIClient('{v}')"]), False
    v = f"xkeysib-{pick(rng, HEX, 64)}-{pick(rng, ALNUM, 16)}"
    return "brevo", v, rng.choice([f"BREVO_API_KEY={v}", f"api-key: {v}"]), False


def v_github_token(rng: random.Random, i: int) -> Value:
    if i % 3 == 2:
        v = f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    else:
        v = crc_token(rng, "ghp_")
    forms = [f"git remote set-url origin https://x-access-token:{v}@github.com/fundacja/strona.git",
             f"GH_TOKEN={v}", f"Token do repozytorium strony: {v}", f"token: {v}"]
    return ("fine_grained" if v.startswith("github_pat_") else "classic"), v, forms[i % len(forms)], False


def v_telegram_bot(rng: random.Random, i: int) -> Value:
    v = f"{rng.randint(10 ** 8, 10 ** 10 - 1)}:AA{pick(rng, URLSAFE, 33)}"
    forms = [f"https://api.telegram.org/bot{v}/sendMessage?chat_id=-100{digits(rng, 10)}&text=Nowa+darowizna",
             f"TELEGRAM_BOT_TOKEN={v}", f"Токен бота для волонтёров: {v}",
             f"Done! ... Use this token to access the HTTP API:\n{v}\nKeep your token secure"]
    return ["api_url", "env", "label", "botfather"][i % 4], v, forms[i % len(forms)], False


# ---- national ids (outside the target) ---------------------------------------------------------------------------

def _weighted(number: str, weights: list[int]) -> int:
    return sum(int(d) * w for d, w in zip(number, weights, strict=False))


def pesel(rng: random.Random) -> str:
    """PESEL: YYMMDD (month + 20 after 2000), 4 serial digits (the last odd for men), weights 1-3-7-9."""
    born = _birth(rng)
    month = born.month + (20 if born.year >= 2000 else 0)
    body = f"{born.year % 100:02d}{month:02d}{born.day:02d}{digits(rng, 4)}"
    return body + str((10 - _weighted(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3]) % 10) % 10)


def rodne_cislo(rng: random.Random) -> str:
    """Czech/Slovak rodne cislo after 1954: YYMMDD (women's month + 50) / 4 digits, the whole divisible by 11."""
    while True:
        born = _birth(rng, 1954)
        month = born.month + rng.choice([0, 50])
        body = f"{born.year % 100:02d}{month:02d}{born.day:02d}{digits(rng, 3)}"
        check = int(body) % 11
        if check != 10:
            return f"{body[:6]}/{body[6:]}{check}"


def egn(rng: random.Random) -> str:
    """Bulgarian EGN: YYMMDD (month + 40 after 2000), 3 digits, weights 2-4-8-5-10-9-7-3-6 mod 11 (10 -> 0)."""
    born = _birth(rng)
    month = born.month + (40 if born.year >= 2000 else 0)
    body = f"{born.year % 100:02d}{month:02d}{born.day:02d}{digits(rng, 3)}"
    return body + str(_weighted(body, [2, 4, 8, 5, 10, 9, 7, 3, 6]) % 11 % 10)


def jmbg(rng: random.Random) -> str:
    """Serbian JMBG: DDMMYYY, region 71-89, 3 serial digits, K = 11 - weighted sum mod 11 (10, 11 -> 0)."""
    born = _birth(rng)
    body = f"{born.day:02d}{born.month:02d}{born.year % 1000:03d}{rng.randint(71, 89)}{digits(rng, 3)}"
    k = 11 - _weighted(body, [7, 6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2]) % 11
    return body + str(0 if k > 9 else k)


def cnp(rng: random.Random) -> str:
    """Romanian CNP: sex/century digit, YYMMDD, county 01-46/51/52, 3 digits, key 279146358279 mod 11 (10 -> 1)."""
    born = _birth(rng)
    sex = rng.choice([1, 2]) + (4 if born.year >= 2000 else 0)
    county = rng.choice(list(range(1, 47)) + [51, 52])
    body = f"{sex}{born.year % 100:02d}{born.month:02d}{born.day:02d}{county:02d}{rng.randint(1, 999):03d}"
    rest = _weighted(body, [int(c) for c in "279146358279"]) % 11
    return body + ("1" if rest == 10 else str(rest))


def rnokpp(rng: random.Random) -> str:
    """Ukrainian RNOKPP: days since 31.12.1899, 4 digits (the last odd for men), weights -1 5 7 9 4 6 10 5 7,
    (sum mod 11) mod 10."""
    while True:
        days = (_birth(rng) - dt.date(1899, 12, 31)).days
        body = f"{days:05d}{digits(rng, 4)}"
        total = _weighted(body, [-1, 5, 7, 9, 4, 6, 10, 5, 7])
        if total >= 0:
            return body + str(total % 11 % 10)


def iin(rng: random.Random) -> str:
    """Kazakh IIN: YYMMDD, century/sex digit (3/4 1900s, 5/6 2000s), 4 digits, weights 1-11 mod 11, then 3-11,1,2."""
    while True:
        born = _birth(rng)
        century = rng.choice([3, 4]) + (2 if born.year >= 2000 else 0)
        body = f"{born.year % 100:02d}{born.month:02d}{born.day:02d}{century}{digits(rng, 4)}"
        check = _weighted(body, list(range(1, 12))) % 11
        if check == 10:
            check = _weighted(body, [3, 4, 5, 6, 7, 8, 9, 10, 11, 1, 2]) % 11
        if check != 10:
            return body + str(check)


def baltic_code(rng: random.Random) -> str:
    """Lithuanian asmens kodas / Estonian isikukood: sex/century digit (3/4 1900s, 5/6 2000s), YYMMDD, 3 digits,
    weights 1-9,1 mod 11, then 3-9,1-3; 10 twice -> 0."""
    born = _birth(rng)
    first = rng.choice([3, 4]) + (2 if born.year >= 2000 else 0)
    body = f"{first}{born.year % 100:02d}{born.month:02d}{born.day:02d}{digits(rng, 3)}"
    check = _weighted(body, [1, 2, 3, 4, 5, 6, 7, 8, 9, 1]) % 11
    if check == 10:
        check = _weighted(body, [3, 4, 5, 6, 7, 8, 9, 1, 2, 3]) % 11 % 10
    return body + str(check)


ID_LABELS = {"pl_pesel": ["PESEL", "nr PESEL", "PESEL darczyńcy (ulga)"],
             "cz_rodne_cislo": ["Rodné číslo", "r. č.", "RČ člena"],
             "bg_egn": ["ЕГН", "ЕГН на члена", "ЕГН (за дарение)"], "rs_jmbg": ["ЈМБГ", "JMBG", "Matični broj"],
             "ro_cnp": ["CNP", "Cod numeric personal", "CNP voluntar"], "ua_rnokpp": ["РНОКПП", "ІПН", "Код РНОКПП"],
             "kz_iin": ["ИИН", "ЖСН", "IIN"], "lt_asmens_kodas": ["Asmens kodas", "a. k.", "Nario asmens kodas"],
             "ee_isikukood": ["Isikukood", "isikukood", "Liikme isikukood"]}
ID_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "pl_pesel": pesel, "cz_rodne_cislo": rodne_cislo, "bg_egn": egn, "rs_jmbg": jmbg, "ro_cnp": cnp,
    "ua_rnokpp": rnokpp, "kz_iin": iin, "lt_asmens_kodas": baltic_code, "ee_isikukood": baltic_code}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A KINDS entry for one national id: its label in the country's language, then the number."""
    def make(rng: random.Random, i: int) -> Value:
        v = ID_MAKERS[kind](rng)
        label = ID_LABELS[kind][i % 3]
        return "label", v, rng.choice([f"{label}: {v}", f"{label} {v}", f"{rng.choice(NAMES)}, {label} {v}"]), False
    return make


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "session_cookie": v_session_cookie, "bearer_token": v_bearer_token, "basic_auth": v_basic_auth,
    "private_key": v_private_key, "totp_seed": v_totp_seed, "recovery_code": v_recovery_code,
    "stripe_key": v_stripe_key, "gateway_secret": v_gateway_secret, "newsletter_key": v_newsletter_key,
    "github_token": v_github_token, "telegram_bot": v_telegram_bot,
    **{kind: national_id(kind) for kind in ID_MAKERS}}


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ------------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random) -> str:
    body = rng.choice(["4", "5" + str(rng.randint(1, 5)), "2200"])
    body += digits(rng, 15 - len(body))
    bad = (int(luhn_digit(body)) + rng.randint(1, 9)) % 10
    return group(body + str(bad), 4, rng.choice([" ", ""]))


def _s10(rng: random.Random) -> str:
    """A UPU S10 item number: 2 service letters, 8 digits, the S10 check digit (weights 8-6-4-2-3-5-9-7), country."""
    serial = digits(rng, 8)
    check = 11 - _weighted(serial, [8, 6, 4, 2, 3, 5, 9, 7]) % 11
    check = {10: 0, 11: 5}.get(check, check)
    return f"{rng.choice(['RR', 'CP', 'EE', 'RA', 'LX'])}{serial}{check}{rng.choice(['PL', 'CZ', 'UA', 'HU', 'KZ'])}"


def _ico(rng: random.Random) -> str:
    """A Czech/Slovak ICO: 7 digits and the mod 11 digit (weights 8-2)."""
    body = digits(rng, 7)
    r = _weighted(body, [8, 7, 6, 5, 4, 3, 2]) % 11
    return body + str(1 if r == 0 else 0 if r == 1 else 11 - r)


def _nip(rng: random.Random) -> str:
    """A Polish NIP of an organisation: 9 digits and the mod 11 digit (weights 6-5-7-2-3-4-5-6-7), never 10."""
    while True:
        body = str(rng.randint(1, 9)) + digits(rng, 8)
        check = _weighted(body, [6, 5, 7, 2, 3, 4, 5, 6, 7]) % 11
        if check != 10:
            return f"{body[:3]}-{body[3:6]}-{body[6:8]}-{body[8]}{check}"


CITIES = [(52.2297, 21.0122), (50.0755, 14.4378), (47.4979, 19.0402), (44.4268, 26.1025), (42.6977, 23.3219),
          (44.7866, 20.4489), (50.4501, 30.5234), (54.6872, 25.2797), (41.7151, 44.8271), (43.2220, 76.8512)]
SERVICE = [("Telefon zaufania", "116 123"), ("Linka bezpečí", "116 111"), ("Zaginione dziecko", "116 000"),
           ("Pomoc ofiarom przestępstw", "116 006"), ("Ärztlicher Bereitschaftsdienst", "116 117"),
           ("Numer alarmowy", "112"), ("Лінія довіри", "116 123"), ("Segélyhívó", "112"),
           ("Telefonul copilului", "116 111"), ("Emergency", "112")]
SCRIPTURE = ["J 3,16", "Mt 5,9", "Ps 23,1-4", "1 Kor 13,4-7", "Łk 2,1-14", "Jan 14:27", "Мф. 5:9", "Iн. 3:16",
             "Rom 12:10", "Mk 10,14", "Jn 1:1-5", "Flp 4,13"]
AMOUNTS = ["{} zł", "{} Kč", "{} Ft", "{} lei", "{} лв.", "{} ₴", "{} ₽", "{} ₸", "{} €", "{} GEL", "{} ֏", "{} ₮"]
PLACEHOLDERS = ["Hasło: ********", "Heslo: ••••••••", "placeholder=\"you@example.com\"", "Email: you@example.com",
                "API key: <YOUR_API_KEY>", "STRIPE_SECRET_KEY=sk_live_...", "{{ donor.email }}",
                "SSN: XXX-XX-XXXX", "Пароль: (не змінено)", "Telefon: +48 ___ ___ ___", "IBAN: PLkk BBBB ...",
                "password: ${DB_PASSWORD}", "token: <redacted>", "Jelszó: [rejtett]", "card: •••• •••• •••• ••••"]

NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_id": lambda r: r.choice([f"<button id=\"donate-btn-{r.randint(1, 999)}\" class=\"btn\">Wpłać</button>",
                                      f"data-testid=\"ticket-row-{r.randint(1, 9999)}\"",
                                      f"<div id=\"member-form-{pick(r, HEX, 6)}\">"]),
    "css_selector": lambda r: r.choice([".donation-form > input[name=\"amount\"]",
                                        f"#checkout .btn-primary:nth-child({r.randint(1, 9)})",
                                        f"form#volunteer input[type=\"tel\"]:nth-of-type({r.randint(1, 4)})"]),
    "xpath": lambda r: f"//form[@id='volunteer']/div[{r.randint(1, 9)}]/input[@name='{r.choice(['phone', 'email'])}']",
    "coordinates": lambda r: "Miejsce koncertu: {:.4f}, {:.4f}".format(
        *(c + r.uniform(-0.05, 0.05) for c in r.choice(CITIES))),
    "pixel_size": lambda r: r.choice([f"banner {r.choice([1200, 1080, 728])}x{r.choice([628, 1080, 90])} px",
                                      f"width: {r.randint(120, 960)}px; height: {r.randint(40, 720)}px"]),
    "timestamp": lambda r: r.choice([_stamp(r), str(1704067200000 + r.randrange(63072000000)),
                                     f"2024-{r.randint(1, 12):02d}-{r.randint(1, 28):02d} 18:30:00+02:00"]),
    "request_id": lambda r: r.choice([f"X-Request-Id: {_uuid(r)}", f"Request-Id: req_{pick(r, ALNUM, 14)}",
                                      f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01"]),
    "cache_bust": lambda r: r.choice([f"/static/js/app.{pick(r, HEX, 8)}.js", f"styles.css?v={pick(r, HEX, 10)}",
                                      f"main.{pick(r, HEX, 20)}.chunk.js"]),
    "csrf_field_name": lambda r: r.choice(["<input type=\"hidden\" name=\"csrfmiddlewaretoken\">",
                                           "<input type=\"hidden\" name=\"authenticity_token\" value=\"\">",
                                           "Brak nagłówka X-CSRF-Token (403)", "form field _token is missing",
                                           "<meta name=\"csrf-token\" content=\"{{ csrf_token() }}\">"]),
    "placeholder": lambda r: r.choice(PLACEHOLDERS),
    "masked": lambda r: r.choice([f"**** **** **** {digits(r, 4)}", f"PL** **** **** **** **** **** {digits(r, 4)}",
                                  f"+48 *** *** {digits(r, 3)}", f"Karta kończąca się na {digits(r, 4)}",
                                  f"{r.choice('ajkmp')}***@{r.choice(MAIL_DOMAINS)}"]),
    "version": lambda r: r.choice([f"CiviCRM {r.randint(5, 6)}.{r.randint(0, 80)}.{r.randint(0, 9)}",
                                   f"pretix 2024.{r.randint(1, 10)}.{r.randint(0, 3)}",
                                   f"WordPress 6.{r.randint(0, 7)}.{r.randint(0, 5)}",
                                   f"node v{r.randint(18, 22)}.{r.randint(0, 20)}.{r.randint(0, 9)}"]),
    "service_number": lambda r: "{}: {}".format(*r.choice(SERVICE)),
    "luhn_invalid": lambda r: f"{r.choice(['nr ref.', 'Numer biletu', 'Kód vstupenky', 'Nr karty (odrzucona)'])}: "
                              f"{_luhn_bad(r)}",
    "order_number": lambda r: r.choice([f"Zamówienie nr ZAM/2024/{r.randint(1, 12):02d}/{r.randint(1, 9999):04d}",
                                        f"pretix order {pick(r, UPPER_DIGITS, 5)}",
                                        f"Faktura FV {r.randint(1, 999)}/2024",
                                        f"orderId: {r.randint(10 ** 8, 10 ** 9)}"]),
    "tracking_number": lambda r: f"{r.choice(['Przesyłka', 'Zásilka', 'Відправлення', 'Parcel'])}: {_s10(r)}",
    "org_registry": lambda r: r.choice([f"KRS 0000{digits(r, 6)} (1,5% podatku)", f"IČO: {_ico(r)}",
                                        f"NIP: {_nip(r)}", f"Adószám: 18{digits(r, 6)}-1-{r.randint(2, 44):02d}"]),
    "gateway_object_id": lambda r: r.choice([f"payment_intent pi_3{pick(r, ALNUM, 23)}", f"evt_{pick(r, ALNUM, 24)}",
                                             f"pspReference: {pick(r, UPPER_DIGITS, 16)}",
                                             f"YooKassa payment {_uuid(r)} succeeded",
                                             f"price_{pick(r, ALNUM, 24)}"]),
    "scripture": lambda r: f"{r.choice(['Czytanie', 'Čtení', 'Апостол', 'Reading', 'Lesung'])}: {r.choice(SCRIPTURE)}",
    "seat_label": lambda r: r.choice([f"Sektor {r.choice('ABCD')}, rząd {r.randint(1, 30)}, miejsce {r.randint(1, 40)}",
                                      f"Řada {r.randint(1, 30)}, sedadlo {r.randint(1, 40)}",
                                      f"Ряд {r.randint(1, 30)}, місце {r.randint(1, 40)}",
                                      f"Gate {r.randint(1, 6)} · Row {r.randint(1, 30)} · Seat {r.randint(1, 40)}"]),
    "amount": lambda r: r.choice(AMOUNTS).format(f"{r.randint(1, 99) * 50:,}".replace(",", " ")),
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[i % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, "")
            yield sort, text
