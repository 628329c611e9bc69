"""The fifty-fifth blind redaction corpus: universities and research in the Nordics, Baltics and Low Countries, as
an agent that runs admissions, student records, course enrolment, grant administration, lab data pipelines and IT
support sees them.

It was written from the formats' public specifications by someone who read neither the detection rules
(tracegym/redact/, their tests, docs/redaction.md) nor the other corpora (benchmarks/redact_*.py); only the shared
generators of benchmarks/corpus_formats.py and the scoring interface of benchmarks/redact.py were read. It holds
51 kinds of PER_KIND values each (41 in the target, 10 national ids outside it) and 690 near misses over 23 sorts.

Carriers (the `form` head, before the slash): `log` (a student information system's sync log: Ladok, FS/StudieWeb,
Peppi, ÕIS, Osiris), `email` (grant and HR administration mail), `ticket` (TOPdesk and Jira Service Management),
`chat` (Teams and Slack), `slurm` (a Slurm job's output), `notebook` (a Jupyter cell's output), `csv` (an
export), `pdf` (a form's text as extracted from a PDF), `reply` (the agent's own answer), `radius` (eduroam and
Shibboleth logs), and the JSON carriers (about a third, `is_json=True`): `webhook` (an LMS webhook body: Canvas,
Moodle, Brightspace), `tool` (the agent's tool result), `lti` (an LTI launch's custom claims). Kinds with their own
print forms add theirs: `env`, `yaml`, `cli`, `jsonconf` (password, AWS), `gitlabci`, `dvc`, `config` (connection
strings), `header` (cookies, bearer tokens), `pem` (keys), `otpauth` (TOTP). The style after the slash says how
the value is written (`intl`, `national`, `spaced`, `compact`, `lower`, `fullwidth`, `zw`, `urlenc`, `jsonu` ...).

Formats and their sources: phone numbers from the national numbering plans (ITU-T E.164 country codes; Traficom
(FI), PTS (SE), Nkom (NO), Energistyrelsen (DK), Fjarskiptastofa (IS), TTJA (EE), SPRK (LV), RRT (LT), ACM (NL),
BIPT (BE), ILR (LU), NANPA, Ofcom, ARCEP, Bundesnetzagentur, TRAI: mobile and geographic ranges, Ofcom's drama
ranges avoided); IBANs from the SWIFT IBAN registry's BBAN structures with ISO 7064 MOD 97-10 check digits, and
the national check digits where published (Finnish account Luhn, Norwegian mod 11, Dutch 11-proef, Belgian mod
97); cards from ISO/IEC 7812 with the Luhn digit (Visa 4, Mastercard 51-55 and 2221-2720, Amex 34/37); US SSNs
from the SSA's rules (no area 000, 666 or 900-999, no group 00, no serial 0000); AWS access key ids and secret
keys as the IAM documentation prints them; Slack, Discord, Microsoft Teams, Power Automate, Mattermost,
Rocket.Chat, Zulip, Google Chat, Make and Zapier webhook URLs as their docs print them; Stripe's `whsec_`
signing secrets; JWTs (RFC 7519, base64url of RFC 4648) with LTI 1.3 and SAML-bridge claims; OAuth tokens as
Google (`ya29.`, `1//`), Dropbox (`sl.`), GitHub (`gho_`, CRC32 checksum) and ORCID (UUID) issue them; session
cookies of Moodle, Canvas, Shibboleth SP, SimpleSAMLphp, Java servlets, PHP and Django; PEM and OpenSSH private
keys (RFC 7468, PKCS #1, RFC 5915, OpenSSH PROTOCOL.key); TOTP seeds (RFC 6238, base32 of RFC 4648,
otpauth URIs of Google Authenticator's key-uri format); API keys of OpenAI, Anthropic, GitHub, GitLab, Hugging
Face, Google, Slack, SendGrid and npm as their docs show them; keys with no published prefix labelled in the
domain's languages (Moodle web service tokens, Canvas developer tokens, TOPdesk application passwords, Kaltura
admin secrets, Scopus API keys, Zotero keys, Figshare and Zenodo tokens, Dataverse API tokens, Alma keys).

National ids (outside the target, `OUTSIDE_TARGET`): Finnish henkilötunnus (mod 31 check character), Swedish
personnummer (Luhn), Norwegian fødselsnummer (two mod-11 digits), Danish CPR (mod 11 weights 4-3-2-7-6-5-4-3-2-1),
Icelandic kennitala (mod 11, weights 3-2-7-6-5-4-3-2), Estonian isikukood and Lithuanian asmens kodas (two-pass
mod 11), Latvian personas kods ((1101 - weighted sum) mod 11), Dutch BSN (11-proef) and Belgian
rijksregisternummer (97 - mod 97, with the 2 prefix for births from 2000). All dates are real calendar dates.

Judgements (what `secret` is): only what must not survive redaction, verbatim as it stands in the text: a
password's value, not its label; a webhook URL's token segment (Slack's last segment, Discord's token, Teams' hex
segment, Power Automate's `sig`, Mattermost's hook id, Rocket.Chat's token, Make's hook id, Zapier's hook key,
Google Chat's `token`); a connection string's password or account key; a cookie's value; a PEM key's base64 body;
an IBAN in the form written; a phone number as written; a disguised value as it is disguised (zero-width
characters, full-width forms, percent-encoding, `\\uXXXX` escapes written in a plain log line).

Languages: Finnish, Swedish, Norwegian bokmål and nynorsk, Danish, Icelandic, Estonian, Latvian, Lithuanian,
Dutch, Flemish, Belgian French, German, Northern Sami and English: the context words (phone, password, key,
account, e-mail, id) and the carriers' greetings are in the carrier's language; each region phone is labelled in
its country's languages (and English).

Near misses (`generate_negatives`): what these traces hold that is neither secret nor personal: course codes,
ticket and case numbers, invoice numbers with Finnish and RF creditor references (7-3-1, ISO 11649), Slurm job
ids, commit hashes, digests, UUIDs, DOIs, grant numbers, version strings, timestamps, coordinates, measurements,
public service and toll-free numbers named as such, company registration numbers with their check digits (Y-tunnus,
organisationsnummer, organisasjonsnummer, CVR, registrikood, KBO), Luhn-invalid card-like numbers, IBANs with
wrong check digits, masked values, placeholders, the vendors' documented example keys, code identifiers, paths
and URLs without credentials, SAML and RADIUS ids without users; written in the same carriers as the cases.
"""

from __future__ import annotations

import base64
import calendar
import json
import random
import string
import unicodedata
import urllib.parse
from collections.abc import Iterator
from dataclasses import dataclass

from benchmarks.corpus_formats import (
    b64url,
    bban,
    crc_token,
    der_int,
    der_seq,
    digits,
    group,
    group_card,
    iban_check,
    iban_ok,
    luhn_digit,
    openssh_ed25519_blob,
    pick,
)

SEED = 55
PER_KIND = 100

OUTSIDE_TARGET = frozenset({"id_fi", "id_se", "id_no", "id_dk", "id_is", "id_ee", "id_lv", "id_lt", "id_nl",
                            "id_be"})

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
LOWALNUM = string.ascii_lowercase + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
B32 = string.ascii_uppercase + "234567"


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


# ---- languages ------------------------------------------------------------------------------------------------

LANGS = ("fi", "sv", "nb", "nn", "da", "is", "et", "lv", "lt", "nl", "vls", "fr", "de", "se", "en")

WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "phone": {
        "fi": ("puh.", "puhelin", "matkapuhelin", "gsm"), "sv": ("tel.", "telefon", "mobil", "mobilnummer"),
        "nb": ("tlf.", "telefon", "mobil", "mobilnummer"), "nn": ("telefon", "mobilnummer", "tlf."),
        "da": ("tlf.", "telefon", "mobil", "mobilnummer"), "is": ("sími", "farsími", "s."),
        "et": ("tel", "telefon", "mobiil", "telefoninumber"), "lv": ("tālr.", "tālrunis", "mob.", "telefona numurs"),
        "lt": ("tel.", "telefonas", "mob.", "telefono numeris"), "nl": ("tel.", "telefoon", "mobiel",
                                                                       "telefoonnummer"),
        "vls": ("gsm", "telefoon", "tel."), "fr": ("tél.", "téléphone", "GSM", "portable"),
        "de": ("Tel.", "Telefon", "Handy", "Mobil"), "se": ("telefovdna", "mobiila", "tlf."),
        "en": ("phone", "tel", "mobile", "cell"),
    },
    "password": {
        "fi": ("salasana",), "sv": ("lösenord",), "nb": ("passord",), "nn": ("passord",), "da": ("adgangskode",),
        "is": ("lykilorð",), "et": ("parool",), "lv": ("parole",), "lt": ("slaptažodis",), "nl": ("wachtwoord",),
        "vls": ("paswoord",), "fr": ("mot de passe",), "de": ("Passwort", "Kennwort"), "se": ("beassansátni",),
        "en": ("password", "passphrase"),
    },
    "key": {
        "fi": ("avain", "API-avain"), "sv": ("nyckel", "API-nyckel"), "nb": ("nøkkel", "API-nøkkel"),
        "nn": ("nøkkel",), "da": ("nøgle", "API-nøgle"), "is": ("lykill",), "et": ("võti", "API võti"),
        "lv": ("atslēga", "API atslēga"), "lt": ("raktas", "API raktas"), "nl": ("sleutel", "API-sleutel"),
        "vls": ("sleutel",), "fr": ("clé", "clé API"), "de": ("Schlüssel", "API-Schlüssel"), "se": ("čoavdda",),
        "en": ("key", "API key", "token"),
    },
    "account": {
        "fi": ("tilinumero", "IBAN"), "sv": ("kontonummer", "IBAN"), "nb": ("kontonummer",), "nn": ("kontonummer",),
        "da": ("kontonummer",), "is": ("reikningsnúmer",), "et": ("arvelduskonto", "IBAN"),
        "lv": ("konta numurs", "IBAN"), "lt": ("sąskaitos numeris", "IBAN"), "nl": ("rekeningnummer", "IBAN"),
        "vls": ("rekeningnummer",), "fr": ("numéro de compte", "IBAN"), "de": ("Kontonummer", "IBAN"),
        "se": ("kontonummar",), "en": ("account", "IBAN", "bank account"),
    },
    "email": {
        "fi": ("sähköposti",), "sv": ("e-post",), "nb": ("e-post",), "nn": ("e-post",), "da": ("e-mail",),
        "is": ("netfang",), "et": ("e-post",), "lv": ("e-pasts",), "lt": ("el. paštas",), "nl": ("e-mail",
                                                                                                 "e-mailadres"),
        "vls": ("mailadres",), "fr": ("courriel", "adresse e-mail"), "de": ("E-Mail",), "se": ("e-poasta",),
        "en": ("email", "e-mail address"),
    },
    "card": {
        "fi": ("kortti", "luottokortti"), "sv": ("kort", "kortnummer"), "nb": ("kortnummer",), "nn": ("kortnummer",),
        "da": ("kortnummer",), "is": ("kortanúmer",), "et": ("kaardi number",), "lv": ("kartes numurs",),
        "lt": ("kortelės numeris",), "nl": ("kaartnummer", "creditcard"), "vls": ("kaartnummer",),
        "fr": ("numéro de carte", "carte bancaire"), "de": ("Kartennummer", "Kreditkarte"), "se": ("kortanummar",),
        "en": ("card", "card number", "credit card"),
    },
    "secret": {
        "fi": ("salainen avain",), "sv": ("hemlig nyckel",), "nb": ("hemmelig nøkkel",), "nn": ("løyndom",),
        "da": ("hemmelig nøgle",), "is": ("leynilykill",), "et": ("salajane võti",), "lv": ("slepenā atslēga",),
        "lt": ("slaptas raktas",), "nl": ("geheime sleutel",), "vls": ("geheime sleutel",), "fr": ("clé secrète",),
        "de": ("geheimer Schlüssel",), "se": ("čiegus čoavdda",), "en": ("secret", "secret key"),
    },
}

