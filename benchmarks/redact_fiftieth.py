"""The fiftieth blind redaction corpus: restaurants, food delivery and gig-economy platforms in Latin America and
Iberia, what an agent that runs a delivery app's support, a restaurant chain's ordering or a courier platform's
payouts sees. Written from the formats' public specifications by someone who read neither the detection rules nor
the other corpora's values.

Carriers (the `form` head): payment-provider webhooks and API bodies (Mercado Pago `payment` notifications,
PagSeguro/PagBank notifications, Stone/Pagar.me `order.paid` hooks, Adyen `NotificationRequestItem`s, Stripe
events, Conekta events, dLocal callbacks), marketplace order events (iFood-style order events, Rappi-style order
payloads), WhatsApp Cloud API webhooks and Zenvia SMS callbacks, POS sales and kitchen-display (KDS) tickets, menu
and catalog sync jobs, rider onboarding records, payout batches, support chats (Intercom-style parts) and an
agent's tool results (JSON); and as text: nginx access logs, dispatch service logs, kitchen printer tickets, SMS
bodies, WhatsApp chat exports, onboarding e-mails (MIME), payout CSV rows, onboarding YAML, Django tracebacks, the
agent's Markdown replies, support transcripts, cron job output, curl commands, SQL inserts, POS syslog lines,
Android rider-app logcat lines and .env files. About a third is JSON carried (`is_json`).

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, Diners 36, JCB 3528-3589, and the Brazilian Elo and Hipercard BINs their issuers publish) with
the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN registry's BBAN structures for ES, PT, AD, FR, DE, GB, IT, BR,
CR, DO, GT and SV (MOD 97-10); Mexican CLABE, Banxico's 18 digits (bank, plaza, account, the 3-7-1 weighted check
digit); PIX keys as the Banco Central's DICT manual lists them (CPF, phone in E.164, e-mail, EVP: a UUID v4); SSNs,
the SSA's rules (area not 000/666/9xx, group not 00, serial not 0000); phones, the national numbering plans (NANP,
Ofcom, ARCEP, BNetzA, TRAI/DoT, Anatel, IFT, CNMC, ENACOM, Subtel, CRC, ANACOM) with context words in each
country's languages; AWS keys, IAM's documented AKIA/ASIA ids and 40-character secrets; Slack, Discord,
Teams/Power Automate, Google Chat, Mattermost, Zapier and Telegram Bot API URLs as their docs print them (the
secret is the token-bearing segment or query value only); Stripe `whsec_` signing secrets and `sk_live_`/`rk_live_`
keys; Mercado Pago `APP_USR-`/`TEST-` access tokens; Pagar.me (Stone) `sk_`/`sk_test_` keys, also as the Basic
credential their docs send; Adyen `AQE` API keys and 64-hex HMAC keys; Conekta `key_` private keys; Meta (WhatsApp
Cloud API) `EAA` access tokens; connection strings (URI, ADO.NET, JDBC, ODBC, Azure Storage/Service Bus: the secret
is the password or key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750); session cookies
(RFC 6265; Django, Express, Laravel, PHP, Java servlet names); PEM PKCS#8/SEC1 and OpenSSH keys (the mTLS client
keys PIX APIs ask for); TOTP seeds (RFC 4648 base32 in Google Authenticator's `otpauth://` Key Uri Format).
National ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian CPF (two mod 11 digits), Mexican
CURP (RENAPO's check digit) and RFC (SAT's mod 11 homoclave digit), Chilean RUT (mod 11, K), Argentine CUIT (AFIP's
weights 5-4-3-2-7-6-5-4-3-2), Portuguese NIF (mod 11).

Languages: labels and context words are in the user's language, Spanish (Spain, Mexico, Argentina, Chile,
Colombia), Portuguese (Brazil, Portugal), Catalan, Galician, Basque, Guarani, Quechua, English and the languages of
riders and customers far from home, `LANGUAGES` lists them all.

Judgements: a case's `secret` is only what must not survive (a webhook's token segment, a connection string's
password, a cookie's value, a header's credential). A PIX key of any type points at one person's account, so all
four are personal; a CLABE too. A restaurant's CNPJ or a company's CIF is printed on every receipt and names a
business, so they are near misses, as are NFC-e access keys and EAN-13 barcodes (check digits valid), order and
tracking numbers, marketplace short codes, coupon codes, CSS selectors and XPaths, coordinates of restaurants,
pixel sizes, timestamps, request and trace ids, cache-busting hashes, CSRF field names (not values), placeholders
and masked values, versions, amounts, Luhn-invalid numbers, terminal ids and businesses' published service lines:
none of them identifies a person or opens anything.
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
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 50
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "mx_curp", "mx_rfc", "cl_rut", "ar_cuit", "pt_nif"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
BASE32 = string.ascii_uppercase + "234567"


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


# ---- carriers -------------------------------------------------------------------------------------------------

RESTAURANTS = ["Taquería El Güero", "Pizzaria Bella Napoli", "Bar do Zé", "Sushi Itamae", "La Parrilla de Don Tito",
               "Cevichería Mar Azul", "Pastelaria Lusitana", "Arepera Caracas", "Pollos Hermanos Lima",
               "Hamburgueria Brasa", "Txoko Donostia", "Bodega Can Roca", "Empanadas La Salteña", "Chiperia Asunción",
               "Churrería San Ginés", "Marisqueira O Porto"]
CITIES = ["São Paulo", "Ciudad de México", "Buenos Aires", "Santiago", "Bogotá", "Lisboa", "Madrid", "Barcelona",
          "Guadalajara", "Porto Alegre", "Medellín", "Monterrey", "Córdoba", "Porto", "Bilbao", "Asunción", "Cusco"]
ITEMS = ["2x Tacos al pastor", "1x Pizza margherita", "1x X-Tudo", "3x Empanadas de carne", "1x Ceviche mixto",
         "2x Pastel de nata", "1x Feijoada completa", "1x Menú del día", "4x Pan de yuca", "1x Bandeja paisa"]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _fid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def _order(rng: random.Random) -> str:
    return f"{rng.randint(1000, 9999)}-{pick(rng, UPPER, 2)}{rng.randint(10, 99)}"


def c_mercadopago(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"action": "payment.updated", "api_version": "v1", "type": "payment", "live_mode": True,
                  "data": {"id": str(rng.randint(10 ** 10, 10 ** 11))}, "date_created": _ts(rng),
                  "metadata": {"order": _order(rng), "nota_interna": snip}})


def c_pagseguro(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": f"ORDE_{_fid(rng).upper()}", "reference_id": _order(rng),
                  "charges": [{"status": "PAID", "amount": {"value": rng.randint(1500, 30000), "currency": "BRL"},
                               "description": snip}]})


def c_stone(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": f"hook_{pick(rng, ALNUM, 16)}", "type": "order.paid", "created_at": _ts(rng),
                  "data": {"id": f"or_{pick(rng, ALNUM, 16)}", "code": _order(rng), "status": "paid",
                           "customer": {"id": f"cus_{pick(rng, ALNUM, 16)}"}, "metadata": {"obs": snip}}})


def c_adyen(rng: random.Random, snip: str, _s: str) -> str:
    item = {"eventCode": "AUTHORISATION", "success": "true", "merchantAccountCode": "DeliveryLatamECOM",
            "pspReference": digits(rng, 16), "merchantReference": _order(rng), "additionalData": {"note": snip}}
    return _dump({"live": "true", "notificationItems": [{"NotificationRequestItem": item}]})


def c_stripe(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": f"evt_{pick(rng, ALNUM, 24)}", "object": "event", "type": "payout.paid",
                  "data": {"object": {"id": f"po_{pick(rng, ALNUM, 24)}", "amount": rng.randint(1000, 90000),
                                      "currency": "eur", "description": snip}}})


def c_conekta(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "order.paid", "livemode": True, "data": {"object": {
        "id": f"ord_{pick(rng, ALNUM, 17)}", "currency": "MXN", "amount": rng.randint(5000, 90000),
        "metadata": {"sucursal": rng.choice(CITIES), "comentario": snip}}}})


def c_dlocal(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": f"D-{rng.randint(4000, 4999)}-{_fid(rng)}", "status": "PAID", "country": rng.choice(
        ["AR", "CL", "CO", "MX", "PE", "UY", "PY"]), "order_id": _order(rng), "description": snip})


def c_ifood(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": _fid(rng), "code": "PLC", "fullCode": "PLACED", "orderId": _fid(rng),
                  "merchantId": _fid(rng), "createdAt": _ts(rng),
                  "metadata": {"displayId": str(rng.randint(1000, 9999)), "observations": snip}})


def c_rappi(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"order_detail": {"order_id": str(rng.randint(10 ** 8, 10 ** 9)), "cooking_time": rng.randint(8, 30),
                                   "items": [{"name": rng.choice(ITEMS), "comments": snip}],
                                   "store": {"name": rng.choice(RESTAURANTS)}}})


def c_whatsapp(rng: random.Random, snip: str, _s: str) -> str:
    msg = {"from": "wa_id_hidden", "id": f"wamid.{b64url(rng.randbytes(30))}", "timestamp": str(rng.randint(
        1_700_000_000, 1_800_000_000)), "type": "text", "text": {"body": snip}}
    return _dump({"object": "whatsapp_business_account", "entry": [{"id": digits(rng, 15), "changes": [
        {"field": "messages", "value": {"messaging_product": "whatsapp", "messages": [msg]}}]}]})


def c_zenvia(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"id": _fid(rng), "type": "MESSAGE", "channel": "sms", "direction": "OUT",
                  "message": {"contents": [{"type": "text", "text": snip}]}, "timestamp": _ts(rng)})


def c_pos_sale(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"sale_id": rng.randint(10 ** 5, 10 ** 6), "terminal": f"POS-{rng.randint(1, 12):02d}",
                  "store": rng.choice(RESTAURANTS), "lines": [rng.choice(ITEMS)], "memo": snip})


def c_kds(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"ticket": rng.randint(1, 999), "station": rng.choice(["GRILL", "FRIO", "PLANCHA", "FORNO", "BAR"]),
                  "bumped": False, "items": [{"label": rng.choice(ITEMS), "mods": [snip]}]})


def c_menu_sync(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"job": "catalog-sync", "merchant": rng.choice(RESTAURANTS), "run_id": _fid(rng),
                  "errors": [{"sku": f"SKU-{rng.randint(100, 999)}", "message": snip}]})


def c_onboarding(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"rider_id": f"RD-{rng.randint(10 ** 5, 10 ** 6)}", "city": rng.choice(CITIES),
                  "vehicle": rng.choice(["moto", "bike", "carro", "a pie"]), "status": "pending_review",
                  "form": {"free_text": snip}})


def c_payout(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"batch": f"PB-{rng.randint(2026001, 2026365)}", "currency": rng.choice(["BRL", "MXN", "EUR"]),
                  "items": [{"courier": f"C{rng.randint(10 ** 5, 10 ** 6)}", "amount": round(rng.uniform(50, 900), 2),
                             "destination": snip}]})


def c_support_chat(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"type": "conversation", "id": str(rng.randint(10 ** 9, 10 ** 10)), "conversation_parts": {
        "conversation_parts": [{"part_type": "comment", "author": {"type": "user"}, "body": f"<p>{snip}</p>"}]}})


def c_tool_result(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"role": "tool", "tool_call_id": f"call_{pick(rng, ALNUM, 24)}",
                  "name": rng.choice(["lookup_rider", "get_order", "get_payout", "search_tickets"]), "content": snip})


def c_nginx(rng: random.Random, snip: str, _s: str) -> str:
    ip = f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"
    return (f'{ip} - - [{rng.randint(1, 28):02d}/Mar/2026:{rng.randint(0, 23):02d}:12:09 +0000] "POST '
            f'/api/v2/orders/{_order(rng)}/notes HTTP/1.1" 201 {rng.randint(80, 900)} "-" "okhttp/4.12.0" '
            f'body="{snip}"')


def c_dispatch_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"{_ts(rng)} INFO dispatch.assign order={_order(rng)} zone={pick(rng, UPPER, 3)}-{rng.randint(1, 40)} "
            f"eta_min={rng.randint(5, 45)}\n{_ts(rng)} WARN dispatch.note {snip}")


def c_kds_print(rng: random.Random, snip: str, _s: str) -> str:
    return (f"================================\n  {rng.choice(RESTAURANTS).upper()}\n  COMANDA #{rng.randint(1, 999)}"
            f"   MESA {rng.randint(1, 40)}\n--------------------------------\n{rng.choice(ITEMS)}\n OBS: {snip}\n"
            "================================")


def c_sms(rng: random.Random, snip: str, _s: str) -> str:
    return f"[SMS out {_ts(rng)} sender=DELIVRY seg={rng.randint(1, 3)}] {snip}"


def c_wa_export(rng: random.Random, snip: str, _s: str) -> str:
    day = f"{rng.randint(1, 28):02d}/{rng.randint(1, 12):02d}/26"
    return (f"[{day}, {rng.randint(8, 23)}:{rng.randint(10, 59)}] Soporte: Hola, ¿en qué te ayudo?\n"
            f"[{day}, {rng.randint(8, 23)}:{rng.randint(10, 59)}] Cliente: {snip}")


def c_mime(rng: random.Random, snip: str, _s: str) -> str:
    return (f"From: onboarding@riders.example\nSubject: Bienvenido / Bem-vindo\nMessage-ID: <{_fid(rng)}@mail>\n"
            f"Content-Type: text/plain; charset=utf-8\n\n{snip}\n\n-- \nEquipo de repartidores, {rng.choice(CITIES)}")


def c_payout_csv(rng: random.Random, snip: str, _s: str) -> str:
    return (f"batch;courier;amount;currency;note\nPB-{rng.randint(100, 999)};C{rng.randint(10 ** 5, 10 ** 6)};"
            f"{rng.randint(50, 900)},{rng.randint(10, 99)};{rng.choice(['BRL', 'MXN', 'EUR', 'ARS'])};{snip}")


def c_yaml(rng: random.Random, snip: str, _s: str) -> str:
    """The record, then the rider's free text as the next YAML document (kept whole: PEM lines stay flush left)."""
    return (f"rider:\n  id: RD-{rng.randint(10 ** 5, 10 ** 6)}\n  city: {rng.choice(CITIES)}\n  reviewed: false\n"
            f"  notes: next document\n---\n{snip}")


