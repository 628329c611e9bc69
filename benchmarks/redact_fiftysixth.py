"""The fifty-sixth blind redaction corpus: tourism, transport and hospitality in Southern Europe and the Alps (Italy,
Spain, Portugal, Greece, Malta, Cyprus, Croatia, Slovenia, Switzerland, Austria, Liechtenstein), as an agent that
runs bookings, ticketing, guest services, fleet and station operations and a tour operator's back office sees it.

It was written from the formats' public specifications by someone who read neither the detection rules
(`tracegym/redact/`, their tests, docs/redaction.md) nor the other corpora; only `benchmarks/corpus_formats.py` (the
shared check-digit and encoding helpers) and the interface functions of `benchmarks/redact.py`.

Carriers (the `form` head): `pms` (an Opera/Mews/Protel-style reservation or guest profile, JSON), `channel` (a
channel-manager booking, JSON), `ticketing` (a rail, ferry or bus booking API answer, JSON), `gateway` (a payment
callback of Nexi, Satispay, Bizum, MB WAY, Viva Wallet, TWINT, SumUp or Adyen, JSON), `tool` (the agent's tool
result, JSON), `nested` (a JSON body that holds another JSON document as a string), `whatsapp` and `sms` (guest
threads), `email`, `csv` (a PMS or ticketing export), `log` (a service's log line), `access` (a ski-pass gate or
door-lock log), `xml` (FatturaPA, SII, SAF-T or a NeTEx/SIRI fragment), `qrbill` (a Swiss QR-bill payload),
`helpdesk` (a ticket), `chat` (a Teams or Slack message), `reply` (the agent's own reply), `env`, `yaml`, `cli` (a
shell command), `code` (a source line), `ini` (a credentials file), `url` (a request line or URL), `html` (a mail
link in a page), `pem` (a key file). A form is `carrier/style`; the style is how the value is written (`intl`,
`national`, `compact`, `upper`, `lower`, `space`, `dash`, `zw`, `fullwidth`, `urlenc`, `uescape`, ...). No case is of
form `bare/...`: every phone number has a context word.

Formats and their sources: cards by ISO/IEC 7812 (IIN ranges of Visa, Mastercard 51-55 and 2221-2720, Amex 34/37,
Discover 6011; Luhn check, ISO/IEC 7812-1 annex B); IBANs by ISO 13616 and the SWIFT IBAN registry (BBAN structures
of IT, ES, PT, GR, MT, CY, HR, SI, CH, AT, LI and of DE, FR), MOD 97-10 check digits, with the national checks
computed where they are public and simple: the Italian CIN (the codice fiscale's odd/even tables, mod 26), the
Spanish CCC's two control digits (weights 1,2,4,8,5,10,9,7,3,6, mod 11) and the Portuguese NIB's two check digits
(ISO 7064 MOD 97-10); the other BBANs' inner checks are not computed. Phone numbers by the national numbering plans
(ITU-T E.164 country codes; AGCOM for Italy, CNMC for Spain, ANACOM for Portugal, EETT for Greece, MCA for Malta,
OCECPR for Cyprus, HAKOM for Croatia, AKOS for Slovenia, OFCOM/BAKOM for Switzerland, RTR for Austria, AK for
Liechtenstein; NANP, Ofcom, ARCEP, BNetzA and TRAI for the target's five), drawn in the allocated blocks (London 020
3/7/8, no 0590-0596 overseas numbers among the French, Indian landlines 2-7 ...); Ofcom's and NANP's fiction ranges
are avoided. US SSNs by the SSA's rules (no area 000, 666 or 9xx, no group 00, no serial 0000). AWS keys as AWS's IAM
documentation shows them (AKIA/ASIA and 16 base32 characters; a 40-character secret); Slack, Discord, Microsoft
Teams (Office 365 connector and Power Automate workflow), Google Chat, Telegram Bot API, Mattermost, Rocket.Chat,
Make and Zapier webhooks as their docs print them; Stripe `whsec_` signing secrets; JWTs by RFC 7519/7515; TOTP seeds
by RFC 4648 base32 and Google Authenticator's `otpauth://` key URI format; private keys as PKCS#1, PKCS#8 and SEC 1
DER in PEM (RFC 7468) and OpenSSH's `openssh-key-v1` (real RSA-2048, P-256 and Ed25519 keys, drawn from the seed);
provider keys by their documented prefixes (OpenAI `sk-proj-`, Anthropic `sk-ant-api03-`, Google `AIza`, Stripe
`sk_live_`/`rk_live_`, SendGrid `SG.`, Brevo `xkeysib-`, Mailgun `key-`, Hugging Face `hf_`, GitHub `ghp_` with its
CRC32, Mapbox `sk.`, SumUp `sup_sk_`, HubSpot `pat-eu1-`, DeepL's `:fx` free keys); platform keys that publish no
prefix (Mews client and access tokens, Nexi XPay MAC keys, Amadeus, Hotelbeds, Viva Wallet, Satispay, Mistral,
Twilio auth tokens) as random hex or alphanumerics of the lengths their sandboxes show.

National ids (outside the target, written and reported): the Italian codice fiscale (DM 23/12/1976, the check
character by the odd/even tables), the Spanish DNI and NIE (mod 23 letter, RD 1553/2005), the Portuguese NIF
(mod 11) and Cartao de Cidadao document number (the civil id's mod 11 digit, then Luhn over letters 10-35), the Greek
AMKA (birth date then Luhn), the Swiss AHV/AVS number (756, EAN-13 check), the Austrian social insurance number
(weights 3,7,9,5,8,4,2,1,6, mod 11), the Croatian OIB (ISO 7064 MOD 11,10) and the Slovenian EMSO (weights 7..2,
mod 11). The Maltese identity card number has no published check and is left out.

Judgements (what `secret` is): only what must not survive, verbatim as it stands in `text`: a password, not its
label; the token segment of a webhook URL (Slack's last segment, Discord's token, Teams' connector key and workflow
`sig`, the whole Telegram bot token, Make's and Mattermost's hook id); a connection string's password or key; a
cookie's value; a PEM key's base64 body; the whole JWT, TOTP seed, provider key, e-mail address, phone number,
card number, IBAN and national id as written (with its spaces, dots or case). A disguised value's secret is the
disguised form as it stands (with its zero-width characters, full-width letters, percent or `\\uXXXX` escapes).

Languages: Italian, Spanish, Catalan, Galician, Basque, Portuguese, Greek, Maltese, Croatian, Slovene, German
(Swiss, Austrian), French (Swiss), Romansh, Turkish (Cyprus) and English; the target's US/CA, UK, FR, DE and IN
phones carry English, French or German context words.

Near misses: booking and ticket references, invoice numbers, UUIDs, trace ids, digests, commit hashes, versions,
timestamps, coordinates, measurements, toll-free numbers and short codes named as such, company registration numbers
with their check digits (Partita IVA, CIF, Swiss UID, NIPC, Austrian UID, Slovenian DDV), Luhn-invalid card-like
numbers, IBANs with a wrong check, masked values, placeholders, the vendors' documented example keys, CSS and code
identifiers, paths and URLs without credentials, GTFS/NeTEx ids, Swiss QR and RF creditor references, EAN-13 codes,
password policies and seat or vehicle numbers, in the same carriers as the cases and with no personal data.
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import string
import urllib.parse
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from benchmarks.corpus_formats import (
    B62,
    b64url,
    bban,
    crc_token,
    der,
    der_int,
    der_seq,
    digits,
    group,
    group_card,
    iban_check,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 56
PER_KIND = 100

OUTSIDE_TARGET = frozenset({"codice_fiscale", "dni_nie", "nif_pt", "cc_pt", "amka", "ahv", "svnr_at", "oib",
                            "emso"})

ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
B64U = ALNUM + "-_"
HEX = "0123456789abcdef"
HEXU = HEX.upper()
B32 = string.ascii_uppercase + "234567"
LOWER_ALNUM = string.ascii_lowercase + string.digits


@dataclass(frozen=True)
class Case:
    kind: str
    form: str
    secret: str
    text: str
    is_json: bool

    @property
    def carried(self) -> str:
        return self.text


def dumps(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


# ---- domain fillers -------------------------------------------------------------------------------------------

HOTELS = ["Albergo del Lago", "Hotel Belvedere", "Parador Sa Pedrera", "Quinta das Oliveiras", "Ξενοδοχείο Αίγλη",
          "Hotel Il-Port", "Kyrenia Bay Suites", "Hotel Adriatik", "Vila Bled", "Berghotel Alpenblick",
          "Gasthof Zum Hirschen", "Hotel Malbun", "Chasa Rumantscha", "Hostal Bidasoa", "Pensão Ribeira"]
STATIONS = ["Milano Centrale", "Roma Termini", "Madrid Puerta de Atocha", "Barcelona Sants", "Lisboa Oriente",
            "Porto Campanhã", "Pireas", "Split Luka", "Ljubljana", "Zürich HB", "Wien Hbf", "Innsbruck Hbf",
            "Brig", "St. Moritz", "Valletta Ferry Terminal", "Larnaca Marina"]
GUESTS = ["Giulia Bianchi", "Marco Esposito", "Lucía Fernández", "Jordi Puig", "Xoán Vázquez", "Ane Etxeberria",
          "João Silva", "Maria Santos", "Γιώργος Παπαδόπουλος", "Ελένη Κωνσταντίνου", "Joseph Borg",
          "Maria Camilleri", "Andreas Georgiou", "Mehmet Öztürk", "Ivana Horvat", "Luka Kovačević", "Nina Novak",
          "Matej Kranjc", "Lukas Müller", "Anna Gruber", "Claire Rochat", "Gian Andri Caduff", "Andrea Frick",
          "Emily Johnson", "Priya Sharma", "James Walker", "Camille Dubois", "Jonas Schmidt"]
LANGS = ["it", "es", "ca", "gl", "eu", "pt", "el", "mt", "hr", "sl", "de", "fr", "rm", "tr", "en"]
GREET = {"it": "Buongiorno, ecco i dati", "es": "Hola, estos son los datos", "ca": "Bon dia, aquí teniu les dades",
         "gl": "Ola, velaquí os datos", "eu": "Kaixo, hona hemen datuak", "pt": "Bom dia, seguem os dados",
         "el": "Καλημέρα, ορίστε τα στοιχεία", "mt": "Bonġu, hawn huma d-dettalji", "hr": "Dobar dan, evo podataka",
         "sl": "Dober dan, tu so podatki", "de": "Grüezi, hier die Angaben", "fr": "Bonjour, voici les données",
         "rm": "Bun di, qua las datas", "tr": "Merhaba, bilgiler şöyle", "en": "Hello, here are the details"}


def conf_no(rng: random.Random) -> str:
    return digits(rng, 9)


def stamp(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}" \
           f":{rng.randint(0, 59):02d}Z"


def carry(rng: random.Random, i: int, label: str, key: str, value: str, lang: str,
          only: tuple[str, ...] = ()) -> tuple[str, str, bool]:
    """`value` under a context `label` (in `lang`) or JSON `key`, in one of the domain's carriers: JSON for about
    a third of the cases. Returns (carrier, text, is_json)."""
    name = rng.choice(GUESTS)
    hotel = rng.choice(HOTELS)
    if only:
        carrier = only[i % len(only)]
    elif i % 3 == 0:
        carrier = ["pms", "channel", "ticketing", "gateway", "tool", "nested"][(i // 3) % 6]
    else:
        carrier = ["whatsapp", "sms", "email", "csv", "log", "helpdesk", "chat", "reply", "access", "xml"][
            (i // 3 + i) % 10]
    if carrier == "pms":
        doc = {"reservation": {"confirmationNo": conf_no(rng), "property": hotel, "status": "RESERVED",
                               "profile": {"name": name, "language": lang, key: value},
                               "arrival": "2026-08-14", "nights": rng.randint(1, 9)}}
        return carrier, dumps(doc), True
    if carrier == "channel":
        doc = {"channel": rng.choice(["Booking.com", "Expedia", "Airbnb", "HRS"]), "bookingId": digits(rng, 10),
               "hotelCode": pick(rng, string.ascii_uppercase, 5), "customer": {"fullName": name, key: value,
                                                                                 "remarks": label}}
        return carrier, dumps(doc), True
    if carrier == "ticketing":
        doc = {"pnr": pick(rng, string.ascii_uppercase + string.digits, 6), "journey": {
            "origin": rng.choice(STATIONS), "destination": rng.choice(STATIONS), "date": "2026-07-21"},
            "passengers": [{"name": name, "fareClass": rng.choice(["2", "1", "Business"]), key: value}]}
        return carrier, dumps(doc), True
    if carrier == "gateway":
        doc = {"event": "payment.authorized", "provider": rng.choice(["Nexi", "Satispay", "Bizum", "MB WAY",
                                                                       "Viva Wallet", "TWINT", "SumUp", "Adyen"]),
               "amount": {"value": rng.randint(1500, 99000), "currency": rng.choice(["EUR", "CHF"])},
               "payer": {key: value}, "orderId": "ORD-" + digits(rng, 8)}
        return carrier, dumps(doc), True
    if carrier == "tool":
        doc = {"tool": rng.choice(["lookup_guest", "get_booking", "search_profiles", "fetch_ticket"]),
               "ok": True, "result": {"guest": name, key: value, "note": label}}
        return carrier, dumps(doc), True
    if carrier == "nested":
        inner = dumps({"guest": {"name": name, key: value}})
        return carrier, dumps({"type": "webhook", "source": "channel-manager", "body": inner}), True
    if carrier == "whatsapp":
        return carrier, f"[14/07/2026, {rng.randint(7, 22):02d}:{rng.randint(0, 59):02d}] {name}: " \
                        f"{GREET[lang]}. {label} {value}", False
    if carrier == "sms":
        return carrier, f"SMS in ({hotel}): {GREET[lang]} - {label} {value}", False
    if carrier == "email":
        return carrier, f"From: {hotel} Reception\nSubject: Booking {conf_no(rng)}\n\n{GREET[lang]}:\n" \
                        f"{name}\n{label} {value}\n\nBest regards", False
    if carrier == "csv":
        return carrier, f"confirmation;arrival;guest;{key}\n{conf_no(rng)};2026-08-0{rng.randint(1, 9)};" \
                        f"{name};{value}", False
    if carrier == "log":
        return carrier, f"{stamp(rng)} INFO pms.sync profile={digits(rng, 7)} {label} {value} synced", False
    if carrier == "helpdesk":
        return carrier, f"Ticket #{digits(rng, 5)} ({hotel})\nGuest {name} asks to update the profile. " \
                        f"{label} {value}", False
    if carrier == "chat":
        return carrier, f"{rng.choice(['Front desk', 'Night audit', 'Concierge'])} (Teams): {name} - {label} " \
                        f"{value}", False
    if carrier == "reply":
        return carrier, f"I found the reservation for {name} at {hotel}. {label} {value}", False
    if carrier == "access":
        return carrier, f"{stamp(rng)} GATE-{rng.randint(1, 12)} pass={digits(rng, 8)} holder=\"{name}\" " \
                        f"{label} {value}", False
    # xml
    return "xml", f"<Contatti><Nome>{name}</Nome><Nota>{label}</Nota><{key}>{value}</{key}></Contatti>", False


# ---- phones ---------------------------------------------------------------------------------------------------

PHONE_WORDS = {
    "it": ["Tel.", "cellulare:", "telefono dell'ospite:", "chiamare il", "recapito telefonico"],
    "es": ["teléfono:", "móvil:", "Tel.", "llamar al"], "ca": ["telèfon:", "mòbil:"], "gl": ["móbil:", "teléfono:"],
    "eu": ["telefonoa:", "mugikorra:"], "pt": ["telemóvel:", "telefone:", "contacto:"],
    "el": ["τηλέφωνο:", "κινητό:", "τηλ."], "mt": ["numru tat-telefon:", "mowbajl:", "mobile:"],
    "tr": ["telefon:", "cep telefonu:"], "hr": ["telefon:", "mobitel:", "broj mobitela:"],
    "sl": ["telefon:", "GSM:", "tel. št.:", "mobilni telefon:"],
    "de": ["Telefon:", "Natel:", "Handy:", "Tel.", "Mobil:"],
    "fr": ["téléphone :", "portable :", "tél."], "rm": ["telefon:"], "en": ["phone:", "mobile:", "tel", "cell:"],
}


def d(rng: random.Random, n: int) -> str:
    return digits(rng, n)


def nz(rng: random.Random, n: int) -> str:
    """n digits, the first not 0 or 1 (subscriber numbers do not start with the trunk or a service digit)."""
    return str(rng.randint(2, 9)) + digits(rng, n - 1)


def spaced(s: str, sizes: tuple[int, ...], sep: str = " ") -> str:
    out, at = [], 0
    for size in sizes:
        out.append(s[at:at + size])
        at += size
    if at < len(s):
        out.append(s[at:])
    return sep.join(p for p in out if p)


def phone_it(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = "3" + rng.choice(["20", "24", "28", "29", "30", "33", "34", "35", "36", "37", "38", "39", "40", "45",
                              "46", "47", "48", "49", "51", "66", "88", "92"]) + d(rng, 7)
        style = ["intl", "national", "compact", "slash", "intl00"][i % 5]
        return style, {"intl": "+39 " + spaced(n, (3, 3, 4)), "national": spaced(n, (3, 3, 4)), "compact": n,
                       "slash": n[:3] + "/" + n[3:], "intl00": "0039 " + n[:3] + " " + n[3:]}[style]
    area = rng.choice(["06", "02", "055", "081", "041", "0471", "0942", "011", "0461"])
    n = area + nz(rng, 10 - len(area))
    return ("landline_intl", "+39 " + area + " " + n[len(area):]) if i % 2 else ("landline", area + " " + n[len(area):])


def phone_es(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = "6" + d(rng, 8) if i % 4 else "7" + str(rng.randint(1, 4)) + d(rng, 7)
        style = ["intl", "national", "pairs", "e164", "intl00"][i % 5]
        return style, {"intl": "+34 " + spaced(n, (3, 3, 3)), "national": spaced(n, (3, 3, 3)),
                       "pairs": spaced(n, (3, 2, 2, 2)), "e164": "+34" + n, "intl00": "0034 " + n}[style]
    area = rng.choice(["91", "93", "971", "928", "952", "981", "944", "922"])
    n = area + nz(rng, 9 - len(area))
    return ("landline", spaced(n, (len(area), 3, 2, 2)) if len(area) == 2 else spaced(n, (3, 2, 2, 2)))


def phone_pt(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = "9" + rng.choice("1236") + d(rng, 7)
        style = ["intl", "national", "compact", "e164"][i % 4]
        return style, {"intl": "+351 " + spaced(n, (3, 3, 3)), "national": spaced(n, (3, 3, 3)), "compact": n,
                       "e164": "+351" + n}[style]
    area = rng.choice(["21", "22", "289", "291", "296"])
    n = area + nz(rng, 9 - len(area))
    return "landline", (area + " " + spaced(n[2:], (3, 4)) if len(area) == 2 else spaced(n, (3, 3, 3)))


def phone_gr(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = "69" + rng.choice("0345789") + d(rng, 7)
        style = ["intl", "national", "compact", "intl00"][i % 4]
        return style, {"intl": "+30 " + spaced(n, (3, 3, 4)), "national": spaced(n, (3, 3, 4)), "compact": n,
                       "intl00": "0030 " + n}[style]
    area = rng.choice(["210", "2310", "2810", "22840", "26610"])
    n = area + nz(rng, 10 - len(area))
    return ("landline_intl", "+30 " + n) if i % 2 else ("landline", area + " " + n[len(area):])


def phone_mt(rng: random.Random, i: int) -> tuple[str, str]:
    n = rng.choice(["79", "99", "77", "79", "21", "27"]) + d(rng, 6)
    style = ["intl", "national", "compact_intl"][i % 3]
    return style, {"intl": "+356 " + spaced(n, (4, 4)), "national": spaced(n, (4, 4)),
                   "compact_intl": "+356" + n}[style]


def phone_cy(rng: random.Random, i: int) -> tuple[str, str]:
    n = rng.choice(["99", "96", "97", "99", "22", "25", "24", "26"]) + nz(rng, 6)
    style = ["intl", "national", "compact", "intl00"][i % 4]
    return style, {"intl": "+357 " + n[:2] + " " + n[2:], "national": n[:2] + " " + n[2:], "compact": n,
                   "intl00": "00357 " + n}[style]


def phone_hr(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = "9" + rng.choice("12589") + d(rng, 7)
        style = ["intl", "national", "slash"][i % 3]
        return style, {"intl": "+385 " + spaced(n, (2, 3, 4)), "national": "0" + spaced(n, (2, 3, 4)),
                       "slash": "0" + n[:2] + "/" + n[2:]}[style]
    area = rng.choice(["1", "21", "20", "52", "51"])
    n = area + nz(rng, 8 - len(area))
    return ("landline_intl", "+385 " + area + " " + n[len(area):]) if i % 2 else \
        ("landline", "0" + area + " " + n[len(area):])


def phone_si(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = rng.choice(["30", "31", "40", "41", "51", "64", "68", "70", "71"]) + d(rng, 6)
        style = ["intl", "national", "compact"][i % 3]
        return style, {"intl": "+386 " + spaced(n, (2, 3, 3)), "national": "0" + spaced(n, (2, 3, 3)),
                       "compact": "0" + n}[style]
    area = rng.choice(["1", "4", "5", "2"])
    n = area + str(rng.randint(2, 8)) + d(rng, 6)
    return "landline", "0" + area + " " + spaced(n[1:], (3, 2, 2))


def phone_ch(rng: random.Random, i: int) -> tuple[str, str]:
    n = (rng.choice(["75", "76", "77", "78", "79"]) if i % 3 != 2 else rng.choice(["44", "22", "31", "81", "27",
                                                                                   "91", "41"])) + nz(rng, 7)
    style = ["intl", "national", "compact_intl", "intl00", "national"][i % 5]
    return style, {"intl": "+41 " + spaced(n, (2, 3, 2, 2)), "national": "0" + spaced(n, (2, 3, 2, 2)),
                   "compact_intl": "+41" + n, "intl00": "0041 " + spaced(n, (2, 3, 2, 2))}[style]


def phone_at(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = "6" + rng.choice(["64", "60", "76", "50", "99", "81", "88"]) + d(rng, 7)
        style = ["intl", "national", "slash", "intl_paren"][i % 4]
        return style, {"intl": "+43 " + n[:3] + " " + n[3:], "national": "0" + n[:3] + " " + n[3:],
                       "slash": "0" + n[:3] + "/" + spaced(n[3:], (3, 2, 2)),
                       "intl_paren": "+43 (0)" + n[:3] + " " + n[3:]}[style]
    area = rng.choice(["1", "512", "662", "5356", "5412"])
    n = area + nz(rng, 10 - len(area) - (1 if area == "1" else 0))
    return "landline", "0" + area + " " + n[len(area):]


def phone_li(rng: random.Random, i: int) -> tuple[str, str]:
    pre = rng.choice(["23", "78", "79", "73", "77", "370", "375", "380", "384", "390", "392", "260"])
    n = pre + d(rng, 7 - len(pre))
    style = ["intl", "intl00", "compact_intl", "national"][i % 4]
    return style, {"intl": "+423 " + spaced(n, (3, 2, 2)), "intl00": "00423 " + spaced(n, (3, 2, 2)),
                   "compact_intl": "+423" + n, "national": spaced(n, (3, 2, 2))}[style]


def phone_us_ca(rng: random.Random, i: int) -> tuple[str, str]:
    area = rng.choice(["212", "646", "415", "310", "617", "312", "305", "202", "604", "416", "514", "403", "613",
                       "702", "206"])
    exch = str(rng.randint(2, 9)) + d(rng, 2)
    while exch[1:] == "11" or exch == "555":
        exch = str(rng.randint(2, 9)) + d(rng, 2)
    line = d(rng, 4)
    style = ["paren", "dash", "intl", "dot", "one_dash", "e164"][i % 6]
    return style, {"paren": f"({area}) {exch}-{line}", "dash": f"{area}-{exch}-{line}",
                   "intl": f"+1 {area} {exch} {line}", "dot": f"{area}.{exch}.{line}",
                   "one_dash": f"1-{area}-{exch}-{line}", "e164": f"+1{area}{exch}{line}"}[style]


UK_LOCAL = {"20": "378", "161": "2345678", "131": "2345678", "117": "2349", "113": "23458"}
"""The first digits of local numbers Ofcom has allocated under each geographic code used here."""


def phone_uk(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = "7" + rng.choice("45789") + d(rng, 8)
        while n.startswith("7700"):
            n = "7" + rng.choice("45789") + d(rng, 8)
        style = ["national", "intl", "e164", "intl_paren"][i % 4]
        return style, {"national": "0" + n[:4] + " " + n[4:], "intl": "+44 " + n[:4] + " " + n[4:],
                       "e164": "+44" + n, "intl_paren": "+44 (0)" + n[:4] + " " + n[4:]}[style]
    area = rng.choice(["20", "161", "131", "117", "113"])
    local = rng.choice(UK_LOCAL[area]) + d(rng, 9 - len(area))
    while local.startswith(("7946", "496")):
        local = rng.choice(UK_LOCAL[area]) + d(rng, 9 - len(area))
    if area == "20":
        return "landline", "020 " + local[:4] + " " + local[4:]
    return "landline", "0" + area + " " + local[:3] + " " + local[3:]


def phone_fr(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 == 2:
        n = rng.choice("12345") + nz(rng, 8)
        while n.startswith("59"):  # 0590, 0594, 0596: the overseas departments
            n = rng.choice("12345") + nz(rng, 8)
    else:
        n = "6" + rng.choice("01245678") + d(rng, 7) if i % 4 else "7" + rng.choice("345678") + d(rng, 7)
    style = ["national", "intl", "compact", "dot", "intl_compact"][i % 5]
    return style, {"national": "0" + spaced(n, (1, 2, 2, 2, 2)), "intl": "+33 " + spaced(n, (1, 2, 2, 2, 2)),
                   "compact": "0" + n, "dot": "0" + spaced(n, (1, 2, 2, 2, 2), "."), "intl_compact": "+33" + n}[style]


def phone_de(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        pre = rng.choice(["151", "152", "160", "170", "171", "172", "176", "157"])
        n = pre + d(rng, 8 if pre in ("151", "152", "176", "157") else 7)
        style = ["national", "intl", "slash", "intl_paren"][i % 4]
        return style, {"national": "0" + n[:3] + " " + n[3:], "intl": "+49 " + n[:3] + " " + n[3:],
                       "slash": "0" + n[:3] + "/" + n[3:], "intl_paren": "+49 (0)" + n[:3] + " " + n[3:]}[style]
    area = rng.choice(["30", "89", "40", "69", "221"])
    n = nz(rng, 10 - len(area))
    return ("landline", "0" + area + " " + n) if i % 2 else ("landline_intl", "+49 " + area + " " + n)


def phone_in(rng: random.Random, i: int) -> tuple[str, str]:
    if i % 3 != 2:
        n = rng.choice("6789") + d(rng, 9)
        style = ["intl", "national", "compact", "intl_dash", "zero"][i % 5]
        return style, {"intl": "+91 " + n[:5] + " " + n[5:], "national": n[:5] + " " + n[5:], "compact": n,
                       "intl_dash": "+91-" + n, "zero": "0" + n[:5] + " " + n[5:]}[style]
    area = rng.choice(["11", "22", "80", "44", "33"])
    n = str(rng.randint(2, 7)) + d(rng, 7)
    return "landline", "0" + area + " " + n[:4] + " " + n[4:]


PHONES: dict[str, tuple[Callable[[random.Random, int], tuple[str, str]], list[str]]] = {
    "phone_us_ca": (phone_us_ca, ["en", "fr"]), "phone_uk": (phone_uk, ["en"]), "phone_fr": (phone_fr, ["fr"]),
    "phone_de": (phone_de, ["de"]), "phone_in": (phone_in, ["en"]),
    "phone_it": (phone_it, ["it"]), "phone_es": (phone_es, ["es", "ca", "gl", "eu"]), "phone_pt": (phone_pt, ["pt"]),
    "phone_gr": (phone_gr, ["el"]), "phone_mt": (phone_mt, ["mt", "en"]), "phone_cy": (phone_cy, ["el", "tr", "en"]),
    "phone_hr": (phone_hr, ["hr"]), "phone_si": (phone_si, ["sl"]), "phone_ch": (phone_ch, ["de", "fr", "it", "rm"]),
    "phone_at": (phone_at, ["de"]), "phone_li": (phone_li, ["de"]),
}


def phone_cases(kind: str, rng: random.Random) -> Iterator[Case]:
    make, langs = PHONES[kind]
    for i in range(PER_KIND):
        style, value = make(rng, i)
        lang = langs[i % len(langs)]
        if kind == "phone_us_ca" and lang == "fr":
            label = rng.choice(["cellulaire :", "téléphone :"])
        else:
            label = rng.choice(PHONE_WORDS[lang])
        key = rng.choice(["phone", "mobile", "telefono", "telefon", "phoneNumber"])
        carrier, text, is_json = carry(rng, i, label, key, value, lang)
        yield Case(kind, f"{carrier}/{style}", value, text, is_json)


# ---- e-mail ---------------------------------------------------------------------------------------------------

MAIL_DOMAINS = ["libero.it", "tiscali.it", "virgilio.it", "gmail.com", "hotmail.es", "telefonica.net", "sapo.pt",
                "otenet.gr", "yahoo.gr", "maltanet.net", "cytanet.com.cy", "t-com.hr", "siol.net", "bluewin.ch",
                "gmx.at", "aon.at", "outlook.com", "icloud.com", "web.de", "orange.fr"]
IDN_MAILS = ["josé.garcía@correo.es", "françois.rochat@bluewin.ch", "jürgen.größ@gmx.at", "ελένη@παράδειγμα.gr",
             "andrés@ñandú.es", "joão.conceição@sapo.pt", "luka.kovačević@t-com.hr", "špela.žagar@siol.net",
             "gülşen.öztürk@cytanet.com.cy", "θανάσης.παππάς@otenet.gr"]


def local_part(rng: random.Random) -> str:
    first = rng.choice(["giulia", "marco", "lucia", "jordi", "ane", "joao", "maria", "giorgos", "eleni", "joseph",
                        "andreas", "mehmet", "ivana", "luka", "nina", "matej", "lukas", "anna", "claire", "gian",
                        "andrea", "emily", "priya", "camille"])
    last = rng.choice(["bianchi", "esposito", "fernandez", "puig", "etxeberria", "silva", "santos", "papadopoulos",
                       "borg", "camilleri", "georgiou", "ozturk", "horvat", "novak", "kranjc", "mueller", "gruber",
                       "rochat", "caduff", "frick", "johnson", "sharma", "dubois"])
    return rng.choice([f"{first}.{last}", f"{first}{last}{rng.randint(1, 99)}", f"{first[0]}.{last}",
                       f"{last}.{first}", f"{first}_{last}"])


def email_cases(rng: random.Random) -> Iterator[Case]:
    labels = {"it": "email:", "es": "correo electrónico:", "pt": "e-mail:", "el": "email:", "hr": "e-pošta:",
              "sl": "e-pošta:", "de": "E-Mail:", "fr": "courriel :", "ca": "correu:", "mt": "email:",
              "tr": "e-posta:", "en": "email:", "eu": "helbide elektronikoa:", "gl": "correo:", "rm": "e-mail:"}
    for i in range(PER_KIND):
        addr = f"{local_part(rng)}@{rng.choice(MAIL_DOMAINS)}"
        lang = rng.choice(list(labels))
        style = ["plain", "upper", "idn", "urlenc", "uescape", "mailto", "plain", "title"][i % 8]
        if style == "upper":
            value = addr.upper()
        elif style == "idn":
            value = IDN_MAILS[i % len(IDN_MAILS)]
        elif style == "title":
            value = addr[0].upper() + addr[1:]
        elif style == "urlenc":
            value = urllib.parse.quote(addr, safe="")
            url = f"GET /api/v2/guests/search?email={value}&property={pick(rng, string.ascii_uppercase, 4)} HTTP/1.1"
            text = [f"{stamp(rng)} nginx {url} 200", f"curl -s 'https://pms.example-hotel.it{url.split()[1]}'",
                    f"Tool call: http_get(\"https://api.channel.example{url.split()[1]}\")"][i % 3]
            yield Case("email", f"url/{style}", value, text, False)
            continue
        elif style == "uescape":
            value = addr.replace("@", "\\u0040")
            text = f"{stamp(rng)} DEBUG webhook raw body: {{\"guestEmail\":\"{value}\",\"lang\":\"{lang}\"}}"
            yield Case("email", f"log/{style}", value, text, False)
            continue
        elif style == "mailto":
            value = addr
            text = f"<p>Contact the guest: <a href=\"mailto:{value}?subject=Prenotazione\">{value}</a></p>"
            yield Case("email", f"html/{style}", value, text, False)
            continue
        else:
            value = addr
        carrier, text, is_json = carry(rng, i, labels[lang], "email", value, lang)
        yield Case("email", f"{carrier}/{style}", value, text, is_json)


# ---- ssn, card, iban ------------------------------------------------------------------------------------------

def ssn_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        area = rng.randint(1, 899)
        while area == 666:
            area = rng.randint(1, 899)
        g, s = rng.randint(1, 99), rng.randint(1, 9999)
        style = ["dash", "space", "compact", "dash"][i % 4]
        value = {"dash": f"{area:03d}-{g:02d}-{s:04d}", "space": f"{area:03d} {g:02d} {s:04d}",
                 "compact": f"{area:03d}{g:02d}{s:04d}"}[style]
        label = rng.choice(["SSN:", "Social Security No.", "SSN (W-9):", "social security number", "TIN/SSN:"])
        if i % 5 == 4:
            text = f"W-9 received from US tour leader {rng.choice(GUESTS)} for the {rng.choice(STATIONS)} " \
                   f"program; {label} {value}; backup withholding: no"
            yield Case("ssn", f"email/{style}", value, text, False)
            continue
        carrier, text, is_json = carry(rng, i, label, "ssn", value, "en")
        yield Case("ssn", f"{carrier}/{style}", value, text, is_json)


def card_number(rng: random.Random, i: int) -> str:
    brand = i % 5
    if brand == 0:
        partial = "4" + d(rng, 14)
    elif brand == 1:
        partial = str(rng.randint(51, 55)) + d(rng, 13)
    elif brand == 2:
        partial = str(rng.randint(2221, 2720)) + d(rng, 11)
    elif brand == 3:
        partial = rng.choice(["34", "37"]) + d(rng, 12)
    else:
        partial = "6011" + d(rng, 11)
    return partial + luhn_digit(partial)


def card_cases(rng: random.Random) -> Iterator[Case]:
    labels = {"it": "numero carta:", "es": "número de tarjeta:", "pt": "número do cartão:", "el": "αριθμός κάρτας:",
              "hr": "broj kartice:", "sl": "številka kartice:", "de": "Kartennummer:", "fr": "numéro de carte :",
              "en": "card number:", "ca": "número de targeta:", "mt": "numru tal-karta:", "tr": "kart numarası:"}
    seps = {"dash": "-", "space": " ", "dot": ".", "underscore": "_", "compact": ""}
    for i in range(PER_KIND):
        number = card_number(rng, i)
        style = list(seps)[(i // 5 + i) % 5]
        value = group_card(number, seps[style])
        lang = rng.choice(list(labels))
        if i % 7 == 6:
            text = f"{stamp(rng)} POS-{rng.randint(1, 40)} {rng.choice(['Nexi', 'SumUp', 'Adyen'])} DECLINED " \
                   f"pan={value} exp={rng.randint(1, 12):02d}/{rng.randint(27, 31)} rc=05"
            yield Case("card", f"log/{style}", value, text, False)
            continue
        carrier, text, is_json = carry(rng, i, labels[lang], "cardNumber", value, lang)
        yield Case("card", f"{carrier}/{style}", value, text, is_json)


CIN_ODD = dict(zip(string.digits + string.ascii_uppercase,
                   [1, 0, 5, 7, 9, 13, 15, 17, 19, 21] + [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6,
                                                           8, 12, 14, 16, 10, 22, 25, 24, 23], strict=True))


def odd_even_char(s: str) -> str:
    """The check character of the codice fiscale and of the Italian CIN: odd positions (1st, 3rd, ...) by the odd
    table, even positions by their value (digit, or letter A=0), sum mod 26 as a letter."""
    total = 0
    for pos, ch in enumerate(s):
        if pos % 2 == 0:
            total += CIN_ODD[ch]
        else:
            total += int(ch) if ch.isdigit() else ord(ch) - 65
    return chr(65 + total % 26)


def ccc_digit(s: str) -> str:
    w = [1, 2, 4, 8, 5, 10, 9, 7, 3, 6]
    r = 11 - sum(int(c) * x for c, x in zip(s, w, strict=True)) % 11
    return {10: "1", 11: "0"}.get(r, str(r))


IBAN_BBAN = {"CH": "5n12c", "AT": "5n11n", "LI": "5n12c", "GR": "3n4n16c", "MT": "4a5n18c", "CY": "3n5n16c",
             "HR": "7n10n", "SI": "5n8n2n", "DE": "8n10n", "FR": "5n5n11c2n"}


def make_iban(rng: random.Random, country: str) -> str:
    if country == "IT":
        body = d(rng, 5) + d(rng, 5) + d(rng, 12)
        b = odd_even_char(body) + body
    elif country == "ES":
        bank, branch, acct = d(rng, 4), d(rng, 4), d(rng, 10)
        b = bank + branch + ccc_digit("00" + bank + branch) + ccc_digit(acct) + acct
    elif country == "PT":
        body = d(rng, 4) + d(rng, 4) + d(rng, 11)
        b = body + f"{98 - int(body + '00') % 97:02d}"
    else:
        b = bban(rng, IBAN_BBAN[country])
    return country + iban_check(country, b) + b


def iban_cases(rng: random.Random) -> Iterator[Case]:
    countries = ["IT", "ES", "PT", "GR", "MT", "CY", "HR", "SI", "CH", "AT", "LI", "IT", "ES", "DE", "FR"]
    labels = {"it": "IBAN per il rimborso:", "es": "IBAN para la devolución:", "pt": "IBAN para reembolso:",
              "el": "IBAN επιστροφής:", "mt": "IBAN għar-rifużjoni:", "hr": "IBAN za povrat:", "sl": "IBAN za vračilo:",
              "de": "IBAN für die Rückerstattung:", "fr": "IBAN pour le remboursement :", "en": "refund IBAN:",
              "ca": "IBAN per al retorn:", "tr": "iade IBAN:"}
    for i in range(PER_KIND):
        country = countries[i % len(countries)]
        iban = make_iban(rng, country)
        style = ["space", "compact", "lower_compact", "lower_space", "space"][(i // 3 + i) % 5]
        value = {"space": group(iban, 4, " "), "compact": iban, "lower_compact": iban.lower(),
                 "lower_space": group(iban.lower(), 4, " ")}[style]
        lang = rng.choice(list(labels))
        if i % 8 == 7 and country in ("CH", "LI") and " " not in value:
            name = rng.choice(GUESTS)
            text = "\n".join(["SPC", "0200", "1", value, "S", name, "Via Maistra", "12", "7500", "St. Moritz", "CH",
                              "", "", "", "", "", "", "", f"{rng.randint(200, 4000)}.00", "CHF", "", "", "", "", "",
                              "", "", "NON", "", "Ferienwohnung Engadin Juli 2026", "EPD"])
            yield Case("iban", f"qrbill/{style}", value, text, False)
            continue
        if i % 8 == 5:
            text = f"<DatiPagamento><DettaglioPagamento><ModalitaPagamento>MP05</ModalitaPagamento>" \
                   f"<Beneficiario>{rng.choice(GUESTS)}</Beneficiario><IBAN>{value}</IBAN>" \
                   f"</DettaglioPagamento></DatiPagamento>"
            yield Case("iban", f"xml/{style}", value, text, False)
            continue
        carrier, text, is_json = carry(rng, i, labels[lang], "iban", value, lang)
        yield Case("iban", f"{carrier}/{style}", value, text, is_json)


# ---- national ids (outside the target) ------------------------------------------------------------------------

def codice_fiscale(rng: random.Random) -> str:
    cons = "BCDFGHJKLMNPQRSTVZ"
    s = pick(rng, cons, 3) + pick(rng, cons, 3) + d(rng, 2) + rng.choice("ABCDEHLMPRST")
    day = rng.randint(1, 28) + (40 if rng.random() < 0.5 else 0)
    s += f"{day:02d}" + rng.choice("ABCDFGHLMZ") + d(rng, 3)
    return s + odd_even_char(s)


def dni_nie(rng: random.Random, i: int) -> str:
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if i % 3 == 2:
        lead = rng.choice("XYZ")
        body = d(rng, 7)
        return lead + body + letters[int(f"{'XYZ'.index(lead)}{body}") % 23]
    n = d(rng, 8)
    return n + letters[int(n) % 23]


def nif_pt(rng: random.Random) -> str:
    s = rng.choice("123") + d(rng, 7)
    r = 11 - sum(int(c) * w for c, w in zip(s, range(9, 1, -1), strict=True)) % 11
    return s + ("0" if r >= 10 else str(r))


def cc_pt(rng: random.Random) -> str:
    civil = d(rng, 8)
    r = 11 - sum(int(c) * w for c, w in zip(civil, range(9, 1, -1), strict=True)) % 11
    c1 = "0" if r >= 10 else str(r)
    version = pick(rng, string.ascii_uppercase, 2)
    stem = civil + c1 + version
    for last in string.digits:
        total = 0
        for pos, ch in enumerate(reversed(stem + last)):
            v = int(ch, 36)
            if pos % 2 == 1:
                v *= 2
                v -= 9 if v > 9 else 0
            total += v
        if total % 10 == 0:
            return f"{civil} {c1} {version}{last}"
    raise AssertionError


def amka(rng: random.Random) -> str:
    s = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(40, 99):02d}" + d(rng, 4)
    return s + luhn_digit(s)


def ahv(rng: random.Random) -> str:
    s = "756" + d(rng, 9)
    total = sum(int(c) * (3 if k % 2 else 1) for k, c in enumerate(s))
    s += str((10 - total % 10) % 10)
    return f"{s[:3]}.{s[3:7]}.{s[7:11]}.{s[11:]}"


def svnr_at(rng: random.Random) -> str:
    while True:
        serial = str(rng.randint(1, 9)) + d(rng, 2)
        birth = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{rng.randint(40, 99):02d}"
        w = [3, 7, 9, 5, 8, 4, 2, 1, 6]
        c = sum(int(x) * y for x, y in zip(serial + birth, w, strict=True)) % 11
        if c != 10:
            return f"{serial}{c} {birth}"


def oib(rng: random.Random) -> str:
    s = str(rng.randint(1, 9)) + d(rng, 9)
    a = 10
    for ch in s:
        a = (a + int(ch)) % 10
        a = 10 if a == 0 else a
        a = a * 2 % 11
    c = 11 - a
    return s + ("0" if c == 10 else str(c))


def emso(rng: random.Random) -> str:
    while True:
        year = rng.choice([f"9{rng.randint(40, 99)}", f"0{rng.randint(0, 12):02d}"])
        s = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year}5{rng.randint(0, 9)}"
        s += str(rng.randint(0, 4) if rng.random() < 0.5 else rng.randint(5, 9)) + d(rng, 2)
        w = [7, 6, 5, 4, 3, 2, 7, 6, 5, 4, 3, 2]
        m = 11 - sum(int(x) * y for x, y in zip(s, w, strict=True)) % 11
        if m != 10:
            return s + ("0" if m == 11 else str(m))


IDS: dict[str, tuple[Callable[[random.Random, int], str], list[tuple[str, str, str]]]] = {
    "codice_fiscale": (lambda r, i: codice_fiscale(r),
                       [("it", "codice fiscale:", "codiceFiscale"), ("it", "C.F.", "CodiceFiscale")]),
    "dni_nie": (dni_nie, [("es", "DNI/NIE:", "numeroDocumento"), ("ca", "DNI:", "dni"), ("gl", "DNI:", "nif"),
                          ("eu", "NAN:", "dni")]),
    "nif_pt": (lambda r, i: nif_pt(r), [("pt", "NIF:", "CustomerTaxID"), ("pt", "contribuinte n.º", "nif")]),
    "cc_pt": (lambda r, i: cc_pt(r), [("pt", "Cartão de Cidadão n.º", "documentNumber")]),
    "amka": (lambda r, i: amka(r), [("el", "ΑΜΚΑ:", "amka")]),
    "ahv": (lambda r, i: ahv(r), [("de", "AHV-Nr.", "ahvNumber"), ("fr", "n° AVS :", "avs"), ("it", "n. AVS:", "avs"),
                                  ("rm", "nr. AVS:", "ahv")]),
    "svnr_at": (lambda r, i: svnr_at(r), [("de", "SV-Nummer:", "svnr"), ("de", "Sozialversicherungsnummer", "svNr")]),
    "oib": (lambda r, i: oib(r), [("hr", "OIB:", "oib")]),
    "emso": (lambda r, i: emso(r), [("sl", "EMŠO:", "emso")]),
}


def id_cases(kind: str, rng: random.Random) -> Iterator[Case]:
    make, labels = IDS[kind]
    for i in range(PER_KIND):
        value = make(rng, i)
        lang, label, key = labels[i % len(labels)]
        if i % 6 == 5 and kind in ("codice_fiscale", "nif_pt", "dni_nie"):
            tag = {"codice_fiscale": "CodiceFiscale", "nif_pt": "CustomerTaxID", "dni_nie": "NIF"}[kind]
            wrap = {"codice_fiscale": "CessionarioCommittente><DatiAnagrafici",
                    "nif_pt": "Customer", "dni_nie": "Contraparte"}[kind]
            head, tail = wrap.split("><")[0], wrap.split("><")[-1]
            text = f"<{head}><{tail}><{tag}>{value}</{tag}><Nome>{rng.choice(GUESTS)}</Nome></{tail}></{head}>" \
                if head != tail else f"<{head}><{tag}>{value}</{tag}></{head}>"
            yield Case(kind, "xml/plain", value, text, False)
            continue
        carrier, text, is_json = carry(rng, i, label, key, value, lang)
        yield Case(kind, f"{carrier}/{'spaced' if ' ' in value or '.' in value else 'plain'}", value, text, is_json)


# ---- credentials ----------------------------------------------------------------------------------------------

WORDS = ["Dolomiti", "Taormina", "Mallorca", "Sintra", "Santorini", "Gozo", "Troodos", "Hvar", "Bohinj", "Engadin",
         "Arlberg", "Malbun", "Vaduz", "Camino", "Funicular", "Vaporetto", "Seilbahn", "Ferrovia", "Trajekt"]
SYMS = "!#$%&*+-.:=?@^_~"


def password(rng: random.Random, i: int) -> str:
    if i % 3 == 0:
        return rng.choice(WORDS) + str(rng.randint(10, 2099)) + rng.choice(SYMS) + pick(rng, ALNUM, 2)
    if i % 3 == 1:
        return pick(rng, ALNUM, 6) + rng.choice(SYMS) + pick(rng, ALNUM, 6) + rng.choice(SYMS) + pick(rng, ALNUM, 4)
    return pick(rng, ALNUM, rng.randint(14, 24))


PW_LABELS = {"it": "password:", "es": "contraseña:", "ca": "contrasenya:", "gl": "contrasinal:", "eu": "pasahitza:",
             "pt": "palavra-passe:", "el": "κωδικός πρόσβασης:", "mt": "password:", "hr": "lozinka:", "sl": "geslo:",
             "de": "Passwort:", "fr": "mot de passe :", "rm": "pled-clav:", "tr": "şifre:", "en": "password:"}


def password_cases(rng: random.Random) -> Iterator[Case]:
    envs = ["OPERA_DB_PASSWORD", "MEWS_SFTP_PASS", "SMTP_PASSWORD", "PROTEL_DB_PASSWD", "SKIDATA_API_PASSWORD",
            "NEXI_XPAY_PASSWORD", "RENFE_B2B_PASS", "CP_BOOKING_PASSWORD", "PMS_PASSWORD", "DB_PASS"]
    camels = ["password", "smtpPassword", "dbPassword", "sftpPassword", "pmsPassword", "userPassword", "passwd",
              "channelManagerPassword", "kioskAdminPassword", "apiPassword"]
    for i in range(PER_KIND):
        pw = password(rng, i)
        form = ["env", "yaml", "json", "cli", "prose", "env", "yaml", "json", "cli", "ini"][i % 10]
        if form == "env":
            name = rng.choice(envs)
            text = rng.choice([f"{name}={pw}", f"export {name}='{pw}'", f"# integrazione PMS\n{name}=\"{pw}\""])
            yield Case("password", f"env/{'prefixed' if '_' in name else 'plain'}", pw, text, False)
        elif form == "yaml":
            key = rng.choice(camels)
            text = f"integrations:\n  {rng.choice(['mews', 'opera', 'protel', 'skidata', 'sabre'])}:\n" \
                   f"    host: sftp.{rng.choice(['hotel', 'channel', 'pms'])}.example\n    user: agent_svc\n" \
                   f"    {key}: '{pw}'"
            yield Case("password", f"yaml/{'camel' if key != key.lower() else 'plain'}", pw, text, False)
        elif form == "json":
            key = rng.choice(camels)
            doc = {"integration": rng.choice(["opera-ohip", "mews-connector", "siteminder", "trenitalia-b2b"]),
                   "auth": {"username": "svc_" + pick(rng, string.ascii_lowercase, 5), key: pw}}
            yield Case("password", f"tool/{'camel' if key != key.lower() else 'plain'}", pw, dumps(doc), True)
        elif form == "cli":
            host = rng.choice(["opera-db.local", "10.20.1.15", "pms-replica.internal"])
            text = rng.choice([f"mysql -u pms_ro -p'{pw}' -h {host} protel", f"sshpass -p '{pw}' sftp agent@{host}",
                               f"./sync-bookings --user agent --password '{pw}' --host {host}",
                               f"curl -u apiuser:{pw} https://{host}/api/v1/reservations"])
            yield Case("password", "cli/flag", pw, text, False)
        elif form == "ini":
            text = f"[smtp]\nserver = smtp.{rng.choice(['albergo', 'hotel', 'quinta'])}.example\nport = 587\n" \
                   f"user = booking\npassword = {pw}"
            yield Case("password", "ini/plain", pw, text, False)
        else:
            lang = rng.choice(list(PW_LABELS))
            carrier, text, is_json = carry(rng, i, PW_LABELS[lang], "password", pw, lang,
                                           only=("email", "chat", "helpdesk", "whatsapp", "reply"))
            yield Case("password", f"{carrier}/{lang}", pw, text, is_json)


def akia(rng: random.Random) -> str:
    return rng.choice(["AKIA", "ASIA"]) + pick(rng, B32, 16)


def aws_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        secret = pick(rng, B64, 40)
        kid = akia(rng)
        form = i % 6
        if form == 0:
            text = f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {secret}\nregion = eu-south-1"
            yield Case("aws_secret", "ini/labelled", secret, text, False)
        elif form == 1:
            text = f"AWS_ACCESS_KEY_ID={kid}\nAWS_SECRET_ACCESS_KEY={secret}\nAWS_DEFAULT_REGION=eu-west-3"
            yield Case("aws_secret", "env/labelled", secret, text, False)
        elif form == 2:
            doc = {"Credentials": {"AccessKeyId": "ASIA" + kid[4:], "SecretAccessKey": secret,
                                   "SessionToken": "IQoJb3JpZ2luX2VjE" + pick(rng, B64, 60),
                                   "Expiration": "2026-07-14T10:00:00Z"}}
            yield Case("aws_secret", "tool/sts_json", secret, dumps(doc), True)
        elif form == 3:
            text = f"User name,Password,Access key ID,Secret access key,Console login link\n" \
                   f"ticketing-agent,,{kid},{secret},https://{d(rng, 12)}.signin.aws.amazon.com/console"
            yield Case("aws_secret", "csv/unlabelled", secret, text, False)
        elif form == 4:
            text = f"{stamp(rng)} WARN s3-export using static credentials {kid} {secret} for bucket " \
                   f"gtfs-feeds-{rng.choice(['it', 'es', 'ch'])}"
            yield Case("aws_secret", "log/unlabelled", secret, text, False)
        else:
            doc = {"storage": {"provider": "s3", "bucket": "efatture-archivio", "accessKey": kid, "secretKey": secret}}
            yield Case("aws_secret", "tool/camel_json", secret, dumps(doc), True)


def webhook(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, url, secret) in the form each tool's docs print."""
    which = i % 9
    if which == 0:
        tok = pick(rng, ALNUM, 24)
        return "slack", f"https://hooks.slack.com/services/T{pick(rng, B32[:26] + '0123456789', 10)}/B" \
                        f"{pick(rng, string.ascii_uppercase + string.digits, 10)}/{tok}", tok
    if which == 1:
        tok = pick(rng, B64U, 68)
        return "discord", f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{tok}", tok
    if which == 2:
        tok = pick(rng, HEX, 32)
        g1, g2, g3 = uuid.UUID(int=rng.getrandbits(128), version=4), uuid.UUID(int=rng.getrandbits(128), version=4), \
            uuid.UUID(int=rng.getrandbits(128), version=4)
        return "teams", f"https://{rng.choice(['hotelgroup', 'ferrylines', 'skiarena'])}.webhook.office.com/" \
                        f"webhookb2/{g1}@{g2}/IncomingWebhook/{tok}/{g3}/V2{pick(rng, B64U, 40)}", tok
    if which == 3:
        sig = pick(rng, B64U, 43)
        return "teams_workflow", f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/" \
                                 f"{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=" \
                                 f"%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}", sig
    if which == 4:
        tok = pick(rng, B64U, 43)
        return "google_chat", f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, B64U, 7)}/messages?key=" \
                              f"AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={tok}", tok
    if which == 5:
        tok = f"{rng.randint(10**8, 10**10 - 1)}:AA{pick(rng, B64U, 33)}"
        return "telegram", f"https://api.telegram.org/bot{tok}/sendMessage?chat_id=-100{d(rng, 10)}", tok
    if which == 6:
        tok = pick(rng, LOWER_ALNUM, 26)
        host = rng.choice(["ferrovie", "alpenbahn", "navieras"])
        return "mattermost", f"https://chat.{host}.example/hooks/{tok}", tok
    if which == 7:
        tok = pick(rng, LOWER_ALNUM, 32)
        return "make", f"https://hook.eu{rng.randint(1, 2)}.make.com/{tok}", tok
    tok = f"{pick(rng, ALNUM, 17)}/{pick(rng, ALNUM, 48)}"
    return "rocketchat", f"https://rocket.{rng.choice(['hotel', 'tours'])}.example/hooks/{tok}", tok