GREET = {"fi": "Hei", "sv": "Hej", "nb": "Hei", "nn": "Hei", "da": "Hej", "is": "Halló", "et": "Tere",
         "lv": "Labdien", "lt": "Laba diena", "nl": "Beste collega", "vls": "Dag", "fr": "Bonjour", "de": "Hallo",
         "se": "Bures", "en": "Hi"}
THANKS = {"fi": "Kiitos", "sv": "Tack", "nb": "Takk", "nn": "Takk", "da": "Tak", "is": "Takk fyrir",
          "et": "Aitäh", "lv": "Paldies", "lt": "Ačiū", "nl": "Met vriendelijke groet", "vls": "Groetjes",
          "fr": "Merci d'avance", "de": "Viele Grüße", "se": "Giitu", "en": "Thanks"}
ABOUT = {"fi": "Opiskelijan tiedot päivitetty", "sv": "Studentens uppgifter uppdaterade",
         "nb": "Studentopplysninger oppdatert", "nn": "Studentopplysningar oppdaterte",
         "da": "Studieoplysninger opdateret", "is": "Upplýsingar nemanda uppfærðar",
         "et": "Üliõpilase andmed uuendatud",
         "lv": "Studenta dati atjaunināti", "lt": "Studento duomenys atnaujinti", "nl": "Studentgegevens bijgewerkt",
         "vls": "Studentengegevens aangepast", "fr": "Données de l'étudiant mises à jour",
         "de": "Studierendendaten aktualisiert", "se": "Studeantta dieđut ođasmahttojuvvon",
         "en": "Student record updated"}
NAMES = ("Aino", "Elias", "Maja", "Lars", "Ingrid", "Mads", "Guðrún", "Kadri", "Jānis", "Rūta", "Sanne", "Wout",
         "Camille", "Jonas", "Áile", "Oskari", "Freja", "Sigrún", "Mihkel", "Ieva", "Lieke", "Thibault")
SURNAMES = ("Virtanen", "Korhonen", "Lindqvist", "Andersson", "Hansen", "Johansen", "Nielsen", "Jónsdóttir",
            "Tamm", "Saar", "Bērziņš", "Kalniņa", "Kazlauskas", "Petrauskaitė", "de Vries", "Jansen", "Peeters",
            "Dubois", "Schmitz", "Somby", "Mäkinen", "Sørensen")
SYSTEMS = ("ladok-sync", "fs-integrasjon", "peppi-api", "ois-import", "osiris-batch", "canvas-lti", "moodle-cron",
           "brightspace-valence", "topdesk-bridge", "orcid-harvest", "datacite-mint", "dvc-remote", "slurm-prolog",
           "shibd", "eduroam-radius")
UNIS = ("helsinki.fi", "aalto.fi", "utu.fi", "tuni.fi", "uu.se", "lu.se", "kth.se", "su.se", "uio.no", "ntnu.no",
        "uib.no", "ku.dk", "au.dk", "dtu.dk", "hi.is", "ru.is", "ut.ee", "taltech.ee", "lu.lv", "rtu.lv", "vu.lt",
        "ktu.edu", "uva.nl", "tudelft.nl", "rug.nl", "uu.nl", "kuleuven.be", "ugent.be", "uclouvain.be", "uni.lu")


def word(rng: random.Random, sort: str, lang: str) -> str:
    return rng.choice(WORDS[sort][lang])