def c_traceback(rng: random.Random, snip: str, _s: str) -> str:
    return ("Traceback (most recent call last):\n  File \"/app/payouts/tasks.py\", line "
            f"{rng.randint(20, 400)}, in send_payout\n    resp.raise_for_status()\n"
            f"payouts.errors.PayoutRejected: {snip}")


def c_agent_md(rng: random.Random, snip: str, _s: str) -> str:
    return (f"**Pedido {_order(rng)}** — {rng.choice(RESTAURANTS)}\n\nHe revisado tu caso. {snip}\n\n"
            "_Si necesitas algo más, responde a este mensaje._")


def c_transcript(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Ticket #{rng.randint(10 ** 5, 10 ** 6)} ({rng.choice(CITIES)})\nAgent: Buenas, ¿me confirmas los datos?"
            f"\nCustomer: {snip}\nAgent: Gracias, lo reviso.")


def c_cron(rng: random.Random, snip: str, _s: str) -> str:
    return (f"$ python manage.py sync_menus --merchant {rng.randint(100, 999)}\nsynced {rng.randint(10, 400)} items "
            f"in {rng.randint(1, 60)}.{rng.randint(0, 9)}s\n{snip}\nexit 0")


def c_curl(rng: random.Random, snip: str, _s: str) -> str:
    return (f"curl -X POST https://api.partner.example/v1/stores/{rng.randint(100, 999)}/sync \\\n"
            f"  -H 'Content-Type: application/json' \\\n  --data-raw '{snip}'")


def c_sql(rng: random.Random, snip: str, _s: str) -> str:
    return (f"INSERT INTO support_notes (order_id, created_at, body) VALUES ('{_order(rng)}', '{_ts(rng)}', "
            f"'{snip}');")


def c_pos_syslog(rng: random.Random, snip: str, _s: str) -> str:
    return (f"<134>1 {_ts(rng)} pos-{rng.randint(1, 12):02d} kiosk {rng.randint(1000, 9999)} - - "
            f"sale={rng.randint(10 ** 5, 10 ** 6)} {snip}")


def c_logcat(rng: random.Random, snip: str, _s: str) -> str:
    return (f"03-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:14:07.{rng.randint(100, 999)}  "
            f"{rng.randint(1000, 9999)}  {rng.randint(1000, 9999)} D RiderApp/Onboarding: {snip}")


def c_env(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# {rng.choice(RESTAURANTS)} — ordering backend\nDJANGO_SETTINGS_MODULE=ordering.settings.prod\n"
            f"TZ=America/Sao_Paulo\n{snip}\nSENTRY_ENVIRONMENT=production")


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "mercadopago_hook": c_mercadopago, "pagseguro_order": c_pagseguro, "stone_hook": c_stone, "adyen_notif": c_adyen,
    "stripe_event": c_stripe, "conekta_event": c_conekta, "dlocal_callback": c_dlocal, "ifood_event": c_ifood,
    "rappi_order": c_rappi, "whatsapp_cloud": c_whatsapp, "zenvia_sms": c_zenvia, "pos_sale": c_pos_sale,
    "kds_ticket": c_kds, "menu_sync": c_menu_sync, "rider_onboarding": c_onboarding, "payout_batch": c_payout,
    "support_chat": c_support_chat, "tool_result": c_tool_result}
TEXT_CARRIERS: dict[str, Carrier] = {
    "nginx_log": c_nginx, "dispatch_log": c_dispatch_log, "kitchen_print": c_kds_print, "sms_body": c_sms,
    "whatsapp_export": c_wa_export, "onboarding_mail": c_mime, "payout_csv": c_payout_csv,
    "onboarding_yaml": c_yaml, "django_traceback": c_traceback, "agent_reply_md": c_agent_md,
    "support_transcript": c_transcript, "cron_output": c_cron, "curl_cmd": c_curl, "sql_insert": c_sql,
    "pos_syslog": c_pos_syslog, "rider_logcat": c_logcat, "env_file": c_env}
"""17 text carriers: not a multiple of 3, so cycling them over the non-JSON cases reaches each one."""


# ---- the kinds ----------------------------------------------------------------------------------------