def webhook_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        style, url, tok = webhook(rng, i)
        form = (i // 9 + i) % 5
        if form == 0:
            text = f"{rng.choice(['NOTIFY', 'ALERT', 'OPS'])}_WEBHOOK_URL={url}"
            yield Case("webhook", f"env/{style}", tok, text, False)
        elif form == 1:
            doc = {"notifications": {"channel": rng.choice(["#night-audit", "#biglietteria", "#pistes"]),
                                     "webhookUrl": url, "enabled": True}}
            yield Case("webhook", f"tool/{style}", tok, dumps(doc), True)
        elif form == 2:
            text = f"curl -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"Overbooking at " \
                   f"{rng.choice(HOTELS)}\"}}' {url}"
            yield Case("webhook", f"cli/{style}", tok, text, False)
        elif form == 3:
            text = f"alerts:\n  on_failed_checkin:\n    url: \"{url}\"\n    retries: 3"
            yield Case("webhook", f"yaml/{style}", tok, text, False)
        else:
            text = f"{stamp(rng)} ERROR notifier POST {url} -> 429 Too Many Requests"
            yield Case("webhook", f"log/{style}", tok, text, False)


def whsec(rng: random.Random, i: int) -> str:
    return "whsec_" + (pick(rng, HEX, 64) if i % 4 == 3 else pick(rng, ALNUM, 32))


def whsec_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        s = whsec(rng, i)
        form = i % 5
        if form == 0:
            yield Case("stripe_whsec", "env/labelled", s, f"STRIPE_WEBHOOK_SECRET={s}", False)
        elif form == 1:
            doc = {"payments": {"stripe": {"endpointSecret": s, "tolerance": 300}}}
            yield Case("stripe_whsec", "tool/json", s, dumps(doc), True)
        elif form == 2:
            text = f"> Ready! You are using Stripe API Version [2026-03-25]. Your webhook signing secret is {s} " \
                   "(^C to quit)"
            yield Case("stripe_whsec", "cli/stripe_listen", s, text, False)
        elif form == 3:
            text = f"stripe:\n  signing_secret: {s}\n  forward_to: https://booking.example/webhooks/stripe"
            yield Case("stripe_whsec", "yaml/labelled", s, text, False)
        else:
            text = f"Ciao team, per il nuovo endpoint dei tour la chiave di firma è {s}, aggiornate il vault."
            yield Case("stripe_whsec", "chat/prose", s, text, False)


def conn_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        pw = pick(rng, ALNUM, rng.randint(12, 22))
        user = rng.choice(["pms_app", "opera", "ticketing", "guest_svc", "etl", "sa"])
        host = rng.choice(["opera-db.hotel.local", "pg-bookings.eu-south-1.rds.amazonaws.com", "10.12.0.7",
                           "cluster0.ab1cd.mongodb.net", "redis-gtfs.internal", "sql-fatture.database.windows.net"])
        which = i % 10
        if which == 0:
            text, style = f"postgresql://{user}:{pw}@{host}:5432/bookings?sslmode=require", "postgres"
        elif which == 1:
            text, style = f"mysql://{user}:{pw}@{host}:3306/protel", "mysql"
        elif which == 2:
            text, style = f"mongodb+srv://{user}:{pw}@{host}/guests?retryWrites=true&w=majority", "mongodb"
        elif which == 3:
            text, style = f"rediss://default:{pw}@{host}:6380/0", "redis"
        elif which == 4:
            text, style = f"amqps://{user}:{pw}@{host}:5671/ticketing", "amqp"
        elif which == 5:
            text, style = f"Server=tcp:{host},1433;Initial Catalog=Fatture;User ID={user};Password={pw};" \
                          "Encrypt=True;", "sqlserver"
        elif which == 6:
            text, style = f"jdbc:oracle:thin:{user}/{pw}@//{host}:1521/OPERA", "oracle"
        elif which == 7:
            pw = pick(rng, B64, 86) + "=="
            text, style = f"DefaultEndpointsProtocol=https;AccountName=efatture{d(rng, 3)};AccountKey={pw};" \
                          "EndpointSuffix=core.windows.net", "azure_storage"
        elif which == 8:
            pw = pick(rng, B64, 43) + "="
            text, style = f"Endpoint=sb://ferry-bookings.servicebus.windows.net/;SharedAccessKeyName=" \
                          f"RootManageSharedAccessKey;SharedAccessKey={pw}", "servicebus"
        else:
            text, style = f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Uid={user};Pwd={pw};", "odbc"
        carrier = ["env", "json", "yaml", "log", "json"][i % 5]
        if carrier == "env":
            out, is_json = f"DATABASE_URL=\"{text}\"" if which < 5 else f"CONNECTION_STRING=\"{text}\"", False
        elif carrier == "json":
            out, is_json = dumps({"ConnectionStrings": {"Default": text}, "Logging": {"LogLevel": "Warning"}}), True
        elif carrier == "yaml":
            out, is_json = f"datasource:\n  url: '{text}'\n  pool: 10", False
        else:
            out, is_json = f"{stamp(rng)} ERROR could not connect to {text}: timeout after 30s", False
        yield Case("connection_string", f"{carrier}/{style}", pw, out, is_json)


LK_LABELS = [("it", "Chiave API"), ("it", "Chiave segreta"), ("es", "Clave API"), ("es", "Clave secreta"),
             ("ca", "Clau API"), ("pt", "Chave da API"), ("pt", "Chave secreta"), ("de", "API-Schlüssel"),
             ("de", "Geheimer Schlüssel"), ("fr", "Clé API"), ("fr", "Clé secrète"), ("el", "Κλειδί API"),
             ("el", "Μυστικό κλειδί"), ("hr", "Tajni ključ"), ("hr", "API ključ"), ("sl", "Skrivni ključ"),
             ("tr", "Gizli anahtar"), ("mt", "Ċavetta sigrieta"), ("rm", "Clav API"), ("en", "Client secret"),
             ("en", "Secret key"), ("en", "API key"), ("gl", "Chave secreta"), ("eu", "API gakoa")]


def platform_key(rng: random.Random, i: int) -> tuple[str, str]:
    which = i % 9
    if which == 0:
        return "Mews ClientToken", pick(rng, HEXU, 32) + "-" + pick(rng, HEXU, 31)
    if which == 1:
        return "Nexi XPay MAC", pick(rng, ALNUM, 40)
    if which == 2:
        return "Amadeus API Secret", pick(rng, ALNUM, 16)
    if which == 3:
        return "Hotelbeds API Key", pick(rng, HEX, 32)
    if which == 4:
        return "Viva Wallet Client Secret", pick(rng, ALNUM, 30)
    if which == 5:
        return "Satispay Key", pick(rng, LOWER_ALNUM, 64)
    if which == 6:
        return "Mistral API", pick(rng, ALNUM, 32)
    if which == 7:
        return "Twilio Auth Token", pick(rng, HEX, 32)
    return "Mews AccessToken", pick(rng, HEXU, 32) + "-" + pick(rng, HEXU, 31)


def labelled_key_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        platform, key = platform_key(rng, i)
        lang, label = LK_LABELS[i % len(LK_LABELS)]
        form = (i // 9 + i) % 5
        if form == 0:
            doc = {"integration": platform.split()[0], "credentials": {label: key}}
            yield Case("labelled_key", f"tool/{lang}", key, dumps(doc), True)
        elif form == 1:
            text = f"{platform.split()[0]} ({lang}) — {label}: {key}"
            yield Case("labelled_key", f"helpdesk/{lang}", key, text, False)
        elif form == 2:
            text = f"{platform}\n{label} = {key}\nEndpoint = https://api.{platform.split()[0].lower()}.example"
            yield Case("labelled_key", f"ini/{lang}", key, text, False)
        elif form == 3:
            text = f"{GREET[lang]}. {platform} {label}: {key}"
            yield Case("labelled_key", f"email/{lang}", key, text, False)
        else:
            doc = {"tool": "read_vault_note", "result": f"{platform} — {label} {key}"}
            yield Case("labelled_key", f"nested/{lang}", key, dumps(doc), True)


def jwt(rng: random.Random, i: int) -> str:
    alg = ["HS256", "RS256", "ES256"][i % 3]
    header = {"alg": alg, "typ": "JWT"} if i % 2 else {"typ": "JWT", "alg": alg, "kid": pick(rng, HEX, 8)}
    payload = {"iss": rng.choice(["https://auth.ferries.example", "https://sso.hotelgroup.example",
                                  "https://id.skipass.example"]), "sub": "guest-" + d(rng, 7),
               "aud": rng.choice(["booking-api", "pms", "ticketing"]), "iat": 1780000000 + rng.randint(0, 10**7),
               "scope": rng.choice(["bookings:read", "tickets:write", "profile"])}
    payload["exp"] = payload["iat"] + 3600
    sig_len = {"HS256": 32, "RS256": 256, "ES256": 64}[alg]
    return ".".join([b64url(json.dumps(header, separators=(",", ":")).encode()),
                     b64url(json.dumps(payload, separators=(",", ":")).encode()),
                     b64url(bytes(rng.getrandbits(8) for _ in range(sig_len)))])


def jwt_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        t = jwt(rng, i)
        form = i % 5
        if form == 0:
            yield Case("jwt", "log/bearer", t, f"{stamp(rng)} DEBUG GET /v1/tickets Authorization: Bearer {t}", False)
        elif form == 1:
            yield Case("jwt", "tool/json", t, dumps({"access_token": t, "token_type": "Bearer", "expires_in": 3600}),
                       True)
        elif form == 2:
            yield Case("jwt", "url/query", t, f"https://checkin.example-hotel.eu/mobile-key?token={t}", False)
        elif form == 3:
            yield Case("jwt", "cli/header", t, f"curl -H \"Authorization: Bearer {t}\" https://api.ferries.example/"
                                               f"bookings/{pick(rng, string.ascii_uppercase, 6)}", False)
        else:
            yield Case("jwt", "chat/prose", t, f"Il token dell'app check-in scade tra un'ora: {t}", False)


def oauth_token(rng: random.Random, i: int) -> tuple[str, str]:
    which = i % 6
    if which == 0:
        return "google", "ya29." + pick(rng, B64U, 150)
    if which == 1:
        return "github", crc_token(rng, "gho_")
    if which == 2:
        return "slack", f"xoxp-{d(rng, 12)}-{d(rng, 12)}-{d(rng, 13)}-{pick(rng, HEX, 32)}"
    if which == 3:
        return "meta", "EAA" + pick(rng, ALNUM, 180)
    if which == 4:
        return "amadeus", pick(rng, ALNUM, 28)
    return "google_refresh", "1//0" + pick(rng, B64U, 100)


def oauth_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        style, t = oauth_token(rng, i)
        form = (i // 6 + i) % 4
        if form == 0:
            key = "refresh_token" if style == "google_refresh" else "access_token"
            yield Case("oauth_token", f"tool/{style}", t, dumps({key: t, "token_type": "Bearer",
                                                                  "expires_in": 1799}), True)
        elif form == 1:
            yield Case("oauth_token", f"log/{style}", t,
                       f"{stamp(rng)} INFO http POST /v2/shopping/hotel-offers headers={{'Authorization': 'Bearer "
                       f"{t}'}}", False)
        elif form == 2:
            yield Case("oauth_token", f"env/{style}", t, f"OAUTH_ACCESS_TOKEN={t}", False)
        else:
            yield Case("oauth_token", f"helpdesk/{style}", t, f"Ticket #{d(rng, 5)}: the channel sync fails with 401; "
                                                              f"token used: {t}", False)


def session_cookie(rng: random.Random, i: int) -> tuple[str, str, str]:
    which = i % 8
    if which == 0:
        return "php", "PHPSESSID", pick(rng, "abcdefghijklmnopqrstuv0123456789", 26)
    if which == 1:
        return "java", "JSESSIONID", pick(rng, HEXU, 32) + ".node" + str(rng.randint(1, 4))
    if which == 2:
        return "aspnet", "ASP.NET_SessionId", pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)
    if which == 3:
        return "express", "connect.sid", "s%3A" + pick(rng, B64U, 32) + "." + pick(rng, B64, 43)
    if which == 4:
        return "django", "sessionid", pick(rng, LOWER_ALNUM, 32)
    if which == 5:
        return "laravel", "laravel_session", "eyJpdiI6I" + pick(rng, ALNUM, 180) + "%3D%3D"
    if which == 6:
        return "rails", "_session_id", pick(rng, HEX, 32)
    return "aspnetcore", ".AspNetCore.Session", "CfDJ8" + pick(rng, B64U, 120)


def cookie_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        style, name, value = session_cookie(rng, i)
        form = (i // 8 + i) % 4
        host = rng.choice(["booking.hotel-belvedere.example", "biglietti.ferrovie.example", "skipass.engadin.example"])
        if form == 0:
            text = f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure; SameSite=Lax"
            yield Case("session_cookie", f"log/{style}", value, text, False)
        elif form == 1:
            text = f"curl 'https://{host}/account/bookings' -H 'Cookie: lang=it; {name}={value}'"
            yield Case("session_cookie", f"cli/{style}", value, text, False)
        elif form == 2:
            doc = {"log": {"entries": [{"request": {"url": f"https://{host}/checkout", "cookies": [
                {"name": name, "value": value}]}}]}}
            yield Case("session_cookie", f"tool/{style}", value, dumps(doc), True)
        else:
            text = f"{stamp(rng)} WARN kiosk session reused: {name}={value} ip=10.{rng.randint(0, 255)}.4.2"
            yield Case("session_cookie", f"access/{style}", value, text, False)


def totp_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        seed = pick(rng, B32, 32 if i % 2 else 16)
        form = i % 5
        if form == 0:
            issuer = rng.choice(["OperaCloud", "SiteMinder", "Amadeus", "Skidata"])
            text = f"otpauth://totp/{issuer}:frontdesk%40hotel.example?secret={seed}&issuer={issuer}&digits=6"
            yield Case("totp_seed", "url/otpauth", seed, text, False)
        elif form == 1:
            value = group(seed.lower(), 4, " ")
            text = f"Chiave di configurazione dell'autenticatore: {value}"
            yield Case("totp_seed", "chat/lower_space", value, text, False)
        elif form == 2:
            yield Case("totp_seed", "env/plain", seed, f"CHANNEL_MANAGER_TOTP_SECRET={seed}", False)
        elif form == 3:
            yield Case("totp_seed", "tool/json", seed, dumps({"mfa": {"type": "totp", "seed": seed}}), True)
        else:
            value = group(seed, 4, " ")
            text = f"2FA-Schlüssel für das Backoffice (manuell eingeben): {value}"
            yield Case("totp_seed", "email/space", value, text, False)


# ---- private keys ---------------------------------------------------------------------------------------------

SMALL_PRIMES = [p for p in range(3, 2000) if all(p % q for q in range(2, int(p ** 0.5) + 1))]


def probable_prime(n: int, rng: random.Random) -> bool:
    if any(n % p == 0 for p in SMALL_PRIMES):
        return False
    dd, s = n - 1, 0
    while dd % 2 == 0:
        dd //= 2
        s += 1
    for _ in range(6):
        x = pow(rng.randrange(2, n - 2), dd, n)
        if x in (1, n - 1):
            continue
        for _ in range(s - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def rsa_der(rng: random.Random, bits: int = 2048) -> bytes:
    """A PKCS#1 RSAPrivateKey (RFC 8017, A.1.2) with e = 65537 and two primes drawn from `rng`."""
    e = 65537
    primes: list[int] = []
    while len(primes) < 2:
        c = rng.getrandbits(bits // 2) | (3 << (bits // 2 - 2)) | 1
        if (c - 1) % e and probable_prime(c, rng):
            primes.append(c)
    p, q = primes
    n, phi = p * q, (p - 1) * (q - 1)
    dd = pow(e, -1, phi)
    return der_seq(der_int(0), der_int(n), der_int(e), der_int(dd), der_int(p), der_int(q), der_int(dd % (p - 1)),
                   der_int(dd % (q - 1)), der_int(pow(q, -1, p)))


P256 = (2**256 - 2**224 + 2**192 + 2**96 - 1,
        0x6B17D1F2E12C4247F8BCE6E563A440F277037D812DEB33A0F4A13945D898C296,
        0x4FE342E2FE1A7F9B8EE7EB4A7C0F9E162BCE33576B315ECECBB6406837BF51F5,
        0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551)


def p256_mul(k: int) -> tuple[int, int]:
    """k times the P-256 base point (SEC 2, 2.4.2), affine double-and-add."""
    p, gx, gy, _ = P256
    acc: tuple[int, int] | None = None
    pt = (gx, gy)

    def add(a: tuple[int, int] | None, b: tuple[int, int]) -> tuple[int, int] | None:
        if a is None:
            return b
        if a[0] == b[0] and (a[1] + b[1]) % p == 0:
            return None
        if a == b:
            lam = (3 * a[0] * a[0] - 3) * pow(2 * a[1], -1, p) % p
        else:
            lam = (b[1] - a[1]) * pow(b[0] - a[0], -1, p) % p
        x = (lam * lam - a[0] - b[0]) % p
        return x, (lam * (a[0] - x) - a[1]) % p

    while k:
        if k & 1:
            acc = add(acc, pt)
        pt = add(pt, pt)  # type: ignore[assignment]
        k >>= 1
    assert acc is not None
    return acc


def ec_der(rng: random.Random) -> bytes:
    """A SEC 1 ECPrivateKey (RFC 5915) on prime256v1 with its public point."""
    k = rng.randrange(1, P256[3])
    x, y = p256_mul(k)
    oid = bytes.fromhex("06082a8648ce3d030107")
    return der_seq(der_int(1), der(0x04, k.to_bytes(32, "big")), der(0xA0, oid),
                   der(0xA1, der(0x03, b"\x00\x04" + x.to_bytes(32, "big") + y.to_bytes(32, "big"))))


ED_P = 2**255 - 19
ED_D = -121665 * pow(121666, -1, ED_P) % ED_P


def ed_public(seed: bytes) -> bytes:
    """The Ed25519 public key of a 32-byte seed (RFC 8032, 5.1.5), extended coordinates."""
    h = hashlib.sha512(seed).digest()
    a = int.from_bytes(h[:32], "little")
    a &= (1 << 254) - 8
    a |= 1 << 254
    gy = 4 * pow(5, -1, ED_P) % ED_P
    gx2 = (gy * gy - 1) * pow(ED_D * gy * gy + 1, -1, ED_P) % ED_P
    gx = pow(gx2, (ED_P + 3) // 8, ED_P)
    if (gx * gx - gx2) % ED_P:
        gx = gx * pow(2, (ED_P - 1) // 4, ED_P) % ED_P
    if gx % 2:
        gx = ED_P - gx

    def add(pt: tuple[int, int, int, int], qt: tuple[int, int, int, int]) -> tuple[int, int, int, int]:
        x1, y1, z1, t1 = pt
        x2, y2, z2, t2 = qt
        aa = (y1 - x1) * (y2 - x2) % ED_P
        bb = (y1 + x1) * (y2 + x2) % ED_P
        cc = 2 * t1 * t2 * ED_D % ED_P
        dd = 2 * z1 * z2 % ED_P
        e, f, g, hh = bb - aa, dd - cc, dd + cc, bb + aa
        return e * f % ED_P, g * hh % ED_P, f * g % ED_P, e * hh % ED_P

    acc = (0, 1, 1, 0)
    pt = (gx, gy, 1, gx * gy % ED_P)
    while a:
        if a & 1:
            acc = add(acc, pt)
        pt = add(pt, pt)
        a >>= 1
    zi = pow(acc[2], -1, ED_P)
    x, y = acc[0] * zi % ED_P, acc[1] * zi % ED_P
    return (y | (x & 1) << 255).to_bytes(32, "little")


def pem_body(data: bytes) -> list[str]:
    import base64
    b = base64.b64encode(data).decode()
    return [b[k:k + 64] for k in range(0, len(b), 64)]


def private_key(rng: random.Random, i: int) -> tuple[str, str, list[str]]:
    which = i % 4
    if which == 0:
        return "rsa_pkcs1", "RSA PRIVATE KEY", pem_body(rsa_der(rng))
    if which == 1:
        rsa_oid = der_seq(bytes.fromhex("06092a864886f70d010101"), b"\x05\x00")
        return "pkcs8", "PRIVATE KEY", pem_body(der_seq(der_int(0), rsa_oid, der(0x04, rsa_der(rng))))
    if which == 2:
        return "ec", "EC PRIVATE KEY", pem_body(ec_der(rng))
    seed = bytes(rng.getrandbits(8) for _ in range(32))
    blob = openssh_ed25519_blob(seed, ed_public(seed), bytes(rng.getrandbits(8) for _ in range(4)),
                                b"ops@" + rng.choice([b"pms-bastion", b"ticket-gw", b"skidata-bridge"]))
    import base64
    b = base64.b64encode(blob).decode()
    return "openssh", "OPENSSH PRIVATE KEY", [b[k:k + 70] for k in range(0, len(b), 70)]


def private_key_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        style, label, lines = private_key(rng, i)
        form = (i // 4 + i) % 4
        begin, end = f"-----BEGIN {label}-----", f"-----END {label}-----"
        if form == 0:
            body = "\n".join(lines)
            text = f"$ cat /etc/ssl/private/ifc-gateway.key\n{begin}\n{body}\n{end}\n"
            yield Case("private_key", f"pem/{style}", body, text, False)
        elif form == 1:
            body = "\n".join(lines)
            doc = {"type": "service_account", "project_id": "gtfs-rt-feeds", "private_key_id": pick(rng, HEX, 40),
                   "private_key": f"{begin}\n{body}\n{end}\n", "client_email": "feeds@gtfs-rt-feeds.example"}
            yield Case("private_key", f"tool/{style}", body, dumps(doc), True)
        elif form == 2:
            body = "\\n".join(lines)
            text = f"SIGNING_KEY=\"{begin}\\n{body}\\n{end}\""
            yield Case("private_key", f"env/{style}", body, text, False)
        else:
            body = "\n".join(lines)
            text = f"satispay:\n  key_id: {pick(rng, LOWER_ALNUM, 40)}\n  private_key: |\n    {begin}\n    " + \
                   "\n    ".join(lines) + f"\n    {end}"
            body = "\n    ".join(lines)
            yield Case("private_key", f"yaml/{style}", body, text, False)


# ---- provider API keys ----------------------------------------------------------------------------------------

def api_key(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(provider, env name, key)."""
    which = i % 14
    if which == 0:
        return "openai", "OPENAI_API_KEY", "sk-proj-" + pick(rng, B64U, 64) + "T3BlbkFJ" + pick(rng, B64U, 64)
    if which == 1:
        return "anthropic", "ANTHROPIC_API_KEY", "sk-ant-api03-" + pick(rng, B64U, 93) + "AA"
    if which == 2:
        return "google", "GOOGLE_MAPS_API_KEY", "AIza" + pick(rng, B64U, 35)
    if which == 3:
        return "stripe", "STRIPE_SECRET_KEY", rng.choice(["sk_live_", "rk_live_"]) + "51" + pick(rng, ALNUM, 97)
    if which == 4:
        return "sendgrid", "SENDGRID_API_KEY", "SG." + pick(rng, B64U, 22) + "." + pick(rng, B64U, 43)
    if which == 5:
        return "brevo", "BREVO_API_KEY", "xkeysib-" + pick(rng, HEX, 64) + "-" + pick(rng, ALNUM, 16)
    if which == 6:
        return "mailgun", "MAILGUN_API_KEY", "key-" + pick(rng, HEX, 32)
    if which == 7:
        return "huggingface", "HF_TOKEN", "hf_" + pick(rng, string.ascii_letters, 34)
    if which == 8:
        return "github", "GITHUB_TOKEN", crc_token(rng, "ghp_")
    if which == 9:
        user = dumps({"u": "tourops" + d(rng, 2), "a": pick(rng, LOWER_ALNUM, 25)}).replace(" ", "")
        return "mapbox", "MAPBOX_SECRET_TOKEN", "sk." + b64url(user.encode()) + "." + pick(rng, B64U, 22)
    if which == 10:
        return "sumup", "SUMUP_API_KEY", "sup_sk_" + pick(rng, ALNUM, 32)
    if which == 11:
        return "hubspot", "HUBSPOT_TOKEN", "pat-eu1-" + str(uuid.UUID(int=rng.getrandbits(128), version=4))
    if which == 12:
        return "deepl", "DEEPL_AUTH_KEY", str(uuid.UUID(int=rng.getrandbits(128), version=4)) + ":fx"
    return "github_fine", "GH_PAT", "github_pat_11" + pick(rng, B62[:36], 20) + "_" + pick(rng, ALNUM, 59)


def api_key_cases(rng: random.Random) -> Iterator[Case]:
    for i in range(PER_KIND):
        provider, env, key = api_key(rng, i)
        form = (i // 14 + i) % 5
        if form == 0:
            yield Case("api_key", f"env/{provider}", key, f"{env}={key}", False)
        elif form == 1:
            doc = {"tools": [{"name": provider, "config": {"apiKey": key, "timeout": 30}}]}
            yield Case("api_key", f"tool/{provider}", key, dumps(doc), True)
        elif form == 2:
            yield Case("api_key", f"code/{provider}", key, f"client = Client(api_key=\"{key}\")  # {provider}", False)
        elif form == 3:
            yield Case("api_key", f"yaml/{provider}", key, f"providers:\n  {provider}:\n    key: {key}", False)
        else:
            yield Case("api_key", f"log/{provider}", key,
                       f"{stamp(rng)} DEBUG outbound {provider} request headers: Authorization: Bearer {key}", False)


# ---- disguised ------------------------------------------------------------------------------------------------

ZW = ["\u200b", "\u200c", "\u200d", "\u2060"]


def disguise(rng: random.Random, value: str, style: str) -> str:
    if style == "zw":
        z = rng.choice(ZW)
        return z.join(value[k:k + 4] for k in range(0, len(value), 4))
    if style == "fullwidth":
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in value)
    if style == "urlenc":
        return "".join(f"%{ord(c):02X}" for c in value)
    return "".join(f"\\u{ord(c):04x}" for c in value)


def disguised_cases(rng: random.Random) -> Iterator[Case]:
    styles = ["zw", "fullwidth", "urlenc", "uescape"]
    for i in range(PER_KIND):
        base = i % 6
        if base == 0:
            value, label = password(rng, i), "DB_PASSWORD"
        elif base == 1:
            value, label = pick(rng, B64, 40), "AWS_SECRET_ACCESS_KEY"
        elif base == 2:
            value, label = whsec(rng, i), "STRIPE_WEBHOOK_SECRET"
        elif base == 3:
            _, env, value = api_key(rng, i)
            label = env
        elif base == 4:
            value, label = platform_key(rng, i)[1], "Chiave API"
        else:
            value, label = pick(rng, ALNUM, 24), "SLACK_WEBHOOK_TOKEN"
        style = styles[(i // 6 + i) % 4]
        shown = disguise(rng, value, style)
        kind_name = ["password", "aws", "whsec", "apikey", "labelled", "webhook"][base]
        if style == "urlenc":
            text = f"POST /oauth/token HTTP/1.1\n\ngrant_type=client_credentials&{label.lower()}={shown}&scope=ops"
            yield Case("disguised", f"url/{kind_name}_{style}", shown, text, False)
        elif style == "uescape":
            text = f"{stamp(rng)} DEBUG raw config: {{\"{label}\": \"{shown}\"}}"
            yield Case("disguised", f"log/{kind_name}_{style}", shown, text, False)
        elif i % 3 == 0:
            yield Case("disguised", f"tool/{kind_name}_{style}", shown, dumps({"env": {label: shown}}), True)
        else:
            text = f"{label}={shown}" if i % 2 else f"Nota di consegna turno: {label}: {shown}"
            yield Case("disguised", f"{'env' if i % 2 else 'chat'}/{kind_name}_{style}", shown, text, False)


# ---- the corpus -----------------------------------------------------------------------------------------------

KINDS: list[str] = ["password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key",
                    "disguised", "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card",
                    "iban", "jwt", "oauth_token", "session_cookie", "private_key", "totp_seed", "api_key",
                    "phone_it", "phone_es", "phone_pt", "phone_gr", "phone_mt", "phone_cy", "phone_hr", "phone_si",
                    "phone_ch", "phone_at", "phone_li", *sorted(OUTSIDE_TARGET)]

SIMPLE: dict[str, Callable[[random.Random], Iterator[Case]]] = {
    "password": password_cases, "aws_secret": aws_cases, "webhook": webhook_cases, "stripe_whsec": whsec_cases,
    "connection_string": conn_cases, "labelled_key": labelled_key_cases, "disguised": disguised_cases,
    "email": email_cases, "ssn": ssn_cases, "card": card_cases, "iban": iban_cases, "jwt": jwt_cases,
    "oauth_token": oauth_cases, "session_cookie": cookie_cases, "private_key": private_key_cases,
    "totp_seed": totp_cases, "api_key": api_key_cases,
}


@functools.lru_cache(maxsize=1)
def _cases() -> tuple[Case, ...]:
    out: list[Case] = []
    for n, kind in enumerate(KINDS):
        rng = random.Random(SEED * 1000 + n)
        if kind in SIMPLE:
            out.extend(SIMPLE[kind](rng))
        elif kind in PHONES:
            out.extend(phone_cases(kind, rng))
        else:
            out.extend(id_cases(kind, rng))
    return tuple(out)


def generate() -> Iterator[Case]:
    """PER_KIND cases of every kind, the same on every call (drawn once from SEED)."""
    yield from _cases()


# ---- near misses ----------------------------------------------------------------------------------------------

def piva(rng: random.Random) -> str:
    """An Italian Partita IVA: 7 digits of the firm, 3 of the office, the Luhn check digit."""
    s = d(rng, 7) + f"{rng.randint(1, 100):03d}"
    return s + luhn_digit(s)


def cif_es(rng: random.Random) -> str:
    """A Spanish CIF of a company (letter A or B, 7 digits, the control digit)."""
    body = d(rng, 7)
    odd = sum(sum(divmod(int(body[k]) * 2, 10)) for k in (0, 2, 4, 6))
    even = sum(int(body[k]) for k in (1, 3, 5))
    return rng.choice("AB") + body + str((10 - (odd + even) % 10) % 10)


def uid_ch(rng: random.Random) -> str:
    """A Swiss UID (CHE-, 8 digits, mod 11 check with weights 5,4,3,2,7,6,5,4; 10 is not issued)."""
    while True:
        s = d(rng, 8)
        c = 11 - sum(int(x) * w for x, w in zip(s, [5, 4, 3, 2, 7, 6, 5, 4], strict=True)) % 11
        if c != 10:
            s += "0" if c == 11 else str(c)
            return f"CHE-{s[:3]}.{s[3:6]}.{s[6:]}"


def nipc(rng: random.Random) -> str:
    s = "5" + d(rng, 7)
    r = 11 - sum(int(c) * w for c, w in zip(s, range(9, 1, -1), strict=True)) % 11
    return s + ("0" if r >= 10 else str(r))


def atu(rng: random.Random) -> str:
    """An Austrian VAT id (ATU, 7 digits, the check digit of the BMF's algorithm)."""
    s = d(rng, 7)
    total = 0
    for k, c in enumerate(s):
        v = int(c) * (2 if k % 2 else 1)
        total += v // 10 + v % 10
    return "ATU" + s + str((96 - total) % 10)


def si_ddv(rng: random.Random) -> str:
    while True:
        s = str(rng.randint(1, 9)) + d(rng, 6)
        c = 11 - sum(int(x) * w for x, w in zip(s, range(8, 1, -1), strict=True)) % 11
        if c != 11:
            return "SI" + s + ("0" if c == 10 else str(c))


def qr_reference(rng: random.Random) -> str:
    """A Swiss QR reference: 26 digits and the recursive mod 10 check digit."""
    table = [0, 9, 4, 6, 8, 2, 7, 1, 3, 5]
    s = d(rng, 26)
    carry_ = 0
    for c in s:
        carry_ = table[(carry_ + int(c)) % 10]
    return s + str((10 - carry_) % 10)


def rf_reference(rng: random.Random) -> str:
    """An ISO 11649 creditor reference (RF, two MOD 97-10 check digits, the reference)."""
    ref = pick(rng, string.ascii_uppercase + string.digits, rng.randint(8, 16))
    n = int("".join(str(int(c, 36)) for c in ref + "RF00"))
    return f"RF{98 - n % 97:02d}{ref}"


def ean13(rng: random.Random) -> str:
    s = rng.choice(["800", "840", "560", "520", "535", "529", "385", "383", "760", "900"]) + d(rng, 9)
    total = sum(int(c) * (3 if k % 2 else 1) for k, c in enumerate(s))
    return s + str((10 - total % 10) % 10)


def bad_luhn(rng: random.Random) -> str:
    s = "4" + d(rng, 14) if rng.random() < 0.5 else "5" + str(rng.randint(1, 5)) + d(rng, 13)
    good = luhn_digit(s)
    return s + str((int(good) + rng.randint(1, 9)) % 10)


def bad_iban(rng: random.Random) -> str:
    iban = make_iban(rng, rng.choice(["IT", "ES", "PT", "CH", "AT", "HR"]))
    wrong = f"{(int(iban[2:4]) + rng.randint(1, 50)) % 97 + 2:02d}"
    if wrong == iban[2:4]:
        wrong = f"{(int(wrong) + 1) % 97 + 2:02d}"
    return iban[:2] + wrong + iban[4:]


def hexs(rng: random.Random, n: int) -> str:
    return pick(rng, HEX, n)


def uid4(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


NEGATIVES: dict[str, Callable[[random.Random, int], str]] = {
    "booking_ref": lambda r, i: [
        f"Prenotazione confermata, numero di conferma {conf_no(r)} ({r.choice(HOTELS)}), arrivo 2026-08-1{i % 10}",
        dumps({"reservation": {"confirmationNo": conf_no(r), "status": "CHECKED_IN", "roomType": "DBL-SEA"}}),
        f"Localizador de la reserva: {pick(r, string.ascii_uppercase + string.digits, 6)} - "
        f"{r.choice(STATIONS)} a {r.choice(STATIONS)}"][i % 3],
    "ticket_number": lambda r, i: [
        f"PNR {pick(r, string.ascii_uppercase, 6)} - biglietto n. {d(r, 10)} - carrozza {r.randint(1, 12)}",
        dumps({"ticket": {"ticketNumber": "TKT-" + d(r, 12), "fareCode": "SUPERECO", "class": "2"}}),
        f"Ferry e-ticket {pick(r, string.ascii_uppercase, 3)}{d(r, 9)} Pireas -> Paros deck class"][i % 3],
    "invoice_number": lambda r, i: [
        f"<DatiGeneraliDocumento><TipoDocumento>TD01</TipoDocumento><Numero>{2026}-FE-{d(r, 5)}</Numero>"
        f"<Data>2026-07-1{i % 10}</Data></DatiGeneraliDocumento>",
        f"<InvoiceNo>FT A/{r.randint(1, 9999)}</InvoiceNo><InvoiceDate>2026-06-30</InvoiceDate>",
        dumps({"sii": {"NumSerieFacturaEmisor": f"F2026-{d(r, 6)}", "FechaExpedicionFacturaEmisor": "30-06-2026"}})
    ][i % 3],
    "uuid": lambda r, i: [dumps({"profileId": uid4(r), "hotelId": uid4(r)}),
                          f"{stamp(r)} INFO mews.webhook event_id={uid4(r)} type=ReservationUpdated",
                          f"GET /api/connector/v1/reservations/{uid4(r)} 200"][i % 3],
    "trace_id": lambda r, i: [f"traceparent: 00-{hexs(r, 32)}-{hexs(r, 16)}-01",
                              f"{stamp(r)} x-request-id={hexs(r, 32)} route=/siri/vm latency_ms={r.randint(3, 900)}",
                              dumps({"traceId": hexs(r, 32), "spanId": hexs(r, 16), "service": "gtfs-rt"})][i % 3],
    "digest": lambda r, i: [f"sha256:{hexs(r, 64)}  gtfs_{r.choice(['it', 'ch', 'at'])}.zip",
                            f"ETag: \"{hexs(r, 32)}\"",
                            dumps({"file": "fattura.xml.p7m", "sha256": hexs(r, 64), "size": r.randint(2000, 90000)})
                            ][i % 3],
    "git_sha": lambda r, i: [f"deployed booking-engine@{hexs(r, 40)} to prod-eu-south-1",
                             f"commit {hexs(r, 40)}\nAuthor: ci-bot\n\n    fix: ferry timetable parser",
                             f"image: registry.example/ticketing:{hexs(r, 12)}"][i % 3],
    "version": lambda r, i: [f"OPERA PMS version {r.randint(5, 6)}.{r.randint(0, 9)}.{r.randint(0, 30)}."
                             f"{r.randint(0, 99)}", f"User-Agent: SkiGateReader/{r.randint(1, 9)}.{r.randint(0, 20)}."
                             f"{r.randint(0, 300)} (build {d(r, 6)})",
                             dumps({"netexVersion": "1.1" + str(r.randint(0, 5)), "siriVersion": "2.1"})][i % 3],
    "timestamp": lambda r, i: [f"{stamp(r)} check-in completed room {r.randint(101, 640)}",
                               dumps({"createdAt": stamp(r), "epochMs": 1780000000000 + r.randint(0, 10**9)}),
                               f"Partenza: 14/07/2026 {r.randint(0, 23):02d}:{r.randint(0, 59):02d} - binario "
                               f"{r.randint(1, 24)}"][i % 3],
    "coordinates": lambda r, i: [
        f"stop_lat={r.uniform(35, 47.5):.6f} stop_lon={r.uniform(-9, 28):.6f}",
        dumps({"vehiclePosition": {"latitude": round(r.uniform(36, 47), 5), "longitude": round(r.uniform(6, 24), 5),
                                   "bearing": r.randint(0, 359)}}),
        f"Pickup point: {r.uniform(35, 47):.4f}, {r.uniform(-9, 28):.4f} (bus bay {r.randint(1, 20)})"][i % 3],
    "measurement": lambda r, i: [
        f"Schneehöhe Berg {r.randint(40, 320)} cm, Tal {r.randint(0, 90)} cm, Lifte offen {r.randint(3, 60)}/"
        f"{r.randint(60, 90)}",
        dumps({"odometerKm": r.randint(10000, 900000), "fuelL": round(r.uniform(10, 400), 1),
               "kWh": r.randint(50, 900)}),
        f"Nave: lunghezza {r.randint(80, 220)} m, {r.randint(300, 2500)} passeggeri, {r.randint(50, 800)} auto"][i % 3],
    "toll_free": lambda r, i: [
        f"Numero verde assistenza clienti: 800 {d(r, 3)} {d(r, 3)} (gratuito da rete fissa)",
        f"Línea gratuita de atención al viajero: 900 {d(r, 3)} {d(r, 3)}",
        f"Linha grátis de apoio ao cliente: 800 {d(r, 3)} {d(r, 3)}",
        f"Kostenlose Servicenummer: 0800 {d(r, 3)} {d(r, 3)}",
        f"Besplatni info telefon: 0800 {d(r, 4)}",
        f"Brezplačna številka za pomoč: 080 {d(r, 2)} {d(r, 2)}",
        f"Γραμμή χωρίς χρέωση: 800 {d(r, 3)} {d(r, 4)}"][i % 7],
    "short_code": lambda r, i: [
        f"Per acquistare il biglietto invia un SMS al numero breve {r.choice(['4850', '48444', '4898'])}",
        "In caso di emergenza chiamare il 112; soccorso alpino 118",
        "Notfall Bergrettung: 140 (Österreich) / Rega 1414 (Schweiz)",
        f"SMS short code {r.randint(1000, 9999)}: send SKIPASS to receive the day ticket"][i % 4],
    "company_reg": lambda r, i: [
        f"<IdFiscaleIVA><IdPaese>IT</IdPaese><IdCodice>{piva(r)}</IdCodice></IdFiscaleIVA>",
        f"Razón social: Navieras del Mediterráneo S.A. - CIF {cif_es(r)}",
        f"UID: {uid_ch(r)} MWST - Bergbahnen Engadin AG",
        f"<CompanyID>{nipc(r)}</CompanyID><CompanyName>Transportes do Douro, S.A.</CompanyName>",
        f"Alpenbahn GmbH, UID-Nr. {atu(r)}, FN {d(r, 6)}{r.choice('abdfkmpstvwxy')}",
        f"Žičnice Vogel d.o.o., ID za DDV: {si_ddv(r)}"][i % 6],
    "luhn_invalid": lambda r, i: [
        f"{stamp(r)} POS terminal serial {bad_luhn(r)} batch closed",
        dumps({"voucherCode": bad_luhn(r), "type": "gift"}),
        f"Skipass Chipkarte Nr. {bad_luhn(r)} (Depot)"][i % 3],
    "invalid_iban": lambda r, i: [
        f"Validation failed: IBAN {bad_iban(r)} has an invalid checksum",
        dumps({"error": "INVALID_IBAN", "value": bad_iban(r)}),
        f"Errore: l'IBAN {bad_iban(r)} non supera il controllo"][i % 3],
    "masked": lambda r, i: [
        f"Carta **** **** **** {d(r, 4)} autorizzata",
        dumps({"cardNumber": f"{r.choice(['4', '5'])}{d(r, 5)}******{d(r, 4)}", "iban": f"IT** **** **** {d(r, 4)}"}),
        f"Telefono: +39 3** *** **{d(r, 2)} - email: g***@l***.it",
        "password: ******** (hidden)"][i % 4],
    "placeholder": lambda r, i: [
        "OPENAI_API_KEY=<your-key>", "STRIPE_WEBHOOK_SECRET=${STRIPE_WEBHOOK_SECRET}",
        "password: '{{ vault_pms_password }}'", dumps({"apiKey": "xxxxxxxxxxxxxxxxxxxx", "secret": "REPLACE_ME"}),
        "DATABASE_URL=postgresql://user:<password>@localhost:5432/bookings", "AWS_SECRET_ACCESS_KEY=your-secret-here",
        "Chiave API: <inserire qui la chiave>"][i % 7],
    "example_key": lambda r, i: [
        "aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        "SLACK_WEBHOOK_URL=https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
        "Example from the docs: https://discord.com/api/webhooks/{webhook.id}/{webhook.token}"][i % 4],
    "css_code": lambda r, i: [
        f".booking-card {{ color: #{hexs(r, 6)}; border: 1px solid #{hexs(r, 6)}; }}",
        "const passwordInput = document.getElementById('guest-password');",
        "export function getGuestProfile(reservationId: string) { return api.get(`/profiles/${reservationId}`) }",
        "def validate_iban(value: str) -> bool:  # MOD 97 check", "<input type=\"tel\" name=\"phone\" "
        "placeholder=\"+39 ...\" autocomplete=\"tel\">"][i % 5],
    "path_url": lambda r, i: [
        f"/var/log/opera/ifc8/{d(r, 8)}.log", f"https://www.{r.choice(['sbb.ch', 'oebb.at', 'renfe.com'])}/"
        f"{r.choice(['fahrplan', 'timetable', 'horarios'])}?from={r.randint(8500000, 8599999)}",
        f"s3://gtfs-feeds-eu/{r.choice(['it', 'es', 'ch'])}/2026/07/{r.randint(1, 28):02d}/feed.zip",
        f"sftp://sftp.channel.example/outbound/ari_{d(r, 8)}.xml"][i % 4],
    "transit_id": lambda r, i: [
        f"trip_id={d(r, 6)}_{r.choice(['FR', 'IC', 'RE', 'S'])}{r.randint(1, 9999)} "
        f"stop_id={r.randint(8500000, 8599999)}",
        f"<StopPlaceRef ref=\"ch:1:sloid:{r.randint(1000, 99999)}\"/>",
        dumps({"netexId": f"IT:ITF1:ScheduledStopPoint:{d(r, 6)}", "lineRef": f"L{r.randint(1, 99)}"})][i % 3],
    "payment_reference": lambda r, i: [
        f"Referenz: {group(qr_reference(r), 5, ' ')}", f"Creditor reference {rf_reference(r)}",
        dumps({"qrReference": qr_reference(r), "currency": "CHF"})][i % 3],
    "ean": lambda r, i: [f"Minibar item EAN {ean13(r)} qty 2", dumps({"gtin": ean13(r), "sku": "MB-" + d(r, 4)}),
                         f"Articolo {ean13(r)} - acqua naturale 0,5 l"][i % 3],
    "password_policy": lambda r, i: [
        f"La password deve contenere almeno {r.randint(8, 14)} caratteri, una maiuscola e un numero.",
        "Password reset link sent; the link expires in 30 minutes.",
        dumps({"passwordPolicy": {"minLength": r.randint(8, 16), "requireSymbol": True, "maxAgeDays": 90}}),
        "Das Passwort wurde erfolgreich geändert."][i % 4],
    "seat_vehicle": lambda r, i: [
        f"Carrozza {r.randint(1, 12)}, posto {r.randint(1, 90)}{r.choice('ABCD')}",
        f"Bus {r.randint(100, 999)} Linie {r.randint(1, 40)} Fahrzeug {d(r, 5)}",
        dumps({"vessel": "IMO " + d(r, 7), "deck": r.randint(1, 9), "cabin": f"{r.randint(1, 9)}{d(r, 3)}"})][i % 3],
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """(sort, text) near misses: no secret and no personal data, 30 of each sort."""
    rng = random.Random(SEED * 1000 + 999)
    for sort, make in NEGATIVES.items():
        for i in range(30):
            yield sort, make(rng, i)