def ts(rng: random.Random) -> str:
    return (f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def person(rng: random.Random) -> str:
    return f"{rng.choice(NAMES)} {rng.choice(SURNAMES)}"


# ---- carriers -------------------------------------------------------------------------------------------------

PLAIN = ("log", "email", "ticket", "chat", "slurm", "notebook", "csv", "pdf", "reply")
JSONC = ("webhook", "tool", "lti")


def dumps(rng: random.Random, obj: object) -> str:
    return json.dumps(obj, ensure_ascii=rng.random() < 0.4)


def wrap(rng: random.Random, lang: str, label: str, value: str, carrier: str | None = None) -> tuple[str, str, bool]:
    """`value` beside `label` in a carrier; returns (carrier, text, is_json)."""
    if carrier is None:
        carrier = rng.choice(JSONC) if rng.random() < 0.42 else rng.choice(PLAIN)
    g, t, about = GREET[lang], THANKS[lang], ABOUT[lang]
    if carrier == "log":
        text = f"{ts(rng)} INFO {rng.choice(SYSTEMS)}[{rng.randint(1000, 65000)}] {about}: {label}: {value}"
    elif carrier == "email":
        text = (f"From: {rng.choice(('opintopalvelut', 'studentexpedition', 'grants-office', 'hr-service'))}"
                f"@{rng.choice(UNIS)}\nSubject: {about}\n\n{g},\n\n{label}: {value}\n\n{t}\n{rng.choice(NAMES)}")
    elif carrier == "ticket":
        text = (f"TOPdesk I {rng.randint(2401, 2612)} {rng.randint(100, 999)} | {about}\n"
                f"{g}, {label} {value}\n-- {rng.choice(NAMES)}")
    elif carrier == "chat":
        text = (f"[{rng.choice(('Teams', 'Slack'))} #{rng.choice(('it-tuki', 'it-support', 'helpdesk', 'labra'))} "
                f"{rng.randint(8, 17)}:{rng.randint(10, 59)}] {person(rng)}: {g}! {label} {value}")
    elif carrier == "slurm":
        text = (f"slurm-{rng.randint(1000000, 9999999)}.out\n[{ts(rng)}] node c{rng.randint(100, 999)}: "
                f"{label} = {value}\n[{ts(rng)}] job step 0 finished")
    elif carrier == "notebook":
        text = (f"In [{rng.randint(2, 40)}]: record = client.fetch()\nOut[{rng.randint(2, 40)}]: "
                f"{{'note': '{about}', '{label}': '{value}'}}")
    elif carrier == "csv":
        text = f"record_id;field;value\n{rng.randint(10000, 99999)};{label};{value}"
    elif carrier == "pdf":
        text = (f"{about.upper()}\n\n{label} .......... {value}\n\n"
                f"{rng.choice(('Allekirjoitus', 'Underskrift', 'Signature', 'Handtekening'))}: ______")
    elif carrier == "reply":
        text = f"Agent: {about}. {label.capitalize()}: {value}. {t}!"
    elif carrier == "webhook":
        text = dumps(rng, {"event": rng.choice(("submission_updated", "user_enrolled", "grade_changed")),
                           "lms": rng.choice(("canvas", "moodle", "brightspace")), "created_at": ts(rng),
                           "data": {"comment": f"{g}, {label}: {value}"}})
    elif carrier == "tool":
        text = dumps(rng, {"tool": rng.choice(("ladok.get_student", "peppi.lookup", "topdesk.get_incident",
                                               "fs.hent_student", "ois.query")),
                           "result": {"status": "ok", label: value}})
    else:  # lti
        text = dumps(rng, {"iss": f"https://{rng.choice(('canvas', 'moodle', 'brightspace'))}.{rng.choice(UNIS)}",
                           "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
                           "https://purl.imsglobal.org/spec/lti/claim/custom": {label: value}})
    return carrier, text, carrier in JSONC


def make(kind: str, style: str, secret: str, rng: random.Random, lang: str, label: str, value: str | None = None,
         carrier: str | None = None) -> Case:
    c, text, is_json = wrap(rng, lang, label, secret if value is None else value, carrier)
    return Case(kind, f"{c}/{style}", secret, text, is_json)


# ---- phones ---------------------------------------------------------------------------------------------------

def d(rng: random.Random, n: int) -> str:
    return digits(rng, n)


def nz(rng: random.Random) -> str:
    return rng.choice("23456789")


def phone_us_ca(rng):
    area = rng.choice(("212", "617", "415", "312", "206", "512", "734", "416", "604", "514", "613", "919"))
    while True:
        ex = nz(rng) + d(rng, 2)
        if ex[1:] != "11" and ex != "555":
            break
    line = d(rng, 4)
    style = rng.choice(("paren", "dash", "dot", "intl", "intldash"))
    return style, {"paren": f"({area}) {ex}-{line}", "dash": f"{area}-{ex}-{line}", "dot": f"{area}.{ex}.{line}",
                   "intl": f"+1 {area} {ex} {line}", "intldash": f"+1-{area}-{ex}-{line}"}[style]


def phone_uk(rng):
    style = rng.choice(("mobile", "intl", "london", "oxbridge", "intl0"))
    if style in ("mobile", "intl"):
        while True:
            mob = "7" + rng.choice("3456789") + d(rng, 8)
            if not mob.startswith("7700"):
                break
        return style, f"0{mob[:4]} {mob[4:]}" if style == "mobile" else f"+44 {mob[:4]} {mob[4:]}"
    if style == "london":
        return style, f"020 {rng.choice('378')}{d(rng, 3)} {d(rng, 4)}"
    if style == "oxbridge":
        if rng.random() < 0.3:
            return style, f"0131 {nz(rng)}{d(rng, 2)} {d(rng, 4)}"
        return style, f"{rng.choice(('01865', '01223'))} {nz(rng)}{d(rng, 5)}"
    return style, f"+44 (0)20 {rng.choice('378')}{d(rng, 3)} {d(rng, 4)}"


def phone_fr(rng):
    first = rng.choice("1234567")
    rest = [nz(rng) + d(rng, 1)] + [d(rng, 2) for _ in range(3)]
    style = rng.choice(("spaced", "dotted", "intl", "intl0", "compact"))
    if style == "spaced":
        return style, f"0{first} " + " ".join(rest)
    if style == "dotted":
        return style, f"0{first}." + ".".join(rest)
    if style == "intl":
        return style, f"+33 {first} " + " ".join(rest)
    if style == "intl0":
        return style, f"+33 (0){first} " + " ".join(rest)
    return style, f"0{first}" + "".join(rest)


def phone_de(rng):
    style = rng.choice(("mobile", "slash", "intl", "landline", "intl0"))
    mob = rng.choice(("151", "152", "157", "160", "162", "170", "171", "172", "173", "175", "176", "177", "179"))
    sub = nz(rng) + d(rng, rng.choice((6, 7)))
    city = rng.choice(("30", "89", "40", "6221", "551", "761"))
    local = nz(rng) + d(rng, 6 if len(city) == 2 else 5)
    return style, {"mobile": f"0{mob} {sub}", "slash": f"0{mob}/{sub}", "intl": f"+49 {mob} {sub}",
                   "landline": f"0{city} {local}", "intl0": f"+49 (0){city} {local}"}[style]


def phone_in(rng):
    style = rng.choice(("mobile", "intl", "intldash", "zero", "landline"))
    m = rng.choice("6789") + d(rng, 9)
    if style == "mobile":
        return style, f"{m[:5]} {m[5:]}"
    if style == "intl":
        return style, f"+91 {m[:5]} {m[5:]}"
    if style == "intldash":
        return style, f"+91-{m}"
    if style == "zero":
        return style, f"0{m}"
    return style, rng.choice((f"011-2{d(rng, 7)}", f"080-2{d(rng, 7)}", f"+91 22 2{d(rng, 3)} {d(rng, 4)}"))


def phone_fi(rng):
    style = rng.choice(("mobile", "dash", "intl", "intlcompact", "landline"))
    pre = rng.choice(("40", "41", "44", "45", "46", "50"))
    s = d(rng, 7)
    if style == "mobile":
        return style, f"0{pre} {s[:3]} {s[3:]}"
    if style == "dash":
        return style, f"0{pre}-{s}"
    if style == "intl":
        return style, f"+358 {pre} {s[:3]} {s[3:]}"
    if style == "intlcompact":
        return style, f"+358{pre}{s}"
    return style, rng.choice((f"09 {nz(rng)}{d(rng, 3)} {d(rng, 4)}", f"02 {nz(rng)}{d(rng, 2)} {d(rng, 4)}",
                              f"+358 9 {nz(rng)}{d(rng, 3)} {d(rng, 4)}"))


def phone_se(rng):
    style = rng.choice(("mobile", "compact", "intl", "landline", "intllandline"))
    pre = rng.choice(("70", "72", "73", "76", "79"))
    s = d(rng, 7)
    if style == "mobile":
        return style, f"0{pre}-{s[:3]} {s[3:5]} {s[5:]}"
    if style == "compact":
        return style, f"0{pre}{s}"
    if style == "intl":
        return style, f"+46 {pre} {s[:3]} {s[3:5]} {s[5:]}"
    area, n = rng.choice((("8", 8), ("18", 6), ("46", 6), ("31", 7), ("90", 6)))
    sub = nz(rng) + d(rng, n - 1)
    cut = {8: (3, 3, 2), 7: (3, 2, 2), 6: (2, 2, 2)}[n]
    spaced = " ".join((sub[:cut[0]], sub[cut[0]:cut[0] + cut[1]], sub[cut[0] + cut[1]:]))
    if style == "landline":
        return style, f"0{area}-{spaced}"
    return style, f"+46 {area} {spaced}"


def phone_no(rng):
    style = rng.choice(("mobile3", "pairs", "intl", "landline", "compact"))
    m = rng.choice("49") + d(rng, 7)
    if style == "mobile3":
        return style, f"{m[:3]} {m[3:5]} {m[5:]}"
    if style == "pairs":
        return style, " ".join(m[i:i + 2] for i in range(0, 8, 2))
    if style == "intl":
        return style, f"+47 {m[:3]} {m[3:5]} {m[5:]}"
    if style == "compact":
        return style, f"+47{m}"
    l = rng.choice(("21", "22", "23", "32", "33", "35", "37", "38", "51", "52", "55", "56", "57", "61", "62", "69",
                    "70", "71", "73", "75", "77")) + d(rng, 6)
    return style, " ".join(l[i:i + 2] for i in range(0, 8, 2))


def phone_dk(rng):
    style = rng.choice(("pairs", "intl", "compact", "landline", "intlcompact"))
    m = rng.choice(("20", "21", "22", "26", "28", "30", "31", "40", "41", "42", "50", "51", "52", "53", "60", "61",
                    "71", "91", "93")) + d(rng, 6)
    if style == "landline":
        m = rng.choice(("33", "35", "38", "86", "87", "89")) + d(rng, 6)
    pairs = " ".join(m[i:i + 2] for i in range(0, 8, 2))
    return style, {"pairs": pairs, "intl": f"+45 {pairs}", "compact": m, "landline": pairs,
                   "intlcompact": f"+45{m}"}[style]


def phone_is(rng):
    style = rng.choice(("mobile", "intl", "landline", "dash"))
    m = rng.choice("678") + d(rng, 6)
    if m.startswith("80"):  # 800-809 is freephone, not mobile
        m = "82" + m[2:]
    if style == "landline":
        m = "5" + d(rng, 6)
    return style, {"mobile": f"{m[:3]} {m[3:]}", "intl": f"+354 {m[:3]} {m[3:]}", "landline": f"{m[:3]} {m[3:]}",
                   "dash": f"{m[:3]}-{m[3:]}"}[style]


def phone_ee(rng):
    style = rng.choice(("mobile", "mobile7", "intl", "landline", "intlcompact"))
    m8, m7 = "5" + d(rng, 7), "5" + d(rng, 6)
    land = rng.choice("67") + d(rng, 6)
    if land[0] == "7":  # Tartu's geographic 73x-74x
        land = "7" + "34"[int(land[1]) % 2] + land[2:]
    return style, {"mobile": f"{m8[:4]} {m8[4:]}", "mobile7": f"{m7[:3]} {m7[3:]}", "intl": f"+372 {m8[:4]} {m8[4:]}",
                   "landline": f"{land[:3]} {land[3:]}", "intlcompact": f"+372{m8}"}[style]


def phone_lv(rng):
    style = rng.choice(("mobile", "intl", "landline", "compact"))
    m = "2" + d(rng, 7)
    if style == "landline":
        m = "67" + d(rng, 6)
    return style, {"mobile": f"{m[:4]} {m[4:]}", "intl": f"+371 {m[:4]} {m[4:]}", "landline": f"{m[:4]} {m[4:]}",
                   "compact": f"+371{m}"}[style]


def phone_lt(rng):
    style = rng.choice(("intl", "trunk", "compact", "landline", "intllandline"))
    m = "6" + d(rng, 7)
    if style == "intl":
        return style, f"+370 {m[:3]} {m[3:]}"
    if style == "trunk":
        return style, f"8 {m[:3]} {m[3:]}"
    if style == "compact":
        return style, f"8{m}"
    sub = nz(rng) + d(rng, 6)
    if style == "landline":
        return style, f"(8 5) {sub[:3]} {sub[3:]}"
    return style, f"+370 5 {sub[:3]} {sub[3:]}"


def phone_nl(rng):
    style = rng.choice(("mobile", "mobilespaced", "intl", "intl0", "landline"))
    m = nz(rng) + d(rng, 7)
    if style == "mobile":
        return style, f"06-{m}"
    if style == "mobilespaced":
        return style, f"06 {m[:4]} {m[4:]}"
    if style == "intl":
        return style, f"+31 6 {m}"
    if style == "intl0":
        return style, f"+31 (0)6 {m[:4]} {m[4:]}"
    area = rng.choice(("20", "30", "71", "50", "15", "43"))
    sub = nz(rng) + d(rng, 6)
    return style, f"0{area}-{sub[:3]} {sub[3:]}"


def phone_be(rng):
    style = rng.choice(("mobile", "intl", "brussels", "zonal", "intlland"))
    m = rng.choice(("470", "471", "472", "473", "475", "476", "477", "478", "479", "484", "485", "486", "487",
                    "488", "489", "491", "492", "493", "494", "495", "496", "497", "498", "499")) + d(rng, 6)
    pairs = f"{m[3:5]} {m[5:7]} {m[7:]}"
    if style == "mobile":
        return style, f"0{m[:3]} {pairs}"
    if style == "intl":
        return style, f"+32 {m[:3]} {pairs}"
    b = nz(rng) + d(rng, 6)
    if style == "brussels":
        return style, f"02 {b[:3]} {b[3:5]} {b[5:]}"
    if style == "intlland":
        return style, f"+32 2 {b[:3]} {b[3:5]} {b[5:]}"
    z = rng.choice(("16", "9", "10", "3", "4"))
    if len(z) == 2:
        sub = nz(rng) + d(rng, 5)
        return style, f"0{z} {sub[:2]} {sub[2:4]} {sub[4:]}"
    sub = nz(rng) + d(rng, 6)
    return style, f"0{z} {sub[:3]} {sub[3:5]} {sub[5:]}"


def phone_lu(rng):
    style = rng.choice(("mobile", "intl", "landline", "intlland"))
    m = rng.choice(("621", "628", "661", "671", "691")) + d(rng, 6)
    land = rng.choice(("26", "27", "46", "47")) + d(rng, 6)
    return style, {"mobile": f"{m[:3]} {m[3:6]} {m[6:]}", "intl": f"+352 {m[:3]} {m[3:6]} {m[6:]}",
                   "landline": " ".join(land[i:i + 2] for i in range(0, 8, 2)),
                   "intlland": "+352 " + " ".join(land[i:i + 2] for i in range(0, 8, 2))}[style]


PHONES = {
    "phone_us_ca": (phone_us_ca, ("en", "en", "fr")), "phone_uk": (phone_uk, ("en",)),
    "phone_fr": (phone_fr, ("fr",)), "phone_de": (phone_de, ("de",)), "phone_in": (phone_in, ("en",)),
    "phone_fi": (phone_fi, ("fi", "fi", "sv", "se", "en")), "phone_se": (phone_se, ("sv", "sv", "se", "en")),
    "phone_no": (phone_no, ("nb", "nn", "se", "en")), "phone_dk": (phone_dk, ("da", "da", "en")),
    "phone_is": (phone_is, ("is", "is", "en")), "phone_ee": (phone_ee, ("et", "et", "en")),
    "phone_lv": (phone_lv, ("lv", "lv", "en")), "phone_lt": (phone_lt, ("lt", "lt", "en")),
    "phone_nl": (phone_nl, ("nl", "nl", "en")), "phone_be": (phone_be, ("vls", "fr", "nl", "de", "en")),
    "phone_lu": (phone_lu, ("fr", "de", "en")),
}


# ---- national ids ---------------------------------------------------------------------------------------------

def birth(rng: random.Random, lo: int = 1955, hi: int = 2007) -> tuple[int, int, int]:
    y = rng.randint(lo, hi)
    m = rng.randint(1, 12)
    return y, m, rng.randint(1, calendar.monthrange(y, m)[1])


def id_fi(rng):
    y, m, dd = birth(rng)
    zzz = rng.randint(2, 899)
    sign = rng.choice("-Y") if y < 2000 else rng.choice("AB")
    n = int(f"{dd:02d}{m:02d}{y % 100:02d}{zzz:03d}")
    return "hetu", f"{dd:02d}{m:02d}{y % 100:02d}{sign}{zzz:03d}{'0123456789ABCDEFHJKLMNPRSTUVWXY'[n % 31]}"


def id_se(rng):
    y, m, dd = birth(rng)
    nine = f"{y % 100:02d}{m:02d}{dd:02d}{d(rng, 3)}"
    full = nine + luhn_digit(nine)
    style = rng.choice(("ten", "twelve", "twelvecompact"))
    if style == "ten":
        return style, f"{full[:6]}-{full[6:]}"
    if style == "twelve":
        return style, f"{y // 100}{full[:6]}-{full[6:]}"
    return style, f"{y // 100}{full}"


def id_no(rng):
    while True:
        y, m, dd = birth(rng, 1950, 2007)
        ind = rng.randint(0, 499) if y < 2000 else rng.randint(500, 999)
        ds = [int(c) for c in f"{dd:02d}{m:02d}{y % 100:02d}{ind:03d}"]
        k1 = 11 - sum(a * b for a, b in zip(ds, (3, 7, 6, 1, 8, 9, 4, 5, 2), strict=False)) % 11
        k1 = 0 if k1 == 11 else k1
        if k1 == 10:
            continue
        k2 = 11 - sum(a * b for a, b in zip(ds + [k1], (5, 4, 3, 2, 7, 6, 5, 4, 3, 2), strict=False)) % 11
        k2 = 0 if k2 == 11 else k2
        if k2 == 10:
            continue
        s = "".join(map(str, ds)) + f"{k1}{k2}"
        return ("compact", s) if rng.random() < 0.6 else ("spaced", f"{s[:6]} {s[6:]}")


def id_dk(rng):
    while True:
        y, m, dd = birth(rng, 1960, 1999)
        s = f"{dd:02d}{m:02d}{y % 100:02d}{rng.randint(0, 3)}{d(rng, 3)}"
        if sum(int(c) * w for c, w in zip(s, (4, 3, 2, 7, 6, 5, 4, 3, 2, 1), strict=False)) % 11 == 0:
            return ("dash", f"{s[:6]}-{s[6:]}") if rng.random() < 0.7 else ("compact", s)


def id_is(rng):
    while True:
        y, m, dd = birth(rng)
        s = f"{dd:02d}{m:02d}{y % 100:02d}{rng.randint(20, 99)}"
        r = sum(int(c) * w for c, w in zip(s, (3, 2, 7, 6, 5, 4, 3, 2), strict=False)) % 11
        c = 0 if r == 0 else 11 - r
        if c == 10:
            continue
        s += f"{c}{9 if y < 2000 else 0}"
        return ("dash", f"{s[:6]}-{s[6:]}") if rng.random() < 0.7 else ("compact", s)


def baltic_check(ds: str) -> int:
    c = sum(int(x) * w for x, w in zip(ds, (1, 2, 3, 4, 5, 6, 7, 8, 9, 1), strict=False)) % 11
    if c == 10:
        c = sum(int(x) * w for x, w in zip(ds, (3, 4, 5, 6, 7, 8, 9, 1, 2, 3), strict=False)) % 11
        c = 0 if c == 10 else c
    return c


def id_ee(rng, lt: bool = False):
    y, m, dd = birth(rng)
    g = (3 if y < 2000 else 5) + rng.randint(0, 1)
    s = f"{g}{y % 100:02d}{m:02d}{dd:02d}{d(rng, 3)}"
    return "compact", s + str(baltic_check(s))


def id_lt(rng):
    return id_ee(rng, True)


def id_lv(rng):
    while True:
        y, m, dd = birth(rng)
        s = f"{dd:02d}{m:02d}{y % 100:02d}{1 if y < 2000 else 2}{d(rng, 3)}"
        c = (1101 - sum(int(x) * w for x, w in zip(s, (1, 6, 3, 7, 9, 10, 5, 8, 4, 2), strict=False))) % 11
        if c == 10:
            continue
        s += str(c)
        return ("dash", f"{s[:6]}-{s[6:]}") if rng.random() < 0.8 else ("compact", s)


def id_nl(rng):
    while True:
        s = rng.choice("123456") + d(rng, 7)
        c = sum(int(x) * w for x, w in zip(s, (9, 8, 7, 6, 5, 4, 3, 2), strict=False)) % 11
        if c == 10:
            continue
        s += str(c)
        style = rng.choice(("compact", "dotted"))
        return style, s if style == "compact" else f"{s[:4]}.{s[4:6]}.{s[6:]}"


def id_be(rng):
    y, m, dd = birth(rng)
    seq = rng.randint(1, 997)
    base = f"{y % 100:02d}{m:02d}{dd:02d}{seq:03d}"
    cc = 97 - int(("2" if y >= 2000 else "") + base) % 97
    s = base + f"{cc:02d}"
    style = rng.choice(("dotted", "compact"))
    return style, s if style == "compact" else f"{s[:2]}.{s[2:4]}.{s[4:6]}-{s[6:9]}.{s[9:]}"


IDS = {
    "id_fi": (id_fi, {"fi": ("henkilötunnus", "hetu"), "sv": ("personbeteckning",), "en": ("Finnish personal id",)}),
    "id_se": (id_se, {"sv": ("personnummer",), "se": ("persovdnanummar",), "en": ("Swedish personal number",)}),
    "id_no": (id_no, {"nb": ("fødselsnummer",), "nn": ("fødselsnummer",), "en": ("Norwegian national id",)}),
    "id_dk": (id_dk, {"da": ("CPR-nr.", "CPR-nummer"), "en": ("CPR number",)}),
    "id_is": (id_is, {"is": ("kennitala", "kt."), "en": ("kennitala",)}),
    "id_ee": (id_ee, {"et": ("isikukood",), "en": ("Estonian personal code",)}),
    "id_lv": (id_lv, {"lv": ("personas kods", "p.k."), "en": ("Latvian personal code",)}),
    "id_lt": (id_lt, {"lt": ("asmens kodas", "a.k."), "en": ("Lithuanian personal code",)}),
    "id_nl": (id_nl, {"nl": ("BSN", "burgerservicenummer"), "en": ("BSN",)}),
    "id_be": (id_be, {"vls": ("rijksregisternummer",), "fr": ("numéro de registre national",),
                      "de": ("Nationalregisternummer",), "en": ("Belgian national number",)}),
}


# ---- secrets --------------------------------------------------------------------------------------------------

def password(rng: random.Random) -> str:
    words = ("Revontuli", "Sommar", "Fjord", "Hygge", "Eldfjall", "Kask", "Dzintars", "Gintaras", "Fiets",
             "Frites", "Lumi", "Skog", "Havet", "Muna", "Meri")
    style = rng.randint(0, 2)
    if style == 0:
        return rng.choice(words) + rng.choice("!#%&*-+?") + d(rng, 4) + rng.choice(words).lower()
    if style == 1:
        return pick(rng, ALNUM + "!#%*-_+?=", rng.randint(14, 24))
    return "-".join(rng.choice(words).lower() for _ in range(3)) + d(rng, 2)


def aws_pair(rng: random.Random) -> tuple[str, str]:
    return rng.choice(("AKIA", "ASIA")) + pick(rng, string.ascii_uppercase + "234567", 16), pick(rng, B64, 40)


ENV_NAMES = ("LADOK_DB_PASSWORD", "MOODLE_DBPASS", "CANVAS_LDAP_BIND_PASSWORD", "PEPPI_SMTP_PASSWORD",
             "OIS_ORACLE_PASSWORD", "OSIRIS_API_PASS", "MINIO_ROOT_PASSWORD", "SLURMDBD_STORAGE_PASS",
             "TOPDESK_OPERATOR_PASSWORD", "SHIB_KEYSTORE_PASSWORD", "RADIUS_SHARED_SECRET_PASSWORD",
             "DATACITE_REPOSITORY_PASSWORD")
CAMEL = ("ladokPassword", "smtpPassword", "ldapBindPassword", "dbPassword", "keystorePassword", "moodleAdminPass",
         "orcidMemberPassword", "dataciteRepoPassword", "jupyterhubPassword", "minioSecretPassword")


def kind_password(rng):
    pw = password(rng)
    style = rng.choice(("env", "yaml", "jsonconf", "cli", "camel", "prose", "prose"))
    lang = rng.choice(LANGS)
    if style == "env":
        text = f"# .env ({rng.choice(SYSTEMS)})\n{rng.choice(ENV_NAMES)}={pw}\nTZ=Europe/Helsinki"
        return Case("password", "env/plain", pw, text, False)
    if style == "yaml":
        text = (f"database:\n  host: db.{rng.choice(UNIS)}\n  user: svc_{rng.choice(('ladok', 'fs', 'peppi'))}\n"
                f"  {rng.choice(('password', 'passwd', 'db_password'))}: \"{pw}\"\n")
        return Case("password", "yaml/quoted", pw, text, False)
    if style == "jsonconf":
        text = dumps(rng, {"service": rng.choice(SYSTEMS), rng.choice(CAMEL): pw, "timeoutMs": 30000})
        return Case("password", "jsonconf/camel", pw, text, True)
    if style == "cli":
        tool = rng.choice((f"mysql -u moodle -p'{pw}' moodle", f"psql \"host=db user=ladok password={pw}\"",
                           f"ldapsearch -x -D cn=svc,dc=uu,dc=se -w '{pw}' uid=*",
                           f"sshpass -p '{pw}' ssh svc@login.csc.fi",
                           f"mc alias set lab https://minio.{rng.choice(UNIS)} labadmin '{pw}'"))
        return Case("password", "cli/flag", pw, f"$ {tool}", False)
    if style == "camel":
        text = f"{rng.choice(SYSTEMS)} config: {rng.choice(CAMEL)}={pw}; retries=3"
        return Case("password", "log/camel", pw, text, False)
    return make("password", lang, pw, rng, lang, word(rng, "password", lang))


def kind_aws(rng):
    kid, sec = aws_pair(rng)
    style = rng.choice(("labelled", "json", "beside", "credentials", "env"))
    if style == "labelled":
        lang = rng.choice(LANGS)
        return make("aws_secret", "labelled", sec, rng, lang, f"AWS {word(rng, 'secret', lang)}")
    if style == "json":
        text = dumps(rng, {"AccessKeyId": kid, "SecretAccessKey": sec, "Region": "eu-north-1"})
        return Case("aws_secret", "jsonconf/pair", sec, text, True)
    if style == "beside":
        text = (f"[{ts(rng)}] dvc push -r s3store: using credentials {kid} {sec} for "
                f"s3://{rng.choice(('lab-data', 'genomics-raw', 'climate-runs'))}-{d(rng, 4)}")
        return Case("aws_secret", "slurm/unlabelled", sec, text, False)
    if style == "credentials":
        text = f"[default]\naws_access_key_id = {kid}\naws_secret_access_key = {sec}\nregion = eu-north-1\n"
        return Case("aws_secret", "ini/credentials", sec, text, False)
    text = f"export AWS_ACCESS_KEY_ID={kid}\nexport AWS_SECRET_ACCESS_KEY={sec}\ndvc pull"
    return Case("aws_secret", "env/export", sec, text, False)


def webhook_url(rng) -> tuple[str, str, str]:
    """(provider, url, secret)."""
    p = rng.choice(("slack", "discord", "teams", "powerautomate", "mattermost", "rocketchat", "zulip", "gchat",
                    "make", "zapier"))
    if p == "slack":
        tok = pick(rng, ALNUM, 24)
        return p, (f"https://hooks.slack.com/services/T{pick(rng, string.ascii_uppercase + string.digits, 10)}/"
                   f"B{pick(rng, string.ascii_uppercase + string.digits, 10)}/{tok}"), tok
    if p == "discord":
        tok = pick(rng, URLSAFE, 68)
        return p, f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 19 - 1)}/{tok}", tok
    if p == "teams":
        def u():
            h = pick(rng, HEX, 32)
            return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
        tok = pick(rng, HEX, 32)
        org = rng.choice(("helsinkifi", "uuse", "ntnu", "kuleuven", "tudelft", "utee"))
        return p, (f"https://{org}.webhook.office.com/webhookb2/{u()}@{u()}/IncomingWebhook/{tok}/{u()}/"
                   f"V2{pick(rng, URLSAFE, 43)}"), tok
    if p == "powerautomate":
        sig = pick(rng, URLSAFE, 43)
        return p, (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
                   f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0"
                   f"&sig={sig}"), sig
    if p == "mattermost":
        tok = pick(rng, LOWALNUM, 26)
        return p, f"https://mattermost.{rng.choice(UNIS)}/hooks/{tok}", tok
    if p == "rocketchat":
        tok = pick(rng, ALNUM, 48)
        return p, f"https://chat.{rng.choice(UNIS)}/hooks/{pick(rng, ALNUM, 17)}/{tok}", tok
    if p == "zulip":
        tok = pick(rng, ALNUM, 32)
        return p, (f"https://{rng.choice(('research', 'hpc', 'lab'))}.zulipchat.com/api/v1/external/slack_incoming"
                   f"?api_key={tok}&stream=alerts"), tok
    if p == "gchat":
        tok = pick(rng, URLSAFE, 43)
        return p, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
                   f"{pick(rng, URLSAFE, 33)}&token={tok}"), tok
    if p == "make":
        tok = pick(rng, LOWALNUM, 32)
        return p, f"https://hook.eu{rng.choice('12')}.make.com/{tok}", tok
    tok = pick(rng, LOWALNUM, 7)
    return p, f"https://hooks.zapier.com/hooks/catch/{rng.randint(1000000, 19999999)}/{tok}/", tok