PW_LABELS = [("contraseña", "es"), ("clave", "es"), ("senha", "pt"), ("palavra-passe", "pt"), ("contrasenya", "ca"),
             ("contrasinal", "gl"), ("pasahitza", "eu"), ("ñe'ẽñemi", "gn"), ("yaykuna simi", "qu"),
             ("Password", "en"), ("mot de passe", "fr"), ("Passwort", "de"), ("parola d'accesso", "it"),
             ("wachtwoord", "nl"), ("hasło", "pl"), ("parolă", "ro"), ("пароль", "uk"), ("пароль", "ru"),
             ("كلمة المرور", "ar"), ("密码", "zh"), ("パスワード", "ja"), ("비밀번호", "ko"), ("şifre", "tr"),
             ("पासवर्ड", "hi"), ("mật khẩu", "vi"), ("kata sandi", "id"), ("lösenord", "sv"), ("heslo", "cs"),
             ("κωδικός πρόσβασης", "el"), ("סיסמה", "he"), ("رمز عبور", "fa"), ("jelszó", "hu")]
PW_SENTENCES = {"es": "Tu {l} temporal para el panel del restaurante es {v}",
                "pt": "Sua {l} provisória do app de entregador: {v}",
                "ca": "La teva {l} nova del portal de repartidors és {v}",
                "gl": "O teu {l} para o TPV: {v}", "eu": "Zure {l} berria: {v}", "en": "your new {l} is {v}"}
FOODS = ["Empanada", "Feijoada", "Arepa", "Chimichurri", "Paella", "Tortilla", "Ceviche", "Churros", "Brigadeiro",
         "Pastel", "Mole", "Pupusa", "Chipa", "Coxinha", "Tamal", "Pozole", "Alfajor", "Bacalhau", "Txakoli", "Mate"]


def password_value(rng: random.Random) -> str:
    """What people and generators set: food word + year + symbol, two words, a random string, a passphrase."""
    shape = rng.randrange(4)
    if shape == 0:
        return f"{rng.choice(FOODS)}{rng.randint(1980, 2026)}{rng.choice('!#$%&*?@')}"
    if shape == 1:
        return f"{rng.choice(FOODS)}{rng.choice('._-+')}{rng.choice(FOODS).lower()}{rng.randint(1, 99)}"
    if shape == 2:
        return pick(rng, ALNUM + "!#%&*+-=?@", rng.randint(12, 20))
    return "-".join(rng.choice(FOODS).lower() for _ in range(3)) + str(rng.randint(1, 99))


def v_password(rng: random.Random, i: int) -> Value:
    label, lang = PW_LABELS[i % len(PW_LABELS)]
    value = password_value(rng)
    if lang in PW_SENTENCES and rng.random() < 0.5:
        return f"{lang}_sentence", value, PW_SENTENCES[lang].format(l=label, v=value), False
    template = rng.choice(["{l}: {v}", "{l}={v}", "{l} → {v}", "{L}: {v}", "usuario: rider{n} / {l}: {v}",
                           "login rest{n} {l} {v}"])
    snip = template.format(l=label, L=label.upper(), v=value, n=rng.randint(100, 999))
    return lang, value, snip, False


def aws_secret_value(rng: random.Random) -> str:
    return pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    kid = rng.choice(["AKIA", "ASIA"]) + pick(rng, BASE32, 16)
    sec = aws_secret_value(rng)
    forms = [("credentials_file", f"[menu-sync]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}"),
             ("env", f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={sec}"),
             ("boto3", f's3 = boto3.client("s3", aws_access_key_id="{kid}", aws_secret_access_key="{sec}")'),
             ("sts_json", f'{{"AccessKeyId": "{kid}", "SecretAccessKey": "{sec}", "Expiration": "2026-04-01"}}'),
             ("chat_es", f"usa estas credenciales para subir las fotos del menú: {kid} {sec}"),
             ("chat_pt", f"chave de acesso {kid} e segredo {sec} (bucket cardapio-fotos)"),
             ("terraform", f'provider "aws" {{\n  access_key = "{kid}"\n  secret_key = "{sec}"\n}}'),
             ("slash_pair", f"{kid}/{sec}"),
             ("labelled", f"AWS secret access key: {sec}")]
    style, snip = forms[i % len(forms)]
    return style, sec, snip, False


def _slack(rng: random.Random) -> tuple[str, str]:
    tok = pick(rng, ALNUM, 24)
    team, channel = pick(rng, UPPER + string.digits, 10), pick(rng, UPPER, 10)
    return f"https://hooks.slack.com/services/T{team}/B{channel}/{tok}", tok


def _discord(rng: random.Random) -> tuple[str, str]:
    tok = pick(rng, URLSAFE, 68)
    return f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19)}/{tok}", tok


def _teams(rng: random.Random) -> tuple[str, str]:
    tok = pick(rng, HEX, 32)
    org = rng.choice(["deliverylatam", "grupoburger", "rappitenders"])
    return (f"https://{org}.webhook.office.com/webhookb2/{_fid(rng)}@{_fid(rng)}/IncomingWebhook/{tok}/"
            f"{_fid(rng)}", tok)


def _power_automate(rng: random.Random) -> tuple[str, str]:
    sig = pick(rng, URLSAFE, 43)
    return (f"https://prod-{rng.randint(10, 99)}.brazilsouth.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
            f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}",
            sig)


def _google_chat(rng: random.Random) -> tuple[str, str]:
    tok = pick(rng, URLSAFE, 43) + "%3D"
    return (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key="
            f"AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={tok}", tok)


def _mattermost(rng: random.Random) -> tuple[str, str]:
    tok = pick(rng, LOWER + string.digits, 26)
    return f"https://chat.cocina-central.example/hooks/{tok}", tok


def _zapier(rng: random.Random) -> tuple[str, str]:
    tok = pick(rng, LOWER + string.digits, 7)
    return f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 7)}/{tok}/", tok


def _telegram(rng: random.Random) -> tuple[str, str]:
    tok = pick(rng, URLSAFE, 35)
    return f"https://api.telegram.org/bot{rng.randint(10 ** 9, 7 * 10 ** 9)}:{tok}/sendMessage", tok


WEBHOOKS = {"slack": _slack, "discord": _discord, "teams": _teams, "power_automate": _power_automate,
            "google_chat": _google_chat, "mattermost": _mattermost, "zapier": _zapier, "telegram": _telegram}
WEBHOOK_LEADS = ["Alertas de cocina → {u}", "SLACK_WEBHOOK_URL={u}", "POST {u} 200 OK",
                 "webhook pedidos atrasados: {u}",
                 "notificar repartidores: {u}", "url do webhook: {u}", "requests.post('{u}', json=payload)",
                 "Avisos de stock baixo enviats a {u}"]


def v_webhook(rng: random.Random, i: int) -> Value:
    style = list(WEBHOOKS)[i % len(WEBHOOKS)]
    url, tok = WEBHOOKS[style](rng)
    return style, tok, rng.choice(WEBHOOK_LEADS).format(u=url), False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    sec = "whsec_" + pick(rng, ALNUM, 32)
    forms = [("cli", f"> Ready! You are using Stripe API Version [2025-03-31]. Your webhook signing secret is {sec} "
                     "(^C to quit)"),
             ("env", f"STRIPE_WEBHOOK_SECRET={sec}"),
             ("python", f'event = stripe.Webhook.construct_event(payload, sig_header, "{sec}")'),
             ("yaml", f"stripe:\n  endpoint_secret: {sec}"),
             ("es", f"El secreto de firma del endpoint de pagos es {sec}"),
             ("pt", f"segredo de assinatura do webhook: {sec}"),
             ("ca", f"secret de signatura del webhook: {sec}")]
    style, snip = forms[i % len(forms)]
    return style, sec, snip, False


def _conn(rng: random.Random, style: str) -> tuple[str, str]:
    pw = pick(rng, ALNUM, rng.randint(12, 24))
    host = rng.choice(["db-pedidos.internal", "pg-prod.sa-east-1.rds.amazonaws.com", "mysql-pos.local",
                       "cluster0.ab1cd.mongodb.net", "10.20.3.14"])
    user = rng.choice(["app_pedidos", "pos", "riders_rw", "menu_sync", "admin"])
    if style == "azure_storage":
        pw = pick(rng, B64, 86) + "=="
        return (f"DefaultEndpointsProtocol=https;AccountName=fotoscardapio;AccountKey={pw};"
                "EndpointSuffix=core.windows.net", pw)
    if style == "azure_servicebus":
        pw = pick(rng, B64, 43) + "="
        return (f"Endpoint=sb://pedidos-bus.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                f"SharedAccessKey={pw}", pw)
    forms = {"postgres": f"postgresql://{user}:{pw}@{host}:5432/pedidos?sslmode=require",
             "mysql": f"mysql://{user}:{pw}@{host}:3306/pos",
             "mongodb_srv": f"mongodb+srv://{user}:{pw}@{host}/riders?retryWrites=true&w=majority",
             "redis": f"redis://:{pw}@{host}:6379/0", "amqp": f"amqp://{user}:{pw}@{host}:5672/dispatch",
             "ado_net": f"Server={host};Database=Pedidos;User Id={user};Password={pw};TrustServerCertificate=True;",
             "jdbc": f"jdbc:postgresql://{host}:5432/pedidos?user={user}&password={pw}&ssl=true",
             "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server=tcp:{host},1433;Uid={user};Pwd={pw};"}
    return forms[style], pw


CONN_STYLES = ["postgres", "mysql", "mongodb_srv", "redis", "amqp", "ado_net", "jdbc", "odbc", "azure_storage",
               "azure_servicebus"]
CONN_LEADS = ["DATABASE_URL={c}", "conexión: {c}", "string de conexão: {c}", 'ConnectionStrings__Default="{c}"',
              "connecting with {c}", "cadena de connexió {c}"]


def v_connection_string(rng: random.Random, i: int) -> Value:
    style = CONN_STYLES[i % len(CONN_STYLES)]
    conn, pw = _conn(rng, style)
    return style, pw, rng.choice(CONN_LEADS).format(c=conn), False


KEY_LABELS = [("API key: {v}", "en"), ("Chave de API: {v}", "pt"), ("Clave de API: {v}", "es"),
              ("Clau de l'API: {v}", "ca"), ("Chave da API (iFood): {v}", "pt"), ("X-Api-Key: {v}", "en"),
              ("client_secret={v}", "en"), ("Llave privada del comercio: {v}", "es"), ("dLocal X-Trans-Key: {v}", "en"),
              ("secret key (dLocal) = {v}", "en"), ("API-Schlüssel: {v}", "de"), ("clé API : {v}", "fr"),
              ("Token de acceso: {v}", "es"), ("API gakoa: {v}", "eu"), ("Chave da API: {v}", "gl"),
              ("PagSeguro token: {v}", "pt"), ("token de integração da loja: {v}", "pt")]


def v_labelled_key(rng: random.Random, i: int) -> Value:
    label, lang = KEY_LABELS[i % len(KEY_LABELS)]
    shape = rng.randrange(4)
    value = [pick(rng, HEX, 32), pick(rng, ALNUM, 40), pick(rng, URLSAFE, 43), pick(rng, HEX, 32).upper()][shape]
    return f"{lang}_{['hex', 'b62', 'urlsafe', 'HEX'][shape]}", value, label.format(v=value), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


def _disguise_base(rng: random.Random) -> str:
    shape = rng.randrange(4)
    if shape == 0:
        return "sk_live_" + pick(rng, ALNUM, 24)
    if shape == 1:
        return f"APP_USR-{digits(rng, 16)}-{digits(rng, 6)}-{pick(rng, HEX, 32)}-{digits(rng, 9)}"
    if shape == 2:
        return "whsec_" + pick(rng, ALNUM, 32)
    return password_value(rng)


def v_disguised(rng: random.Random, i: int) -> Value:
    base = _disguise_base(rng)
    style = ["zero_width", "fullwidth", "percent", "json_u"][i % 4]
    if style == "zero_width":
        cut = rng.randint(3, len(base) - 3)
        value = base[:cut] + rng.choice(ZW) + base[cut:]
    elif style == "fullwidth":
        value = _fullwidth(base)
    elif style == "percent":
        value = "".join(f"%{ord(c):02X}" if c.isalnum() and rng.random() < 0.5 else quote(c, safe="") for c in base)
    else:
        value = "".join(f"\\u{ord(c):04x}" for c in base)
    label = rng.choice(["clave", "senha", "token", "secret", "contrasenya", "access_token", "chave"])
    if style == "json_u":
        return style, value, f'{{"{label}": "{value}"}}', True
    return style, value, f"{label}: {value}", False


MAIL_NAMES = ["joao.silva", "mariafernanda.g", "lucia.perez", "tiago_costa", "ximena.rdz", "jordi.puig", "iker.etxeb",
              "ana.souza88", "camila.rojas", "pablo.ferreira", "ines.carvalho", "sebastian.m", "nahia.agirre",
              "rider.joaquin", "valentina.lopez", "xoan.varela", "mbarete.ruben", "quispe.rosa"]
MAIL_DOMAINS = ["gmail.com", "hotmail.com", "hotmail.es", "outlook.com.br", "yahoo.com.mx", "uol.com.br",
                "bol.com.br", "terra.com.br", "icloud.com", "live.com.ar", "sapo.pt", "telefonica.net",
                "prodigy.net.mx", "gmail.com.ar", "yahoo.es", "protonmail.com"]
IDN_MAILS = ["josé.garcía@correo.es", "joão.conceição@exemplo.com.br", "núñez@café-pérez.es",
             "begoña@txoko-donostia.eus", "françoise@boulangerie.fr", "müller@lieferdienst.de", "用户@例子.公司",
             "ñandutí@correo.com.py"]
MAIL_CTX = [("correo", "es"), ("e-mail", "pt"), ("email", "en"), ("correu electrònic", "ca"),
            ("correo electrónico", "gl"), ("helbide elektronikoa", "eu"), ("ñanduti veve", "gn"),
            ("courriel", "fr"), ("E-Mail", "de"), ("posta elettronica", "it"), ("メール", "ja"), ("邮箱", "zh"),
            ("이메일", "ko"), ("почта", "ru"), ("ईमेल", "hi"), ("e-posta", "tr"), ("البريد الإلكتروني", "ar")]


def v_email(rng: random.Random, i: int) -> Value:
    ctx, lang = MAIL_CTX[i % len(MAIL_CTX)]
    shape = i % 5
    if shape == 4:
        addr = rng.choice(IDN_MAILS)
    else:
        tag = f"+{rng.choice(['rider', 'ifood', 'pedidos'])}" if shape == 3 else ""
        addr = f"{rng.choice(MAIL_NAMES)}{rng.randint(1, 99) if shape == 1 else ''}{tag}@{rng.choice(MAIL_DOMAINS)}"
    style = ["plain", "digits", "angle", "plus_tag", "idn"][shape]
    snip = f"{ctx}: Repartidor {rng.randint(100, 999)} <{addr}>" if shape == 2 else f"{ctx}: {addr}"
    return f"{style}_{lang}", addr, snip, False


PhoneForms = list[tuple[str, Callable[[random.Random], str]]]


def phone_case(rng: random.Random, i: int, forms: PhoneForms, ctx: list[tuple[str, str]]) -> Value:
    """One phone in the country's format after a context word in one of its languages."""
    style, make = forms[i % len(forms)]
    word, lang = ctx[i % len(ctx)]
    number = make(rng)
    template = rng.choice(["{c}: {n}", "{c} {n}", "{c} do cliente: {n}", "{c} ({n})", "{c} → {n}"])
    if lang != "pt" and "do cliente" in template:
        template = "{c}: {n}"
    return f"{style}_{lang}", number, template.format(c=word, n=number), False


def _nanp(r: random.Random) -> tuple[str, str, str]:
    area = r.choice(["212", "305", "786", "713", "832", "213", "323", "347", "416", "514", "604", "702", "408",
                     "956", "915", "210", "647", "438"])
    exch = str(r.randint(2, 9)) + digits(r, 2)
    while exch[1:] == "11" or exch == "555":
        exch = str(r.randint(2, 9)) + digits(r, 2)
    return area, exch, digits(r, 4)


US_FORMS: PhoneForms = [("paren", lambda r: "({}) {}-{}".format(*_nanp(r))),
                        ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
                        ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))),
                        ("intl", lambda r: "+1 {} {} {}".format(*_nanp(r))),
                        ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r)))]
US_CTX = [("phone", "en"), ("cell", "en"), ("teléfono", "es"), ("celular", "es"), ("téléphone", "fr"),
          ("call the customer at", "en"), ("mobile", "en"), ("número de celular (EE. UU.)", "es")]