def kind_webhook(rng):
    p, url, tok = webhook_url(rng)
    lang = rng.choice(LANGS)
    r = rng.random()
    if r < 0.25:
        text = f"# gitlab-ci.yml\nvariables:\n  NOTIFY_URL: \"{url}\"\nnotify:\n  script: curl -X POST \"$NOTIFY_URL\""
        return Case("webhook", f"gitlabci/{p}", tok, text, False)
    if r < 0.4:
        text = f"$ curl -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"Slurm job done\"}}' {url}"
        return Case("webhook", f"cli/{p}", tok, text, False)
    return make("webhook", p, tok, rng, lang, "webhook", url)


def kind_whsec(rng):
    sec = "whsec_" + pick(rng, ALNUM, 32)
    r = rng.random()
    if r < 0.3:
        return Case("stripe_whsec", "env/plain", sec,
                    f"STRIPE_WEBHOOK_SECRET={sec}\nSTRIPE_PUBLISHABLE=pk_live_{'*' * 8}", False)
    if r < 0.45:
        return Case("stripe_whsec", "cli/listen", sec,
                    f"$ stripe listen --forward-to localhost:8000/payments/webhook\n> Ready! Your webhook signing "
                    f"secret is {sec} (^C to quit)", False)
    lang = rng.choice(LANGS)
    return make("stripe_whsec", "labelled", sec, rng, lang,
                rng.choice(("Stripe signing secret", f"Stripe webhook {word(rng, 'secret', lang)}")))