UK_FORMS: PhoneForms = [("mobile", lambda r: f"07{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
                        ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
                        ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
                        ("intl_mobile", lambda r: f"+44 7{r.choice('1234579')}{digits(r, 2)} {digits(r, 6)}"),
                        ("intl_zero", lambda r: f"+44 (0)20 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}")]
UK_CTX = [("mobile", "en"), ("tel", "en"), ("phone number", "en"), ("móvil (Reino Unido)", "es"),
          ("telemóvel (UK)", "pt"), ("ring me on", "en")]


def _fr_pairs(r: random.Random, first: str) -> list[str]:
    return [first] + [digits(r, 2) for _ in range(4)]


FR_FORMS: PhoneForms = [("mobile", lambda r: "0" + " ".join(_fr_pairs(r, r.choice("67")))),
                        ("paris", lambda r: "01 " + " ".join(digits(r, 2) for _ in range(4))),
                        ("dots", lambda r: "0" + ".".join(_fr_pairs(r, r.choice("2345")))),
                        ("intl", lambda r: "+33 " + " ".join(_fr_pairs(r, r.choice("67")))),
                        ("compact", lambda r: f"0{r.choice('67')}{digits(r, 8)}")]
FR_CTX = [("portable", "fr"), ("téléphone", "fr"), ("tél.", "fr"), ("telemóvel (França)", "pt"),
          ("móvil francés", "es"), ("numéro du livreur", "fr")]
DE_FORMS: PhoneForms = [("mobile", lambda r: f"01{r.choice(['51', '52', '57', '60', '62', '70', '72', '76'])} "
                                             f"{digits(r, 8)}"),
                        ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
                        ("munich", lambda r: f"089 {r.randint(2, 9)}{digits(r, 6)}"),
                        ("intl", lambda r: f"+49 1{r.choice(['51', '60', '70', '76'])} {digits(r, 8)}"),
                        ("slash", lambda r: f"0171/{digits(r, 7)}")]
DE_CTX = [("Handy", "de"), ("Mobilnummer", "de"), ("Telefon", "de"), ("Tel.", "de"), ("móvil alemán", "es")]
IN_FORMS: PhoneForms = [("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
                        ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
                        ("plain", lambda r: f"{r.choice('6789')}{digits(r, 9)}"),
                        ("delhi", lambda r: f"011-2{digits(r, 7)}"),
                        ("dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}")]
IN_CTX = [("mobile", "en"), ("मोबाइल नंबर", "hi"), ("फ़ोन", "hi"), ("WhatsApp", "en"), ("móvil (India)", "es"),
          ("ਮੋਬਾਈਲ", "pa"), ("மொபைல்", "ta")]


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
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    area, grp, serial = ssn_value(rng)
    style = ["dash", "space", "compact"][i % 3]
    value = {"dash": f"{area}-{grp}-{serial}", "space": f"{area} {grp} {serial}", "compact": area + grp + serial}[style]
    ctx = rng.choice(["SSN", "Social Security number", "número de Seguro Social", "SSN (1099 del repartidor)",
                      "número do Seguro Social (EUA)", "SSN for tax form W-9"])
    return style, value, f"{ctx}: {value}", False


CARD_PREFIXES = {"visa": lambda r: "4", "mc": lambda r: str(r.randint(51, 55)),
                 "mc2": lambda r: str(r.randint(2221, 2720)), "amex": lambda r: r.choice(["34", "37"]),
                 "discover": lambda r: r.choice(["6011", "65"]), "diners": lambda r: "36",
                 "jcb": lambda r: str(r.randint(3528, 3589)),
                 "elo": lambda r: r.choice(["636368", "438935", "504175", "451416", "636297", "509049", "650032"]),
                 "hipercard": lambda r: r.choice(["606282", "384100"])}
CARD_LENGTHS = {"amex": 15, "diners": 14}


def card_number(rng: random.Random, brand: str) -> str:
    """A number in the brand's IIN range and length, completed with its Luhn digit."""
    body = CARD_PREFIXES[brand](rng)
    body += digits(rng, CARD_LENGTHS.get(brand, 16) - 1 - len(body))
    return body + luhn_digit(body)


CARD_CTX = ["número de tarjeta", "número do cartão", "número de targeta", "número da tarxeta", "txartel zenbakia",
            "Card number", "numéro de carte", "Kartennummer", "tarjeta del cliente", "cartão de crédito"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = list(CARD_PREFIXES)[i % len(CARD_PREFIXES)]
    number = card_number(rng, brand)
    sep = ["", " ", "-"][i % 3]
    value = group_card(number, sep) if sep else number
    snip = f"{rng.choice(CARD_CTX)}: {value} venc. {rng.randint(1, 12):02d}/{rng.randint(27, 31)}"
    return f"{brand}_{['compact', 'space', 'dash'][i % 3]}", value, snip, False


IBAN_BBAN = {"ES": "4n4n1n1n10n", "PT": "4n4n11n2n", "AD": "4n4n12c", "FR": "5n5n11c2n", "DE": "8n10n",
             "GB": "4a6n8n", "IT": "1a5n5n12c", "BR": "8n5n10n1a1c", "CR": "4n14n", "DO": "4c20n", "GT": "4c20c",
             "SV": "4a20n"}
IBAN_CTX = ["IBAN", "cuenta IBAN", "IBAN para el pago", "IBAN do estafeta", "compte IBAN", "conta IBAN", "IBAN kontua",
            "Bankverbindung", "IBAN du livreur", "IBAN de la cuenta del restaurante"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    body = bban(rng, IBAN_BBAN[country])
    iban = country + iban_check(country, body) + body
    value = group(iban, 4, " ") if i % 2 else iban
    return f"{country}_{'print' if i % 2 else 'electronic'}", value, f"{rng.choice(IBAN_CTX)}: {value}", False


# ---- the domain's kinds ---------------------------------------------------------------------------------------

def mp_token(rng: random.Random) -> str:
    """A Mercado Pago access token: APP_USR- (or TEST-), app id, a date stamp, 32 hex, the user id."""
    lead = rng.choice(["APP_USR", "APP_USR", "TEST"])
    return f"{lead}-{digits(rng, 16)}-{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 23):02d}-" \
           f"{pick(rng, HEX, 32)}-{rng.randint(10 ** 8, 2 * 10 ** 9)}"


def stripe_key(rng: random.Random) -> str:
    lead = rng.choice(["sk_live_", "rk_live_"])
    return lead + (pick(rng, ALNUM, 24) if rng.random() < 0.4 else "51" + pick(rng, ALNUM, 97))


def pagarme_key(rng: random.Random) -> str:
    return rng.choice(["sk_", "sk_test_"]) + pick(rng, ALNUM, 32)


def adyen_key(rng: random.Random) -> str:
    """Adyen's API key shape: AQE, a base64 body ending ==, a dash, a 44-char base64 part, a dash, 16 printable."""
    tail = pick(rng, string.ascii_letters + string.digits + "!#$%&()*+,.:;<=>?@[]^{|}~", 16)
    return f"AQE{pick(rng, B64, 97)}==-{pick(rng, B64, 43)}=-{tail}"


def conekta_key(rng: random.Random) -> str:
    return "key_" + pick(rng, ALNUM, rng.choice([20, 23, 27]))


def meta_token(rng: random.Random) -> str:
    """A Meta Graph (WhatsApp Cloud API) access token: EAA, an app-specific letter, a long base62 body."""
    return "EAA" + rng.choice("BGIJKLNOSZ") + pick(rng, ALNUM, rng.randint(180, 220))


PROVIDER_LEADS = {
    "mp_access_token": ["MP_ACCESS_TOKEN={v}", "Authorization: Bearer {v}", 'sdk = mercadopago.SDK("{v}")',
                        "access token de Mercado Pago: {v}", "token de produção do Mercado Pago {v}", "{v}"],
    "stripe_secret_key": ["STRIPE_SECRET_KEY={v}", 'stripe.api_key = "{v}"', "Authorization: Bearer {v}",
                          "clave secreta de Stripe: {v}", "-u {v}:", "{v}"],
    "pagarme_secret_key": ["PAGARME_SECRET_KEY={v}", "chave secreta Pagar.me/Stone: {v}", "secret_key: {v}",
                           "Secret_Key da account: {v}", "{v}"],
    "adyen_api_key": ["X-API-Key: {v}", "ADYEN_API_KEY={v}", 'client.xapikey = "{v}"', "API key de Adyen: {v}",
                      "{v}"],
    "conekta_private_key": ["CONEKTA_PRIVATE_KEY={v}", "llave privada de Conekta: {v}", "conekta.api_key = '{v}'",
                            "Authorization: Bearer {v}", "{v}"],
    "whatsapp_token": ["WHATSAPP_TOKEN={v}", "Authorization: Bearer {v}",
                       "GET https://graph.facebook.com/v21.0/me?access_token={v}", "token permanente do WhatsApp: {v}",
                       "{v}"]}
PROVIDER_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "mp_access_token": mp_token, "stripe_secret_key": stripe_key, "pagarme_secret_key": pagarme_key,
    "adyen_api_key": adyen_key, "conekta_private_key": conekta_key, "whatsapp_token": meta_token}


def provider(kind: str) -> Callable[[random.Random, int], Value]:
    """Cases of one provider's key after the leads its docs and users write."""
    def gen(rng: random.Random, i: int) -> Value:
        value = PROVIDER_MAKERS[kind](rng)
        leads = PROVIDER_LEADS[kind]
        lead = leads[i % len(leads)]
        if kind == "pagarme_secret_key" and i % 6 == 5:
            basic = base64.b64encode(f"{value}:".encode()).decode()
            return "basic", basic, f"Authorization: Basic {basic}", False
        if kind == "adyen_api_key" and i % 7 == 6:
            hmac_key = pick(rng, "0123456789ABCDEF", 64)
            return "hmac_key", hmac_key, f"Adyen HMAC key (webhook): {hmac_key}", False
        return f"lead{i % len(leads)}", value, lead.format(v=value), False
    return gen


def jwt_value(rng: random.Random) -> str:
    alg = rng.choice(["RS256", "HS256", "ES256"])
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 8)}
    payload = {"sub": f"rider:{rng.randint(10 ** 5, 10 ** 6)}", "iss": rng.choice(
        ["https://auth.entregas.example", "https://merchant-api.ifood.com.br", "https://id.pedidos.example"]),
        "aud": "orders-api", "iat": 1767225600 + rng.randint(0, 10 ** 7), "scope": "orders:read payouts:read"}
    payload["exp"] = payload["iat"] + 3600
    sig = rng.randbytes({"RS256": 256, "HS256": 32, "ES256": 64}[alg])
    return ".".join(b64url(json.dumps(part, separators=(",", ":")).encode()) for part in (header, payload)) + \
        "." + b64url(sig)


def v_jwt(rng: random.Random, i: int) -> Value:
    value = jwt_value(rng)
    lead = ["Authorization: Bearer {v}", "id_token={v}", "Cookie: access_token={v}", "token del repartidor: {v}",
            '"accessToken": "{v}"', "{v}"][i % 6]
    return f"lead{i % 6}", value, lead.format(v=value), False


COOKIES = [("sessionid", lambda r: pick(r, LOWER + string.digits, 32)),
           ("connect.sid", lambda r: f"s%3A{pick(r, URLSAFE, 32)}.{pick(r, ALNUM + '+/', 43)}"),
           ("laravel_session", lambda r: b64url(r.randbytes(150))),
           ("PHPSESSID", lambda r: pick(r, LOWER + string.digits, 26)),
           ("JSESSIONID", lambda r: pick(r, "0123456789ABCDEF", 32)),
           ("_session_id", lambda r: pick(r, HEX, 32))]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, make = COOKIES[i % len(COOKIES)]
    value = make(rng)
    if i % 2:
        snip = f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure; SameSite=Lax"
    else:
        snip = f"Cookie: lang=es-MX; {name}={value}"
    return name, value, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    style = ["basic", "bearer", "drf_token", "x_auth"][i % 4]
    if style == "basic":
        user = rng.choice(["restaurante42", "pos_api", "rider_ops", "integracao"])
        value = base64.b64encode(f"{user}:{password_value(rng)}".encode()).decode()
        return style, value, f"Authorization: Basic {value}", False
    value = pick(rng, HEX, 40) if style == "drf_token" else pick(rng, URLSAFE, 43)
    lead = {"bearer": "Authorization: Bearer {v}", "drf_token": "Authorization: Token {v}",
            "x_auth": "X-Auth-Token: {v}"}[style]
    return style, value, lead.format(v=value), False


def _pem(der_bytes: bytes, label: str) -> str:
    body = base64.b64encode(der_bytes).decode()
    return f"-----BEGIN {label}-----\n" + group(body, 64, "\n") + f"\n-----END {label}-----"


def v_private_key(rng: random.Random, i: int) -> Value:
    style = ["pkcs8_ec", "sec1_ec", "openssh"][i % 3]
    if style == "openssh":
        seed = rng.randbytes(32)
        key = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"deploy@pos-sync")
        value = _pem(blob, "OPENSSH PRIVATE KEY")
    else:
        key_ec = ec.derive_private_key(rng.randrange(1, 2 ** 255), ec.SECP256R1())
        fmt = serialization.PrivateFormat.PKCS8 if style == "pkcs8_ec" else \
            serialization.PrivateFormat.TraditionalOpenSSL
        value = key_ec.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
    lead = rng.choice(["certificado PIX (chave mTLS):\n{v}", "key.pem:\n{v}", "chave privada do certificado:\n{v}",
                       "{v}"])
    return style, value, lead.format(v=value), False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, rng.choice([16, 32]))
    issuer = rng.choice(["PedidosAdmin", "RiderPay", "PainelRestaurante", "CocinaCentral"])
    style = ["otpauth", "grouped", "labelled"][i % 3]
    if style == "otpauth":
        return style, seed, (f"otpauth://totp/{issuer}:ops{rng.randint(1, 99)}?secret={seed}&issuer={issuer}"
                             "&algorithm=SHA1&digits=6&period=30"), False
    if style == "grouped":
        value = group(seed.lower(), 4, " ")
        return style, value, f"Clave de configuración (2FA): {value}", False
    return style, seed, f"{rng.choice(['TOTP secret', 'semente 2FA', 'secreto TOTP', 'llavor 2FA'])}: {seed}", False


def br_cpf(rng: random.Random) -> str:
    """A CPF: 9 digits, then two mod 11 check digits (weights 10..2, then 11..2)."""
    body = digits(rng, 9)
    while len(set(body)) == 1:
        body = digits(rng, 9)
    for start in (10, 11):
        total = sum(int(d) * w for d, w in zip(body, range(start, 1, -1), strict=True))
        body += str(total * 10 % 11 % 10)
    return body


def v_pix_key(rng: random.Random, i: int) -> Value:
    style = ["cpf", "phone", "email", "evp"][i % 4]
    if style == "cpf":
        c = br_cpf(rng)
        value = f"{c[:3]}.{c[3:6]}.{c[6:9]}-{c[9:]}" if i % 8 < 4 else c
    elif style == "phone":
        value = f"+55{rng.choice(['11', '21', '31', '41', '51', '61', '71', '81', '85', '92'])}9{digits(rng, 8)}"
    elif style == "email":
        value = f"{rng.choice(MAIL_NAMES)}@{rng.choice(MAIL_DOMAINS)}"
    else:
        value = _fid(rng)
    ctx = rng.choice(["Chave PIX", "chave Pix para repasse", "PIX do entregador", "chave aleatória", "Pix key",
                      "clave PIX (Brasil)"])
    return style, value, f"{ctx}: {value}", False


CLABE_BANKS = ["002", "012", "014", "021", "030", "036", "044", "058", "072", "127", "137", "638", "646"]
CLABE_WEIGHTS = ([3, 7, 1] * 6)[:17]


def clabe(rng: random.Random) -> str:
    """An 18-digit CLABE: bank, plaza, account, and the check digit of the 3-7-1 weights (products mod 10)."""
    body = rng.choice(CLABE_BANKS) + digits(rng, 3) + digits(rng, 11)
    total = sum(int(d) * w % 10 for d, w in zip(body, CLABE_WEIGHTS, strict=True))
    return body + str((10 - total % 10) % 10)


def v_clabe(rng: random.Random, i: int) -> Value:
    number = clabe(rng)
    value = f"{number[:3]} {number[3:6]} {number[6:17]} {number[17]}" if i % 2 else number
    ctx = rng.choice(["CLABE interbancaria", "cuenta CLABE", "CLABE para depósito", "CLABE del repartidor", "CLABE"])
    return "spaced" if i % 2 else "compact", value, f"{ctx}: {value}", False


def _ddd(r: random.Random) -> str:
    return r.choice(["11", "21", "31", "41", "51", "61", "71", "81", "85", "19", "27", "48", "62", "92"])


BR_FORMS: PhoneForms = [("paren", lambda r: f"({_ddd(r)}) 9{digits(r, 4)}-{digits(r, 4)}"),
                        ("intl", lambda r: f"+55 {_ddd(r)} 9{digits(r, 4)}-{digits(r, 4)}"),
                        ("e164", lambda r: f"+55{_ddd(r)}9{digits(r, 8)}"),
                        ("fixed", lambda r: f"({_ddd(r)}) {r.randint(2, 5)}{digits(r, 3)}-{digits(r, 4)}"),
                        ("intl_paren", lambda r: f"+55 ({_ddd(r)}) 9{digits(r, 4)} {digits(r, 4)}")]
BR_CTX = [("celular", "pt"), ("WhatsApp", "pt"), ("telefone", "pt"), ("fone", "pt"), ("contato", "pt"),
          ("pumbyry", "gn")]
MX_FORMS: PhoneForms = [("cdmx", lambda r: f"55 {digits(r, 4)} {digits(r, 4)}"),
                        ("intl", lambda r: f"+52 55 {digits(r, 4)} {digits(r, 4)}"),
                        ("gdl", lambda r: f"(33) {digits(r, 4)}-{digits(r, 4)}"),
                        ("mty", lambda r: f"81 {r.randint(1, 9)}{digits(r, 3)} {digits(r, 4)}"),
                        ("old_mobile", lambda r: f"+52 1 {r.choice(['55', '33', '81', '222'])} {digits(r, 3)} "
                                                 f"{digits(r, 4)}")]
MX_CTX = [("cel", "es"), ("celular", "es"), ("teléfono", "es"), ("número de WhatsApp", "es"), ("tel.", "es"),
          ("número de celular", "es")]