def kind_conn(rng):
    pw = rng.choice((password(rng), pick(rng, ALNUM, 20)))
    pw = pw.replace("@", "").replace(":", "").replace("/", "").replace("?", "").replace("#", "").replace("%", "")
    host = f"{rng.choice(('db', 'pg', 'mongo', 'redis', 'mq'))}{rng.randint(1, 9)}.{rng.choice(UNIS)}"
    r = rng.randint(0, 7)
    if r == 0:
        s, style = f"postgresql://ladok_ro:{pw}@{host}:5432/ladok", "postgres"
    elif r == 1:
        s, style = f"mongodb+srv://lms:{pw}@{host}/moodle?retryWrites=true", "mongodb"
    elif r == 2:
        s, style = f"redis://:{pw}@{host}:6379/0", "redis"
    elif r == 3:
        s, style = f"amqp://celery:{pw}@{host}:5672/lab", "amqp"
    elif r == 4:
        s, style = f"Server=tcp:{host},1433;Database=osiris;User ID=osiris_app;Password={pw};Encrypt=True;", "mssql"
    elif r == 5:
        pw = pick(rng, B64, 86) + "=="
        s, style = (f"DefaultEndpointsProtocol=https;AccountName=labdata{d(rng, 3)};AccountKey={pw};"
                    f"EndpointSuffix=core.windows.net"), "azure"
    elif r == 6:
        s, style = f"mysql://moodleuser:{pw}@{host}:3306/moodle", "mysql"
    else:
        s, style = f"jdbc:oracle:thin:ois_app/{pw}@//{host}:1521/OISPDB", "oracle"
    c = rng.random()
    if c < 0.3:
        text = f"[database]\nurl = {s}\npool_size = 10"
        return Case("connection_string", f"config/{style}", pw, text, False)
    if c < 0.45:
        text = f"remote:\n  url: s3://dvc-cache\ncache_db: \"{s}\""
        return Case("connection_string", f"dvc/{style}", pw, text, False)
    lang = rng.choice(LANGS)
    return make("connection_string", style, pw, rng, lang, "connection string", s)


def uuid4(h: str) -> str:
    """A random UUID (RFC 9562, version 4) from 32 drawn hex digits: the version nibble set to 4, the variant's
    top bits to 10."""
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{HEX[8 | int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


LABELLED = (
    ("Moodle web service token", lambda r: pick(r, HEX, 32)),
    ("Canvas developer token", lambda r: f"{r.randint(1000, 29999)}~{pick(r, ALNUM, 64)}"),
    ("TOPdesk application password", lambda r: "-".join(pick(r, LOWALNUM, 5) for _ in range(5))),
    ("Kaltura admin secret", lambda r: pick(r, HEX, 32)),
    ("Scopus API key", lambda r: pick(r, HEX, 32)),
    ("Zotero API key", lambda r: pick(r, ALNUM, 24)),
    ("Figshare personal token", lambda r: pick(r, HEX, 128)),
    ("Zenodo access token", lambda r: pick(r, ALNUM, 60)),
    ("Dataverse API token", lambda r: uuid4(pick(r, HEX, 32))),
    ("Alma API key", lambda r: "l7xx" + pick(r, HEX, 32)),
    ("Brightspace app key", lambda r: pick(r, URLSAFE, 22)),
    ("Panopto API key", lambda r: uuid4(pick(r, HEX, 32))),
    ("Weights & Biases API key", lambda r: pick(r, HEX, 40)),
)
LOCAL_LABEL = {"fi": "{p} -rajapinnan {w}", "sv": "{p} {w}", "nb": "{p} {w}", "nn": "{p} {w}", "da": "{p} {w}",
               "is": "{w} fyrir {p}", "et": "{p} {w}", "lv": "{p} {w}", "lt": "{p} {w}", "nl": "{w} voor {p}",
               "vls": "{w} van {p}", "fr": "{w} {p}", "de": "{p} {w}", "se": "{p} {w}", "en": "{p}"}


def kind_labelled(rng):
    name, gen = rng.choice(LABELLED)
    val = gen(rng)
    lang = rng.choice(LANGS)
    platform = name.split(" ")[0] if lang != "en" else name
    label = LOCAL_LABEL[lang].format(p=platform, w=word(rng, "key", lang))
    return make("labelled_key", f"{lang}", val, rng, lang, label)


FW = {c: chr(ord(c) + 0xFEE0) for c in map(chr, range(0x21, 0x7F))}


def disguise(rng, value: str) -> tuple[str, str]:
    style = rng.choice(("zw", "fullwidth", "urlenc", "jsonu", "zwj"))
    if style in ("zw", "zwj"):
        zws = "\u200b\u200c\u200d\u2060" if style == "zw" else "\u200d\ufeff"
        out = ""
        for i, c in enumerate(value):
            out += c
            if i < len(value) - 1 and i % rng.randint(2, 5) == 0:
                out += rng.choice(zws)
        return style, out
    if style == "fullwidth":
        return style, "".join(FW.get(c, c) for c in value)
    if style == "urlenc":
        quoted = urllib.parse.quote(value, safe="")
        if quoted == value or rng.random() < 0.5:
            return style, "".join(f"%{ord(c):02X}" for c in value)
        return style, quoted
    return style, "".join(f"\\u{ord(c):04x}" if i % 2 == 0 or rng.random() < 0.5 else c
                          for i, c in enumerate(value))


def kind_disguised(rng):
    src = rng.choice(("password", "aws", "whsec", "webhook", "openai", "github", "conn"))
    if src == "password":
        v, label = password(rng), "password"
    elif src == "aws":
        v, label = aws_pair(rng)[1], "aws_secret_access_key"
    elif src == "whsec":
        v, label = "whsec_" + pick(rng, ALNUM, 32), "stripe_webhook_secret"
    elif src == "webhook":
        v, label = pick(rng, ALNUM, 24), "slack webhook token"
    elif src == "openai":
        v, label = openai_key(rng), "OPENAI_API_KEY"
    elif src == "github":
        v, label = crc_token(rng, "ghp_"), "GITHUB_TOKEN"
    else:
        v, label = pick(rng, ALNUM, 20), "db password"
    style, dv = disguise(rng, v)
    lang = rng.choice(LANGS)
    if style == "jsonu":
        text = f"{ts(rng)} DEBUG {rng.choice(SYSTEMS)} request body={{\"{label}\": \"{dv}\"}}"
        return Case("disguised", f"log/{style}", dv, text, False)
    if style == "urlenc":
        text = f"GET /api/sync?{label.replace(' ', '_')}={dv}&term=2026S HTTP/1.1"
        return Case("disguised", f"log/{style}", dv, text, False)
    c = make("disguised", style, dv, rng, lang,
             f"{label} ({word(rng, 'password' if src in ('password', 'conn') else 'key', lang)})")
    return c


def asciify(name: str) -> str:
    """A name as an ASCII local part: ð d, ø o, æ ae, other accents dropped (NFKD)."""
    name = name.replace("ð", "d").replace("Ð", "D").replace("ø", "o").replace("æ", "ae").replace("Æ", "Ae")
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def email_addr(rng) -> tuple[str, str]:
    first = rng.choice(NAMES)
    last = rng.choice(SURNAMES).replace(" ", "")
    uni = rng.choice(UNIS)
    style = rng.choice(("plain", "upper", "intl", "idn", "urlenc", "jsonesc", "plus"))
    ascii_first, ascii_last = asciify(first), asciify(last)
    if style == "plain":
        return style, f"{ascii_first.lower()}.{ascii_last.lower()}@{uni}"
    if style == "upper":
        return style, f"{ascii_first.upper()}.{ascii_last.upper()}@{uni.upper()}"
    if style == "intl":
        return style, f"{first.lower()}.{last.lower()}@{uni}"
    if style == "idn":
        return style, (f"{ascii_first.lower()}@"
                       f"{rng.choice(('háskóli.is', 'yliopisto-åbo.fi', 'høgskole.no', 'universitāte.lv'))}")
    if style == "urlenc":
        return style, f"{ascii_first.lower()}.{ascii_last.lower()}%40{uni}"
    if style == "jsonesc":
        return style, f"{ascii_first.lower()}.{ascii_last.lower()}\\u0040{uni}"
    return style, f"{ascii_first.lower()}+{rng.choice(('canvas', 'ladok', 'thesis'))}@{uni}"


def kind_email(rng):
    style, e = email_addr(rng)
    lang = rng.choice(LANGS)
    if style == "urlenc":
        return Case("email", f"log/{style}", e,
                    f"{ts(rng)} GET /Shibboleth.sso/Login?target=%2Fportal&login_hint={e} 302", False)
    if style == "jsonesc":
        return Case("email", f"log/{style}", e,
                    f"{ts(rng)} peppi-api response: {{\"opiskelija\": {{\"sahkoposti\": \"{e}\"}}}}", False)
    return make("email", style, e, rng, lang, word(rng, "email", lang))


def kind_phone(kind):
    gen, langs = PHONES[kind]

    def f(rng):
        style, num = gen(rng)
        lang = rng.choice(langs)
        return make(kind, style, num, rng, lang, word(rng, "phone", lang))
    return f


def kind_id(kind):
    gen, labels = IDS[kind]

    def f(rng):
        style, val = gen(rng)
        lang = rng.choice(list(labels))
        return make(kind, style, val, rng, lang, rng.choice(labels[lang]))
    return f


def kind_ssn(rng):
    while True:
        area = rng.randint(1, 899)
        if area != 666:
            break
    s = f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"
    style = rng.choice(("dash", "dash", "compact", "spaced"))
    v = s if style == "dash" else s.replace("-", "" if style == "compact" else " ")
    label = rng.choice(("SSN", "Social Security Number", "US SSN (W-9)", "social security no."))
    lang = rng.choice(("en", "en", "fi", "sv", "nl", "de"))
    return make("ssn", style, v, rng, lang, label)


def kind_card(rng):
    brand = rng.choice(("visa", "mc", "mc2", "amex"))
    if brand == "visa":
        p = "4" + d(rng, 14)
    elif brand == "mc":
        p = f"5{rng.randint(1, 5)}" + d(rng, 13)
    elif brand == "mc2":
        p = str(rng.randint(2221, 2720)) + d(rng, 11)
    else:
        p = rng.choice(("34", "37")) + d(rng, 12)
    n = p + luhn_digit(p)
    sep = rng.choice(("-", " ", ".", "_", ""))
    v = group_card(n, sep) if sep else n
    lang = rng.choice(LANGS)
    name = {"-": "dash", " ": "space", ".": "dot", "_": "underscore", "": "none"}[sep]
    return make("card", f"{brand}-{name}", v, rng, lang, word(rng, "card", lang))


def nl_account(rng) -> str:
    while True:
        s = d(rng, 10)
        if s[0] != "0" and sum(int(c) * w for c, w in zip(s, range(10, 0, -1), strict=False)) % 11 == 0:
            return s


def iban(rng) -> tuple[str, str]:
    cc = rng.choice(("FI", "SE", "NO", "DK", "IS", "EE", "LV", "LT", "NL", "BE", "LU", "DE"))
    if cc == "FI":
        part = rng.choice(("1", "2", "5", "8")) + d(rng, 12)
        b = part + luhn_digit(part)
    elif cc == "NO":
        while True:
            part = d(rng, 10)
            r = sum(int(c) * w for c, w in zip(part, (5, 4, 3, 2, 7, 6, 5, 4, 3, 2), strict=False)) % 11
            k = 0 if r == 0 else 11 - r
            if k != 10:
                b = part + str(k)
                break
    elif cc == "NL":
        b = rng.choice(("ABNA", "INGB", "RABO", "TRIO", "SNSB", "KNAB")) + nl_account(rng)
    elif cc == "BE":
        first = d(rng, 10)
        c = int(first) % 97 or 97
        b = first + f"{c:02d}"
    elif cc == "LV":
        b = rng.choice(("HABA", "UNLA", "RIKO", "PARX")) + bban(rng, "13n")
    else:
        b = bban(rng, {"SE": "20n", "DK": "14n", "IS": "22n", "EE": "16n", "LT": "16n", "LU": "3n13c",
                       "DE": "18n"}[cc])
    return cc, cc + iban_check(cc, b) + b


def kind_iban(rng):
    cc, ib = iban(rng)
    style = rng.choice(("spaced", "compact", "lower", "spaced"))
    v = group(ib, 4, " ") if style == "spaced" else ib if style == "compact" else ib.lower()
    lang = rng.choice(LANGS)
    return make("iban", f"{cc}-{style}", v, rng, lang, word(rng, "account", lang))


def jwt(rng) -> str:
    alg = rng.choice(("HS256", "RS256"))
    head = b64url(json.dumps({"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 8)}).encode())
    uni = rng.choice(UNIS)
    claims = {"iss": f"https://canvas.{uni}", "sub": pick(rng, HEX, 24), "aud": pick(rng, string.digits, 17),
              "iat": 1767225600 + rng.randint(0, 10 ** 7), "nonce": pick(rng, ALNUM, 16),
              "https://purl.imsglobal.org/spec/lti/claim/roles": ["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"]}
    body = b64url(json.dumps(claims).encode())
    sig = b64url(bytes(rng.getrandbits(8) for _ in range(32 if alg == "HS256" else 256)))
    return f"{head}.{body}.{sig}"


def kind_jwt(rng):
    t = jwt(rng)
    r = rng.random()
    if r < 0.3:
        return Case("jwt", "header/bearer", t, f"POST /api/lti/token HTTP/1.1\nAuthorization: Bearer {t}\n", False)
    if r < 0.45:
        return Case("jwt", "lti/id_token", t, dumps(rng, {"id_token": t, "state": pick(rng, ALNUM, 20)}), True)
    lang = rng.choice(LANGS)
    return make("jwt", "labelled", t, rng, lang, "id_token")


def kind_oauth(rng):
    r = rng.randint(0, 4)
    if r == 0:
        t, style = "ya29.a0" + pick(rng, URLSAFE, 150), "google"
    elif r == 1:
        t, style = "1//0" + pick(rng, URLSAFE, 99), "google_refresh"
    elif r == 2:
        t, style = "sl.B" + pick(rng, URLSAFE, 135), "dropbox"
    elif r == 3:
        t, style = crc_token(rng, "gho_"), "github"
    else:
        t, style = uuid4(pick(rng, HEX, 32)), "orcid"
    c = rng.random()
    if c < 0.3:
        return Case("oauth_token", f"header/{style}", t, f"GET /v3.0/works HTTP/1.1\nAuthorization: Bearer {t}", False)
    if c < 0.5:
        return Case("oauth_token", f"tool/{style}", t,
                    dumps(rng, {"access_token": t, "token_type": "bearer", "expires_in": 3599}), True)
    lang = rng.choice(LANGS)
    return make("oauth_token", style, t, rng, lang, "access token")


def kind_cookie(rng):
    r = rng.randint(0, 6)
    if r == 0:
        name, v = "MoodleSession", pick(rng, LOWALNUM, 26)
    elif r == 1:
        name, v = "_normandy_session", pick(rng, URLSAFE, 22) + "." + pick(rng, URLSAFE, 180)
    elif r == 2:
        name, v = "_shibsession_" + "64656661756c74" + pick(rng, HEX, 16), "_" + pick(rng, HEX, 32)
    elif r == 3:
        name, v = "SimpleSAMLSessionID", pick(rng, HEX, 32)
    elif r == 4:
        name, v = "JSESSIONID", pick(rng, "0123456789ABCDEF", 32)
    elif r == 5:
        name, v = "PHPSESSID", pick(rng, LOWALNUM, 26)
    else:
        name, v = "sessionid", pick(rng, LOWALNUM, 32)
    c = rng.random()
    style = name.split("_")[1] if name.startswith("_shib") else name.strip("_")
    if c < 0.4:
        return Case("session_cookie", f"header/{style}", v,
                    f"GET /course/view.php?id={rng.randint(100, 9999)} HTTP/1.1\nCookie: {name}={v}; lang=fi", False)
    if c < 0.6:
        return Case("session_cookie", f"header/set-{style}", v,
                    f"HTTP/1.1 200 OK\nSet-Cookie: {name}={v}; Path=/; Secure; HttpOnly; SameSite=None", False)
    lang = rng.choice(LANGS)
    return make("session_cookie", style, v, rng, lang, "cookie", f"{name}={v}")


def pem(rng) -> tuple[str, str, str]:
    r = rng.randint(0, 3)
    if r == 0:
        ints = [0] + [rng.getrandbits(b) | (1 << (b - 1)) for b in (2048, 17, 2048, 1024, 1024, 1024, 1024, 1024)]
        ints[2] = 65537
        body, head = der_seq(*map(der_int, ints)), "RSA PRIVATE KEY"
    elif r == 1:
        key = der_seq(der_int(1), b"\x04\x20" + bytes(rng.getrandbits(8) for _ in range(32)),
                      b"\xa0\x0a\x06\x08\x2a\x86\x48\xce\x3d\x03\x01\x07",
                      b"\xa1\x44\x03\x42\x00\x04" + bytes(rng.getrandbits(8) for _ in range(64)))
        body, head = key, "EC PRIVATE KEY"
    elif r == 2:
        inner = der_seq(der_int(0), der_int(rng.getrandbits(2048) | 1 << 2047), der_int(65537),
                        der_int(rng.getrandbits(2048)), der_int(rng.getrandbits(1024)), der_int(rng.getrandbits(1024)))
        body = der_seq(der_int(0), der_seq(b"\x06\x09\x2a\x86\x48\x86\xf7\x0d\x01\x01\x01", b"\x05\x00"),
                       b"\x04" + bytes([0x82]) + len(inner).to_bytes(2, "big") + inner)
        head = "PRIVATE KEY"
    else:
        rb = lambda n: bytes(rng.getrandbits(8) for _ in range(n))
        body = openssh_ed25519_blob(rb(32), rb(32), rb(4), b"svc@hpc.login")
        head = "OPENSSH PRIVATE KEY"
    b64 = base64.b64encode(body).decode()
    width = 70 if head == "OPENSSH PRIVATE KEY" else 64
    lines = "\n".join(b64[i:i + width] for i in range(0, len(b64), width))
    return head, f"-----BEGIN {head}-----\n{lines}\n-----END {head}-----", lines


def kind_private_key(rng):
    head, block, secret = pem(rng)
    style = head.split(" ")[0].lower()
    r = rng.random()
    if r < 0.35:
        return Case("private_key", f"pem/{style}", secret, f"$ cat ~/.ssh/id_{style}\n{block}\n", False)
    if r < 0.55:
        text = "deploy:\n  variables:\n    SSH_PRIVATE_KEY: |\n" + "\n".join("      " + l for l in block.split("\n"))
        return Case("private_key", f"gitlabci/{style}", secret.replace("\n", "\n      "),
                    text, False)
    lang = rng.choice(LANGS)
    return make("private_key", style, secret, rng, lang, word(rng, "key", lang), block)


def kind_totp(rng):
    seed = pick(rng, B32, rng.choice((16, 32)))
    r = rng.random()
    uni = rng.choice(UNIS)
    if r < 0.4:
        uri = f"otpauth://totp/{uni}:{rng.choice(NAMES).lower()}?secret={seed}&issuer={uni}&algorithm=SHA1&digits=6"
        lang = rng.choice(LANGS)
        return make("totp_seed", "otpauth", seed, rng, lang, "MFA", uri)
    spaced = rng.random() < 0.4
    v = " ".join(seed[i:i + 4] for i in range(0, len(seed), 4)).lower() if spaced else seed
    lang = rng.choice(LANGS)
    label = rng.choice(("TOTP secret", "2FA seed", "MFA-avain" if lang == "fi" else "authenticator key"))
    return make("totp_seed", "spaced" if spaced else "plain", v, rng, lang, label)


def openai_key(rng) -> str:
    r = rng.randint(0, 2)
    if r == 0:
        return "sk-proj-" + pick(rng, URLSAFE, 74) + "T3BlbkFJ" + pick(rng, URLSAFE, 74)
    if r == 1:
        return "sk-svcacct-" + pick(rng, URLSAFE, 74) + "T3BlbkFJ" + pick(rng, URLSAFE, 74)
    return "sk-" + pick(rng, ALNUM, 20) + "T3BlbkFJ" + pick(rng, ALNUM, 20)


API = {
    "openai_key": ("OPENAI_API_KEY", openai_key),
    "anthropic_key": ("ANTHROPIC_API_KEY", lambda r: "sk-ant-api03-" + pick(r, URLSAFE, 93) + "AA"),
    "github_token": ("GITHUB_TOKEN", lambda r: crc_token(r, rng_choice(r, ("ghp_", "ghs_", "ghu_")))),
    "gitlab_token": ("GITLAB_TOKEN", lambda r: "glpat-" + pick(r, URLSAFE, 20)),
    "hf_token": ("HF_TOKEN", lambda r: "hf_" + pick(r, string.ascii_letters, 34)),
    "google_api_key": ("GOOGLE_API_KEY", lambda r: "AIzaSy" + pick(r, URLSAFE, 33)),
    "slack_token": ("SLACK_BOT_TOKEN", lambda r: f"xoxb-{d(r, 12)}-{d(r, 13)}-{pick(r, ALNUM, 24)}"),
    "sendgrid_key": ("SENDGRID_API_KEY", lambda r: f"SG.{pick(r, URLSAFE, 22)}.{pick(r, URLSAFE, 43)}"),
    "npm_token": ("NPM_TOKEN", lambda r: crc_token(r, "npm_")),
}


PROVIDER = {"openai_key": "OpenAI", "anthropic_key": "Anthropic", "github_token": "GitHub", "gitlab_token": "GitLab",
            "hf_token": "Hugging Face", "google_api_key": "Google", "slack_token": "Slack", "sendgrid_key": "SendGrid",
            "npm_token": "npm"}


def rng_choice(r: random.Random, seq):
    return r.choice(seq)


def kind_api(kind):
    env, gen = API[kind]

    def f(rng):
        k = gen(rng)
        r = rng.random()
        if r < 0.3:
            return Case(kind, "env/plain", k, f"# lab-pipeline/.env\n{env}={k}\nDVC_REMOTE=s3store", False)
        if r < 0.45:
            return Case(kind, "notebook/os.environ", k,
                        f"In [3]: os.environ[\"{env}\"] = \"{k}\"\nIn [4]: client = make_client()", False)
        lang = rng.choice(LANGS)
        return make(kind, "labelled", k, rng, lang, f"{PROVIDER[kind]} {word(rng, 'key', lang)}")
    return f


KINDS = {
    "password": kind_password, "aws_secret": kind_aws, "webhook": kind_webhook, "stripe_whsec": kind_whsec,
    "connection_string": kind_conn, "labelled_key": kind_labelled, "disguised": kind_disguised,
    "email": kind_email, "phone_us_ca": kind_phone("phone_us_ca"), "phone_uk": kind_phone("phone_uk"),
    "phone_fr": kind_phone("phone_fr"), "phone_de": kind_phone("phone_de"), "phone_in": kind_phone("phone_in"),
    "ssn": kind_ssn, "card": kind_card, "iban": kind_iban, "jwt": kind_jwt, "oauth_token": kind_oauth,
    "session_cookie": kind_cookie, "private_key": kind_private_key, "totp_seed": kind_totp,
    **{k: kind_api(k) for k in API},
    **{k: kind_phone(k) for k in PHONES if k not in ("phone_us_ca", "phone_uk", "phone_fr", "phone_de",
                                                      "phone_in")},
    **{k: kind_id(k) for k in IDS},
}


def generate() -> Iterator[Case]:
    rng = random.Random(SEED)
    for kind, f in KINDS.items():
        for _ in range(PER_KIND):
            case = f(rng)
            assert case.secret in case.text or json.dumps(case.secret)[1:-1] in case.text, (kind, case)
            yield case


# ---- near misses ----------------------------------------------------------------------------------------------

def fi_reference(base: str) -> str:
    s = sum(int(c) * w for c, w in zip(reversed(base), (7, 3, 1) * 10, strict=False))
    return base + str((10 - s % 10) % 10)


def rf_reference(ref: str) -> str:
    return f"RF{98 - int(ref + '271500') % 97:02d}{ref}"


def se_ocr(base: str) -> str:
    """A Swedish OCR reference (Bankgirot): the base and its Luhn digit."""
    return base + luhn_digit(base)


def y_tunnus(rng) -> str:
    while True:
        s = d(rng, 7)
        r = sum(int(c) * w for c, w in zip(s, (7, 9, 10, 5, 8, 4, 2), strict=False)) % 11
        if r != 1:
            return f"{s}-{0 if r == 0 else 11 - r}"


def se_orgnr(rng) -> str:
    s = rng.choice(("2021", "5560", "5567", "2120")) + d(rng, 5)
    return f"{s[:6]}-{s[6:]}{luhn_digit(s)}"


def no_orgnr(rng) -> str:
    while True:
        s = rng.choice("89") + d(rng, 7)
        r = sum(int(c) * w for c, w in zip(s, (3, 2, 7, 6, 5, 4, 3, 2), strict=False)) % 11
        k = 0 if r == 0 else 11 - r
        if k != 10:
            return f"{s[:3]} {s[3:6]} {s[6:]}{k}"


def dk_cvr(rng) -> str:
    while True:
        s = nz(rng) + d(rng, 7)
        if sum(int(c) * w for c, w in zip(s, (2, 7, 6, 5, 4, 3, 2, 1), strict=False)) % 11 == 0:
            return s


def ee_regcode(rng) -> str:
    s = "1" + d(rng, 6)
    c = sum(int(x) * w for x, w in zip(s, (1, 2, 3, 4, 5, 6, 7), strict=False)) % 11
    if c == 10:
        c = sum(int(x) * w for x, w in zip(s, (3, 4, 5, 6, 7, 8, 9), strict=False)) % 11
        c = 0 if c == 10 else c
    return s + str(c)


def be_kbo(rng) -> str:
    s = "0" + rng.choice("2345678") + d(rng, 6)
    s += f"{97 - int(s) % 97:02d}"
    return f"{s[:4]}.{s[4:7]}.{s[7:]}"


def uuid(rng) -> str:
    h = pick(rng, HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{rng.choice('89ab')}{h[17:20]}-{h[20:]}"


def neg_carrier(rng, line: str) -> str:
    """A near miss in one of the cases' carriers, without names or addresses of people."""
    c = rng.randint(0, 7)
    lang = rng.choice(LANGS)
    if c == 0:
        return f"{ts(rng)} INFO {rng.choice(SYSTEMS)}[{rng.randint(1000, 65000)}] {line}"
    if c == 1:
        return f"TOPdesk I {rng.randint(2401, 2612)} {rng.randint(100, 999)} | {GREET[lang]}, {line}"
    if c == 2:
        return f"[Teams #it-support {rng.randint(8, 17)}:{rng.randint(10, 59)}] ladok-bot: {line}"
    if c == 3:
        return f"slurm-{rng.randint(1000000, 9999999)}.out\n[{ts(rng)}] {line}"
    if c == 4:
        return f"Agent: {line}"
    if c == 5:
        return dumps(rng, {"tool": "ladok.get_course", "result": {"note": line}})
    if c == 6:
        return dumps(rng, {"event": "course_updated", "lms": "canvas", "data": {"comment": line}})
    return f"Out[{rng.randint(2, 40)}]: '{line}'"


def neg_lines(rng) -> dict[str, callable]:
    return {
        "course_code": lambda: rng.choice((f"Ilmoittautuminen kurssille TIEA{rng.randint(1000, 9999)} avattu",
                                           f"Kursen DA{rng.randint(1000, 9999)} har {rng.randint(10, 300)} platser",
                                           f"Emne IN{rng.randint(1000, 5999)} eksamen {rng.randint(1, 28)}.05.",
                                           f"Vak {rng.randint(10, 99)}{pick(rng, string.ascii_uppercase, 2)}"
                                           f"{rng.randint(100, 999)} ingeschreven",
                                           f"Kursus NDAB{d(rng, 5)}U gentaget")),
        "ticket_number": lambda: rng.choice((f"incident I {rng.randint(2401, 2612)} {rng.randint(100, 9999)} closed",
                                             f"Jira SD-{rng.randint(100, 99999)} resolved",
                                             f"case HELP-{rng.randint(1000, 999999)} reassigned to 2nd line",
                                             f"RT #{rng.randint(100000, 9999999)} merged")),
        "invoice_number": lambda: rng.choice((
            f"Lasku {rng.randint(2024, 2026)}-{d(rng, 5)}, viitenumero {fi_reference(nz(rng) + d(rng, 8))}",
            f"Faktura nr {d(rng, 9)}, OCR-referens {se_ocr(nz(rng) + d(rng, 9))}",
            f"Invoice INV-{d(rng, 7)}, creditor reference {rf_reference(pick(rng, string.digits, 10))}",
            f"Factuur {rng.randint(2024, 2026)}/{d(rng, 6)} betaald")),
        "slurm_job": lambda: (f"JobId={rng.randint(1000000, 99999999)} "
                              f"JobName=train_{pick(rng, string.ascii_lowercase, 5)} "
                              f"Partition={rng.choice(('gpu', 'small', 'large', 'hugemem'))} "
                              f"NodeList=g{rng.randint(1000, 6999)} State=COMPLETED ExitCode=0:0"),
        "git_hash": lambda: rng.choice((f"commit {pick(rng, HEX, 40)} (HEAD -> main)",
                                        f"pipeline #{rng.randint(100000, 9999999)} for {pick(rng, HEX, 8)} passed",
                                        f"Merge {pick(rng, HEX, 7)} into {pick(rng, HEX, 7)}")),
        "digest": lambda: rng.choice((f"outs:\n- md5: {pick(rng, HEX, 32)}\n"
                                      f"  size: {rng.randint(1000, 10 ** 9)}\n  path: data/raw",
                                      f"image sha256:{pick(rng, HEX, 64)} pulled",
                                      f"sha512sum {pick(rng, HEX, 128)}  dataset.tar.zst")),
        "uuid": lambda: rng.choice((f"Ladok kurstillfälle uid {uuid(rng)}", f"X-Request-Id: {uuid(rng)}",
                                    f"traceparent: 00-{pick(rng, HEX, 32)}-{pick(rng, HEX, 16)}-01",
                                    f"canvas assignment {uuid(rng)} published")),
        "doi": lambda: rng.choice((f"https://doi.org/10.5281/zenodo.{rng.randint(1000000, 15000000)}",
                                   f"DataCite DOI 10.{rng.choice(('23729', '5878', '18710', '48550'))}/"
                                   f"{pick(rng, LOWALNUM, 4)}-{pick(rng, LOWALNUM, 4)} registered",
                                   f"doi:10.1038/s41586-0{rng.randint(20, 26)}-{d(rng, 5)}-{rng.randint(0, 9)}")),
        "grant_number": lambda: rng.choice((f"Horizon Europe grant agreement No {rng.randint(101000000, 101199999)}",
                                            f"Research Council of Finland decision {rng.randint(300000, 369999)}",
                                            f"Vetenskapsrådet dnr {rng.randint(2019, 2026)}-{d(rng, 5)}",
                                            f"NWO dossiernummer VI.Veni.{rng.randint(200, 232)}.{d(rng, 3)}")),
        "version": lambda: rng.choice((f"Moodle {rng.randint(3, 4)}.{rng.randint(0, 5)}.{rng.randint(0, 9)}+ "
                                       f"(Build: 2026{rng.randint(1, 12):02d}{rng.randint(10, 28)})",
                                       f"slurm {rng.randint(22, 25)}.{rng.choice(('05', '11'))}.{rng.randint(0, 9)}",
                                       f"python {rng.choice(('3.10', '3.11', '3.12'))}.{rng.randint(0, 14)}, "
                                       f"dvc {rng.randint(2, 3)}.{rng.randint(0, 60)}.{rng.randint(0, 9)}",
                                       f"Shibboleth SP {rng.randint(3, 3)}.{rng.randint(0, 4)}.{rng.randint(0, 9)}")),
        "timestamp": lambda: rng.choice((f"tentti ma {rng.randint(1, 28)}.{rng.randint(1, 12)}.2026 "
                                         f"klo {rng.randint(8, 17)}.15",
                                         f"sista anmälningsdag {rng.randint(2025, 2026)}-"
                                         f"{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}",
                                         f"epoch {rng.randint(1700000000, 1800000000)} / {ts(rng)}")),
        "coordinates": lambda: (f"field station {rng.uniform(54, 70):.5f}° N, {rng.uniform(4, 30):.5f}° E, "
                                f"elev {rng.randint(2, 900)} m"),
        "measurement": lambda: rng.choice((f"OD600 {rng.uniform(0.1, 2):.3f}, pH {rng.uniform(5, 8):.2f}",
                                           f"MaxRSS {rng.randint(100, 99999)}K, "
                                           f"elapsed 0{rng.randint(1, 9)}:{rng.randint(10, 59)}:{rng.randint(10, 59)}",
                                           f"CO2 {rng.randint(380, 450)}.{rng.randint(0, 9)} ppm "
                                           f"at {rng.uniform(-20, 25):.1f} °C")),
        "public_phone": lambda: rng.choice(("hätänumero 112", "Vårdguiden 1177 (kortnummer)",
                                            f"maksuton palvelunumero 0800 {rng.randint(100, 999)} "
                                            f"{rng.randint(100, 999)} (toll-free)",
                                            f"gratis nummer 0800-{rng.randint(1000, 9999)} (servicenummer)",
                                            f"grønt nummer 800 {rng.randint(10, 99)} {rng.randint(100, 999)} (gratis)",
                                            "116 117 päivystysapu (short code)",
                                            f"short code {rng.randint(1000, 9999)} SMS")),
        "company_reg": lambda: rng.choice((f"Y-tunnus {y_tunnus(rng)}", f"organisationsnummer {se_orgnr(rng)}",
                                           f"organisasjonsnummer {no_orgnr(rng)}", f"CVR-nr. {dk_cvr(rng)}",
                                           f"registrikood {ee_regcode(rng)}", f"ondernemingsnummer {be_kbo(rng)}")),
        "card_invalid": lambda: luhn_bad(rng),
        "iban_invalid": lambda: iban_bad(rng),
        "masked": lambda: rng.choice((f"card ****{d(rng, 4)} charged", f"IBAN FI** **** **** **{d(rng, 2)} {d(rng, 2)}",
                                      f"token sk-...{pick(rng, ALNUM, 4)} rotated", "salasana: ********",
                                      f"puh. +358 40 *** **{d(rng, 2)}")),
        "placeholder": lambda: rng.choice(("MOODLE_DBPASS=${MOODLE_DBPASS}", "password: <your-password>",
                                           "api_key: xxxx-xxxx-xxxx", "wachtwoord: {{ vault_osiris_password }}",
                                           "OPENAI_API_KEY=<your-key>", "AWS_SECRET_ACCESS_KEY=${AWS_SECRET}",
                                           "lösenord: [REDACTED]", "Authorization: Bearer <token>")),
        "example_key": lambda: rng.choice(("aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                           "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                           "https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX",
                                           "RFC 6238 test seed GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ",
                                           "jwt.io sample eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
                                           "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
                                           "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")),
        "code_identifier": lambda: rng.choice((".ladok-student-card__header { color: #00558c; }",
                                               "def validate_password_policy(min_length: int = 12) -> bool:",
                                               "const PASSWORD_FIELD_ID = 'edit-pass-confirm';",
                                               "class StudentPhoneNumberSerializer(serializers.ModelSerializer):",
                                               "getApiKeyFromVault(secretPath) // "
                                               f"{pick(rng, string.ascii_lowercase, 8)}")),
        "path_url": lambda: rng.choice((f"/scratch/project_{rng.randint(2000000, 2009999)}/data/raw/run_{d(rng, 3)}",
                                        f"https://www.{rng.choice(UNIS)}/opiskelu/hakeminen",
                                        f"s3://lab-dvc-cache/files/md5/{pick(rng, HEX, 2)}/{pick(rng, HEX, 30)}",
                                        "https://api.datacite.org/dois?client-id=csc."
                                        f"{pick(rng, string.ascii_lowercase, 5)}")),
        "saml_radius": lambda: rng.choice((f"SAML AuthnRequest ID=_{pick(rng, HEX, 40)} to https://idp.{rng.choice(UNIS)}/idp/shibboleth",
                                           f"radiusd: Access-Accept realm={rng.choice(UNIS)} "
                                           f"NAS=wlc-{rng.randint(1, 9)} Called-Station-Id=eduroam",
                                           f"shibd: attributes released to https://sp.{rng.choice(UNIS)}/shibboleth: "
                                           "eduPersonAffiliation=student")),
    }


def luhn_bad(rng) -> str:
    p = "4" + d(rng, 14)
    bad = str((int(luhn_digit(p)) + rng.randint(1, 9)) % 10)
    return f"sample batch {group(p + bad, 4, ' ')} (lab inventory)"


def iban_bad(rng) -> str:
    while True:
        cc, ib = iban(rng)
        bad = cc + f"{rng.randint(2, 98):02d}" + ib[4:]
        if not iban_ok(bad):
            return f"IBAN validation failed (checksum): {group(bad, 4, ' ')}"


def generate_negatives() -> Iterator[tuple[str, str]]:
    rng = random.Random(SEED + 1)
    lines = neg_lines(rng)
    for sort, f in lines.items():
        for _ in range(30):
            yield sort, neg_carrier(rng, f())