ES_FORMS: PhoneForms = [("mobile", lambda r: f"6{digits(r, 2)} {digits(r, 3)} {digits(r, 3)}"),
                        ("intl", lambda r: f"+34 6{digits(r, 2)} {digits(r, 2)} {digits(r, 2)} {digits(r, 2)}"),
                        ("madrid", lambda r: f"91 {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                        ("barcelona", lambda r: f"93 {digits(r, 3)} {digits(r, 2)} {digits(r, 2)}"),
                        ("mobile7", lambda r: f"7{r.randint(1, 4)}{digits(r, 7)}")]
ES_CTX = [("móvil", "es"), ("teléfono", "es"), ("mòbil", "ca"), ("telèfon", "ca"), ("móbil", "gl"),
          ("teléfono de contacto", "gl"), ("mugikorra", "eu"), ("telefonoa", "eu")]
AR_FORMS: PhoneForms = [("intl_mobile", lambda r: f"+54 9 11 {digits(r, 4)}-{digits(r, 4)}"),
                        ("local_15", lambda r: f"11 15-{digits(r, 4)}-{digits(r, 4)}"),
                        ("caba_fixed", lambda r: f"011 4{digits(r, 3)}-{digits(r, 4)}"),
                        ("cordoba", lambda r: f"+54 9 351 {digits(r, 3)}-{digits(r, 4)}"),
                        ("rosario", lambda r: f"0341 15 {digits(r, 3)}-{digits(r, 4)}")]
AR_CTX = [("celu", "es"), ("celular", "es"), ("tel.", "es"), ("pumbyry", "gn"), ("WhatsApp", "es")]
CL_FORMS: PhoneForms = [("intl_mobile", lambda r: f"+56 9 {digits(r, 4)} {digits(r, 4)}"),
                        ("mobile", lambda r: f"9 {digits(r, 4)} {digits(r, 4)}"),
                        ("santiago", lambda r: f"+56 2 2{digits(r, 3)} {digits(r, 4)}"),
                        ("compact", lambda r: f"+569{digits(r, 8)}"),
                        ("paren", lambda r: f"(+56 9) {digits(r, 4)}-{digits(r, 4)}")]
CL_CTX = [("fono", "es"), ("celular", "es"), ("número", "es"), ("WhatsApp", "es"), ("teléfono móvil", "es")]
CO_FORMS: PhoneForms = [("mobile", lambda r: f"3{r.choice(['00', '01', '10', '12', '15', '20', '50'])} {digits(r, 3)} "
                                             f"{digits(r, 4)}"),
                        ("intl", lambda r: f"+57 3{r.randint(0, 2)}{r.randint(0, 9)} {digits(r, 3)} {digits(r, 4)}"),
                        ("bogota", lambda r: f"601 {r.randint(2, 7)}{digits(r, 2)} {digits(r, 4)}"),
                        ("compact", lambda r: f"3{r.randint(0, 2)}{digits(r, 8)}"),
                        ("medellin", lambda r: f"(604) {r.randint(2, 5)}{digits(r, 2)} {digits(r, 4)}")]
CO_CTX = [("celular", "es"), ("cel", "es"), ("teléfono", "es"), ("número de contacto", "es"), ("karu rimana", "qu")]
PT_FORMS: PhoneForms = [("mobile", lambda r: f"9{r.choice('1236')}{digits(r, 1)} {digits(r, 3)} {digits(r, 3)}"),
                        ("intl", lambda r: f"+351 9{r.choice('1236')}{digits(r, 1)} {digits(r, 3)} {digits(r, 3)}"),
                        ("lisboa", lambda r: f"21 {digits(r, 3)} {digits(r, 4)}"),
                        ("porto", lambda r: f"22 {digits(r, 3)} {digits(r, 4)}"),
                        ("compact", lambda r: f"9{r.choice('1236')}{digits(r, 7)}")]
PT_CTX = [("telemóvel", "pt"), ("telefone", "pt"), ("contacto", "pt"), ("n.º de telemóvel", "pt"),
          ("móbil (Portugal)", "gl")]
OTHER_PHONES: dict[str, tuple[PhoneForms, list[tuple[str, str]]]] = {
    "phone_br": (BR_FORMS, BR_CTX), "phone_mx": (MX_FORMS, MX_CTX), "phone_es": (ES_FORMS, ES_CTX),
    "phone_ar": (AR_FORMS, AR_CTX), "phone_cl": (CL_FORMS, CL_CTX), "phone_co": (CO_FORMS, CO_CTX),
    "phone_pt": (PT_FORMS, PT_CTX)}


def other_phone(kind: str) -> Callable[[random.Random, int], Value]:
    forms, ctx = OTHER_PHONES[kind]

    def gen(rng: random.Random, i: int) -> Value:
        return phone_case(rng, i, forms, ctx)
    return gen


# ---- national ids (outside the target) ------------------------------------------------------------------------

DNI_LETTERS = "TRWAGMYFPDXBNJZSQVHLCKE"


def es_dni(rng: random.Random) -> str:
    """A DNI (8 digits and the mod 23 letter) or a NIE (X/Y/Z for 0/1/2, 7 digits, the same letter)."""
    if rng.random() < 0.6:
        number = digits(rng, 8)
        return number + DNI_LETTERS[int(number) % 23]
    lead, number = rng.choice("XYZ"), digits(rng, 7)
    return lead + number + DNI_LETTERS[int(str("XYZ".index(lead)) + number) % 23]


CURP_CHARS = "0123456789ABCDEFGHIJKLMNÑOPQRSTUVWXYZ"
CURP_STATES = ["AS", "BC", "BS", "CC", "CL", "CM", "CS", "CH", "DF", "DG", "GT", "GR", "HG", "JC", "MC", "MN", "MS",
               "NT", "NL", "OC", "PL", "QT", "QR", "SP", "SL", "SR", "TC", "TS", "TL", "VZ", "YN", "ZS", "NE"]
CONSONANTS = "BCDFGHJKLMNPQRSTVWXYZ"


def _birth(rng: random.Random) -> tuple[int, str]:
    year = rng.randint(1960, 2006)
    return year, f"{year % 100:02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"


def mx_curp(rng: random.Random) -> str:
    """A CURP: name letters, birth date, sex, state, inner consonants, the century character and RENAPO's check
    digit (sum of value x (18 - position) over 17 characters, 10 - sum mod 10)."""
    year, born = _birth(rng)
    head = rng.choice(CONSONANTS) + rng.choice("AEIOU") + rng.choice(UPPER) + rng.choice(UPPER)
    body = (head + born + rng.choice("HM") + rng.choice(CURP_STATES) + pick(rng, CONSONANTS, 3)
            + (rng.choice(string.digits) if year < 2000 else rng.choice(UPPER)))
    total = sum(CURP_CHARS.index(c) * (18 - k) for k, c in enumerate(body))
    return body + str((10 - total % 10) % 10)


RFC_CHARS = "0123456789ABCDEFGHIJKLMN&OPQRSTUVWXYZ Ñ"


def mx_rfc(rng: random.Random) -> str:
    """A persona física RFC: 4 letters, birth date, 2 homoclave characters and SAT's mod 11 digit (weights 13..2;
    11 - remainder, 10 written A, remainder 0 written 0)."""
    body = pick(rng, UPPER, 4) + _birth(rng)[1] + pick(rng, UPPER + string.digits, 2)
    rem = sum(RFC_CHARS.index(c) * (13 - k) for k, c in enumerate(body)) % 11
    check = "0" if rem == 0 else ("A" if 11 - rem == 10 else str(11 - rem))
    return body + check


def cl_rut(rng: random.Random) -> str:
    """A RUT, dotted: the body's digits from the right times 2..7 cycling, 11 - sum mod 11 (11 is 0, 10 is K)."""
    body = rng.randint(5_000_000, 26_000_000)
    total = sum(int(d) * (2 + k % 6) for k, d in enumerate(reversed(str(body))))
    check = {11: "0", 10: "K"}.get(11 - total % 11, str(11 - total % 11))
    return f"{body:,}".replace(",", ".") + "-" + check


def ar_cuit(rng: random.Random) -> str:
    """A CUIT/CUIL of a person: 20/23/24/27, the DNI, AFIP's check (weights 5432765432, 11 - mod 11)."""
    while True:
        body = rng.choice(["20", "23", "24", "27"]) + f"{rng.randint(10_000_000, 45_000_000)}"
        check = 11 - sum(int(d) * w for d, w in zip(body, [5, 4, 3, 2, 7, 6, 5, 4, 3, 2], strict=True)) % 11
        if check != 10:
            return f"{body[:2]}-{body[2:]}-{0 if check == 11 else check}"


def pt_nif(rng: random.Random) -> str:
    """A personal NIF: 1, 2 or 3, seven digits, the mod 11 digit (weights 9..2; remainder under 2 gives 0)."""
    body = rng.choice("123") + digits(rng, 7)
    rem = sum(int(d) * w for d, w in zip(body, range(9, 1, -1), strict=True)) % 11
    return body + ("0" if rem < 2 else str(11 - rem))


def _cpf_print(rng: random.Random) -> str:
    c = br_cpf(rng)
    return f"{c[:3]}.{c[3:6]}.{c[6:9]}-{c[9:]}" if rng.random() < 0.7 else c


NATIONAL_IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "es_dni": (es_dni, ["DNI", "NIE", "DNI/NIE del repartidor", "NAN (DNI)", "document d'identitat", "DNI do titular"]),
    "br_cpf": (_cpf_print, ["CPF", "CPF do entregador", "CPF na nota", "CPF do titular"]),
    "mx_curp": (mx_curp, ["CURP", "CURP del repartidor", "Clave Única de Registro de Población"]),
    "mx_rfc": (mx_rfc, ["RFC", "RFC con homoclave", "RFC del socio repartidor"]),
    "cl_rut": (cl_rut, ["RUT", "RUT del repartidor", "Rol Único Tributario"]),
    "ar_cuit": (ar_cuit, ["CUIT", "CUIL", "CUIT del repartidor (monotributo)"]),
    "pt_nif": (pt_nif, ["NIF", "NIF do estafeta", "número de contribuinte"])}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, labels = NATIONAL_IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        return f"label{i % len(labels)}", value, f"{labels[i % len(labels)]}: {value}", False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    **{kind: provider(kind) for kind in PROVIDER_MAKERS},
    "jwt": v_jwt, "session_cookie": v_session_cookie, "auth_header": v_auth_header, "private_key": v_private_key,
    "totp_seed": v_totp_seed, "pix_key": v_pix_key, "clabe": v_clabe,
    **{kind: other_phone(kind) for kind in OTHER_PHONES},
    **{kind: national_id(kind) for kind in NATIONAL_IDS}}

LANGUAGES = frozenset(lang for table in (PW_LABELS, MAIL_CTX, KEY_LABELS, US_CTX, UK_CTX, FR_CTX, DE_CTX, IN_CTX,
                                         BR_CTX, ES_CTX, CO_CTX, PT_CTX) for _w, lang in table)
"""The languages the labels and context words are written in."""


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists."""
    style, secret, snip, raw_only = value
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

def _mod11(body: str, weights: list[int]) -> str:
    rem = sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11
    return "0" if rem < 2 else str(11 - rem)


def cnpj(rng: random.Random) -> str:
    """A company's CNPJ (8-digit root, 0001 head office, two mod 11 digits), as receipts print it."""
    body = digits(rng, 8) + "0001"
    body += _mod11(body, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
    body += _mod11(body, [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2])
    return f"{body[:2]}.{body[2:5]}.{body[5:8]}/{body[8:12]}-{body[12:]}"


def es_cif(rng: random.Random) -> str:
    """A Spanish company's CIF (A: S.A., B: S.L.), seven digits and its control digit."""
    body = digits(rng, 7)
    odd = sum(sum(divmod(int(d) * 2, 10)) for d in body[0::2])
    return rng.choice("AB") + body + str((10 - (odd + sum(int(d) for d in body[1::2])) % 10) % 10)


def ean13(rng: random.Random) -> str:
    """A GS1 EAN-13 with its check digit (weights 1, 3); 789 is GS1 Brasil's prefix, 750 Mexico's, 84 Spain's."""
    body = rng.choice(["789", "750", "84", "560"])
    body += digits(rng, 12 - len(body))
    return body + str((10 - sum(int(d) * (3 if k % 2 else 1) for k, d in enumerate(body)) % 10) % 10)


def nfce_key(rng: random.Random) -> str:
    """An NFC-e access key (44 digits: UF, AAMM, the issuer's CNPJ, model 65, series, number, emission type,
    code, and the mod 11 digit of weights 2..9 from the right), grouped in fours as DANFEs print it."""
    company = "".join(ch for ch in cnpj(rng) if ch.isdigit())
    body = (rng.choice(["35", "33", "31", "41", "43"]) + f"26{rng.randint(1, 12):02d}" + company + "65"
            + f"{rng.randint(1, 999):03d}" + f"{rng.randint(1, 10 ** 6):09d}" + "1" + digits(rng, 8))
    weights = [2 + k % 8 for k in range(43)][::-1]
    rem = sum(int(d) * w for d, w in zip(body, weights, strict=True)) % 11
    return group(body + ("0" if rem < 2 else str(11 - rem)), 4, " ")


def s10_tracking(rng: random.Random) -> str:
    """A UPU S10 item id (Correios): service letters, 8 digits, the check digit (8 6 4 2 3 5 9 7), country."""
    number = digits(rng, 8)
    check = 11 - sum(int(d) * w for d, w in zip(number, [8, 6, 4, 2, 3, 5, 9, 7], strict=True)) % 11
    return f"{rng.choice(['AA', 'LB', 'QB', 'OB', 'NX'])}{number}{ {10: 0, 11: 5}.get(check, check)}BR"


def _luhn_bad(rng: random.Random) -> str:
    body = rng.choice(["4", "5", "6"]) + digits(rng, 14)
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "order_number": lambda r: r.choice([f"Pedido #{_order(r)} confirmado", f"Order {r.randint(10 ** 8, 10 ** 9)} "
                                        "picked up", f"Código de entrega do pedido: {r.randint(1000, 9999)}",
                                        f"Comanda {r.randint(1, 999)} — mesa {r.randint(1, 40)}"]),
    "tracking_number": lambda r: f"Rastreio Correios {s10_tracking(r)}; envío {pick(r, UPPER, 3)}{digits(r, 9)}",
    "css_selector": lambda r: r.choice([f"#checkout-form > button.btn-primary[data-testid=pay-{r.randint(1, 9)}]",
                                        f".menu-item:nth-child({r.randint(1, 30)}) .price--promo",
                                        f"div[data-sku='SKU-{r.randint(100, 999)}'] > span.qty"]),
    "xpath": lambda r: f"//ul[@id='cardapio']/li[{r.randint(1, 40)}]//button[contains(@class,'add-to-cart')]",
    "coordinates": lambda r: f"Restaurante en lat {r.uniform(-34.9, -22.8):.6f}, lng {r.uniform(-70.7, -43.1):.6f} "
                             f"(geofence radio {r.randint(200, 3000)} m)",
    "pixel_size": lambda r: f"menu photo {r.choice([1080, 1200, 1600])}x{r.choice([720, 1080, 900])}px, thumb "
                            f"{r.choice([160, 320, 480])}w @{r.randint(1, 3)}x, banner 1920×{r.randint(300, 600)}",
    "timestamp": lambda r: f"created_at={_ts(r)} epoch_ms={r.randint(1_760_000_000_000, 1_800_000_000_000)} "
                           f"tz=America/Mexico_City",
    "request_id": lambda r: f"X-Request-Id: {_fid(r)} traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
    "cache_hash": lambda r: f"/static/js/main.{pick(r, HEX, 8)}.js?v={pick(r, HEX, 6)} ETag: W/\"{pick(r, HEX, 16)}\"",
    "csrf_field_name": lambda r: r.choice(["<input type=\"hidden\" name=\"csrfmiddlewaretoken\">",
                                           "header X-CSRF-Token is required", "field authenticity_token missing",
                                           "CSRF_COOKIE_NAME = 'csrftoken'", "meta name=\"csrf-token\" not found",
                                           "_csrf field absent from form #checkout"]),
    "placeholder": lambda r: r.choice(["E-mail: tu@ejemplo.com", "Senha: ********", "you@example.com",
                                       "MP_ACCESS_TOKEN=<SEU_ACCESS_TOKEN>", "STRIPE_SECRET_KEY=${STRIPE_SECRET_KEY}",
                                       "contraseña: ••••••••", "Chave PIX: <sua chave aqui>",
                                       "CLABE: 000000000000000000 (ejemplo)", "telefone: (00) 00000-0000"]),
    "masked": lambda r: r.choice([f"cartão **** **** **** {digits(r, 4)}", f"CPF ***.{digits(r, 3)}.{digits(r, 3)}-**",
                                  f"+55 11 9****-{digits(r, 4)}", f"j***@{r.choice(MAIL_DOMAINS)}",
                                  f"CLABE ************{digits(r, 4)}", f"tarjeta terminada en {digits(r, 4)}",
                                  f"IBAN ES** **** **** **** **** {digits(r, 4)}"]),
    "version": lambda r: f"rider-app {r.randint(4, 9)}.{r.randint(0, 30)}.{r.randint(0, 9)} (build "
                         f"{r.randint(10000, 99999)}) Android {r.randint(11, 15)}; Chrome/{r.randint(120, 136)}.0."
                         f"{r.randint(6000, 7000)}.{r.randint(10, 200)}",
    "service_number": lambda r: r.choice([f"SAC: 0800 {digits(r, 3)} {digits(r, 4)} (ligação gratuita)",
                                          f"Central de atendimento 4004-{digits(r, 4)} (capitais)",
                                          f"Atención al cliente: 900 {digits(r, 3)} {digits(r, 3)} (gratuito)",
                                          f"Servicio al cliente 800 {digits(r, 3)} {digits(r, 4)} (sin costo)",
                                          f"Linha de apoio 800 {digits(r, 3)} {digits(r, 3)} (chamada grátis)",
                                          f"Atención 0800-{digits(r, 3)}-{digits(r, 4)}"]),
    "luhn_invalid": lambda r: f"NSU {digits(r, 6)} autorização {digits(r, 6)} ref {_luhn_bad(r)}",
    "amount": lambda r: r.choice([f"Total R$ {r.randint(1, 999)},{r.randint(10, 99)}",
                                  f"Total: $ {r.randint(50, 2000)}.00 MXN",
                                  f"Importe {r.randint(5, 90)},{r.randint(10, 99)} €",
                                  f"ARS {r.randint(1, 99)}.{r.randint(100, 999)},00",
                                  f"propina CLP {r.randint(1, 20)}.{r.randint(100, 999)}"]),
    "business_tax_id": lambda r: r.choice([f"{r.choice(RESTAURANTS)} LTDA — CNPJ {cnpj(r)}",
                                           f"{r.choice(RESTAURANTS)}, S.L. — CIF {es_cif(r)}"]),
    "barcode": lambda r: f"EAN {ean13(r)} PLU {r.randint(3000, 4999)} SKU BURG-{r.randint(1, 999):04d}",
    "nfce_key": lambda r: f"Chave de acesso NFC-e: {nfce_key(r)}",
    "dispatch_metric": lambda r: f"ETA {r.randint(5, 60)} min, distancia {r.randint(1, 15)}.{r.randint(0, 9)} km, "
                                 f"{r.randint(1, 3)} pedidos agrupados, zona {pick(r, UPPER, 3)}-{r.randint(1, 40)}",
    "terminal_id": lambda r: f"TID {digits(r, 8)} loja {r.randint(1, 300)} caixa {r.randint(1, 12)} "
                             f"POS serial {pick(r, UPPER, 2)}{digits(r, 8)}",
    "coupon": lambda r: f"Cupom {r.choice(['PRIMEIRACOMPRA', 'ENVIOGRATIS', 'MARTESDETACOS', 'BEMVINDO'])}"
                        f"{r.choice([10, 15, 20, 25])} aplicado",
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
