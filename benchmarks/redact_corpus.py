"""A redaction corpus written from the public formats of each kind, not from tracegym's rules.

Each case is a value generated from its format's published description (sources beside each generator), written
the way logs, configs, shells and chat turns hold it (an env file line, a YAML or JSON key, a CLI flag, a
connection string, a sentence), then carried the way a store holds it: as message or tool-result text, or inside
the JSON text of tool-call arguments or metadata (so quotes and backslashes arrive escaped). `secret` is the part
that must not survive redaction, as written in `text`.

`NEGATIVES` are near misses written the same way (invalid SSNs, checksums that fail, placeholders and variable
references after a password label, ids next to a context word): a finding on them is a false positive.

Deterministic for a seed. Kept apart from the rules on purpose: this file and tracegym/redact/rules.py are never
changed in the same commit.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Callable
from dataclasses import dataclass

from benchmarks.corpus_formats import bban, digits, group, iban_check, luhn_digit, pick

_ALNUM = string.ascii_letters + string.digits
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "_-"
Rng = random.Random


@dataclass(frozen=True)
class Case:
    kind: str
    text: str
    """The value with the context it sits in, before it is carried."""
    secret: str
    """What must not survive, as written in `text`."""
    carrier: str
    """message | tool_result | tool_arguments | metadata"""
    carried: str
    """The text as the store holds it (`text` itself, or JSON text that holds it)."""

    @property
    def is_json(self) -> bool:
        return self.carrier in ("tool_arguments", "metadata")


def _pick(rng: Rng, forms: list[str], **values: str) -> str:
    return rng.choice(forms).format(**values)


# Passwords: what people and generators pick (a word with digits and a symbol, or a random string), without the
# quote, comma and semicolon characters that configs would need to escape, and not starting with `$` (a shell or
# compose file would expand it).
_WORDS = ["summer", "Dragon", "monkey", "Trustno", "river", "Falcon", "orange", "Winter", "purple", "Tiger"]


def password_value(rng: Rng) -> str:
    if rng.random() < 0.5:
        return rng.choice(_WORDS) + digits(rng, rng.randrange(2, 5)) + rng.choice("!@#%&*?+.-_")
    return rng.choice(_ALNUM) + pick(rng, _ALNUM + "!@#%^&*-_.+=~", rng.randrange(11, 24))


def password(rng: Rng) -> tuple[str, str]:
    """Passwords in the places configs and shells keep them: docker/compose environment, .env files, libpq's
    PGPASSWORD, Spring/Java properties, YAML and JSON settings (camelCase in JS/Java APIs), CLI flags
    (mysql, psql wrappers, redis-cli's -a aside), ADO.NET and ODBC connection strings, INI files."""
    p = password_value(rng)
    name = rng.choice(["DB_PASSWORD", "PGPASSWORD", "MYSQL_ROOT_PASSWORD", "POSTGRES_PASSWORD", "REDIS_PASS",
                       "SMTP_PASS", "ADMIN_PWD", "RABBITMQ_DEFAULT_PASS", "MYSQL_PASSWORD", "LDAP_BIND_PASSWORD"])
    camel = rng.choice(["userPassword", "dbPassword", "adminPass", "password", "smtpPassword", "rootPassword"])
    text = _pick(rng, [
        "{name}={p}", "export {name}={p}", "{name}=\"{p}\"", "{name}={p} psql -h db.internal -U app orders",
        "environment:\n  {name}: {p}\n  TZ: UTC", "    - {name}={p}",
        "database:\n  host: db.internal\n  password: {p}\n  pool: 5", "{low}: '{p}'",
        "{{\"username\": \"svc\", \"{camel}\": \"{p}\"}}", "{{\"{camel}\":\"{p}\",\"remember\":true}}",
        "mysql -h 10.0.0.5 -u root --password {p} orders", "pg_dump --dbname=prod --password={p} > dump.sql",
        "./deploy.sh --db-password {p} --env prod", "redis-cli --pass={p} ping",
        "Server=tcp:sql.internal,1433;Database=crm;User ID=app;Password={p};Encrypt=True",
        "DRIVER={{ODBC Driver 18}};SERVER=sql01;UID=report;PWD={p};",
        "[database]\nuser = app\npassword = {p}", "spring.datasource.password={p}",
        "my password is {p}", "the new password: {p}"],
        name=name, p=p, camel=camel, low=name.lower())
    return text, p


def aws_secret_key(rng: Rng) -> tuple[str, str]:
    """A secret access key is 40 characters of base64 ([A-Za-z0-9+/]) beside an access key id (AKIA: long-term,
    ASIA: temporary), as the AWS docs' credentials file, environment variables, `aws iam create-access-key` /
    `aws sts` JSON output and the console's credentials.csv hold them (AWS IAM User Guide, "Manage access keys")."""
    secret = pick(rng, _B64, 40)
    key_id = rng.choice(["AKIA", "ASIA"]) + pick(rng, string.ascii_uppercase + "234567", 16)
    text = _pick(rng, [
        "[default]\naws_access_key_id = {id}\naws_secret_access_key = {s}\nregion = eu-west-1",
        "export AWS_ACCESS_KEY_ID={id}\nexport AWS_SECRET_ACCESS_KEY={s}", "AWS_SECRET_ACCESS_KEY={s}",
        "{{\"AccessKey\": {{\"UserName\": \"ci\", \"AccessKeyId\": \"{id}\", \"Status\": \"Active\", "
        "\"SecretAccessKey\": \"{s}\"}}}}",
        "{{\"Credentials\": {{\"AccessKeyId\": \"{id}\", \"SecretAccessKey\": \"{s}\", \"SessionToken\": \"x\"}}}}",
        "aws_secret_key: {s}", "secret_key = \"{s}\"",
        "User name,Access key ID,Secret access key\nci-bot,{id},{s}", "{id} {s}", "{id}:{s}",
        "use these creds: {id} / {s}"],
        id=key_id, s=secret)
    return text, secret


def webhook_url(rng: Rng) -> tuple[str, str]:
    """Slack incoming webhooks (api.slack.com/messaging/webhooks: hooks.slack.com/services/T.../B.../token) and
    Discord webhooks (discord.com/developers/docs/resources/webhook: /api/webhooks/{snowflake id}/{token}); the
    path after the host is the credential."""
    if rng.random() < 0.5:
        path = f"T{pick(rng, string.ascii_uppercase + string.digits, rng.randrange(8, 11))}/" \
               f"B{pick(rng, string.ascii_uppercase + string.digits, rng.randrange(8, 11))}/{pick(rng, _ALNUM, 24)}"
        url, secret = f"https://hooks.slack.com/services/{path}", path
    else:
        path = f"{rng.randrange(10**17, 10**19)}/{pick(rng, _URLSAFE, 68)}"
        url, secret = f"https://{rng.choice(['discord.com', 'discordapp.com'])}/api/webhooks/{path}", path
    text = _pick(rng, ["SLACK_WEBHOOK_URL={u}", "curl -X POST -H 'Content-type: application/json' "
                       "--data '{{\"text\":\"deploy done\"}}' {u}", "{{\"webhook\": \"{u}\"}}",
                       "notify:\n  url: {u}", "posting alert to {u}"], u=url)
    return text, secret


def stripe_webhook_secret(rng: Rng) -> tuple[str, str]:
    """Stripe's webhook signing secrets start `whsec_` (docs.stripe.com/webhooks, "Verify webhook signatures"):
    the dashboard's are 32 base62 characters, the Stripe CLI's 64 hex."""
    secret = "whsec_" + (pick(rng, _ALNUM, 32) if rng.random() < 0.6 else pick(rng, "0123456789abcdef", 64))
    text = _pick(rng, ["STRIPE_WEBHOOK_SECRET={s}", "endpoint_secret = '{s}'",
                       "> Ready! Your webhook signing secret is {s} (^C to quit)",
                       "{{\"signing_secret\": \"{s}\"}}", "webhook secret {s}"], s=secret)
    return text, secret


def connection_string_key(rng: Rng) -> tuple[str, str]:
    """Keys inside connection strings: Azure Storage's AccountKey (88 base64 characters, learn.microsoft.com
    "Configure Azure Storage connection strings"), Service Bus / Event Hubs / IoT Hub SharedAccessKey (44 base64),
    a SAS token's `sig=` (URL-encoded base64), Azure SignalR's AccessKey."""
    key88 = pick(rng, _B64, 86) + "=="
    key44 = pick(rng, _B64, 43) + "="
    choice = rng.randrange(4)
    if choice == 0:
        text = f"DefaultEndpointsProtocol=https;AccountName=acct{digits(rng, 4)};AccountKey={key88};" \
               "EndpointSuffix=core.windows.net"
        secret = key88
    elif choice == 1:
        text = f"Endpoint=sb://ns-{pick(rng, string.ascii_lowercase, 6)}.servicebus.windows.net/;" \
               f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key44}"
        secret = key44
    elif choice == 2:
        sig = key44.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D")
        text = f"https://acct.blob.core.windows.net/logs/app.log?sv=2022-11-02&ss=b&srt=o&sp=r" \
               f"&se=2026-01-01T00:00:00Z&sig={sig}"
        secret = sig
    else:
        text = f"Endpoint=https://sig-{pick(rng, string.ascii_lowercase, 5)}.service.signalr.net;AccessKey={key44};" \
               "Version=1.0;"
        secret = key44
    if rng.random() < 0.4:
        text = _pick(rng, ["AZURE_STORAGE_CONNECTION_STRING=\"{t}\"", "connection: {t}",
                           "{{\"ConnectionStrings\": {{\"Main\": \"{t}\"}}}}"], t=text)
    return text, secret


def labelled_key(rng: Rng) -> tuple[str, str]:
    """Keys of no known provider format after a label written as people write it, with spaces and capitals
    ("API Key: ...", "Secret Key = ..."), in headers (x-api-key) and settings; values as services issue them:
    random base62 of 32-48, UUIDs, hex of 32-64."""
    value = rng.choice([pick(rng, _ALNUM, rng.randrange(32, 49)),
                        "-".join(pick(rng, "0123456789abcdef", n) for n in (8, 4, 4, 4, 12)),
                        pick(rng, "0123456789abcdef", rng.randrange(32, 65)),
                        pick(rng, _URLSAFE, 40)])
    label = rng.choice(["API Key", "Api key", "API KEY", "Secret Key", "Access Token", "Client Secret",
                        "Auth Token", "API token", "Private Key", "x-api-key", "X-Auth-Token", "apiKey"])
    text = _pick(rng, ["{l}: {v}", "{l} = {v}", "{l}:{v}", "{l}: \"{v}\"", "{{\"{l}\": \"{v}\"}}",
                       "Your {l} is {v}", "curl -H '{l}: {v}' https://api.example.net/v2/items"], l=label, v=value)
    return text, value


_ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\u200f", "\u202a", "\u202c", "\u2066"]


def obfuscated_key(rng: Rng) -> tuple[str, str]:
    """Provider keys (OpenAI sk-proj-, GitHub ghp_, Anthropic sk-ant-api03-, Stripe sk_live_, Slack xoxb-) as they
    arrive after copy and paste through chat and document tools: a zero-width or bidi control character (Unicode
    Cf, UAX #9) inside, or full-width forms (U+FF01-U+FF5E, folded by NFKC) for the hyphen, the underscore or the
    whole key."""
    key = rng.choice([f"sk-proj-{pick(rng, _URLSAFE, 48)}", f"ghp_{pick(rng, _ALNUM, 36)}",
                      f"sk-ant-api03-{pick(rng, _URLSAFE, 86)}", f"sk_live_{pick(rng, _ALNUM, 24)}",
                      f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, _ALNUM, 24)}"])
    how = rng.randrange(3)
    if how == 0:
        at = rng.randrange(3, len(key) - 3)
        key = key[:at] + rng.choice(_ZERO_WIDTH) + key[at:]
    elif how == 1:
        key = key.replace("-", "\uff0d").replace("_", "\uff3f")
    else:
        key = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
    text = _pick(rng, ["here is my key {k}", "OPENAI_API_KEY={k}", "{{\"token\": \"{k}\"}}", "key:\n{k}"], k=key)
    return text, key


# E-mail: RFC 5322 addresses, upper-case as some systems store them, internationalised (RFC 6531/6532: UTF-8
# local parts and IDNA domains), and as they arrive encoded: percent-encoded in URLs (RFC 3986, `@` is %40) and
# JSON-escaped (RFC 8259 \u0040) by serialisers that escape it.
def email(rng: Rng) -> tuple[str, str]:
    local = rng.choice(["jane.doe", "m.rossi", "li.wei", "omar_k", "ana+billing", "k.tanaka"]) + digits(rng, 2)
    domain = rng.choice(["example.com", "mail.example.org", "acme-corp.io", "web.de", "orange.fr", "gmx.net"])
    how = rng.randrange(5)
    if how == 0:
        value = f"{local}@{domain}".upper()
    elif how == 1:
        value = rng.choice([f"jörg.müller{digits(rng, 2)}@bücher.de", f"françois{digits(rng, 2)}@exemple.fr",
                            f"用户{digits(rng, 2)}@例子.广告", f"δοκιμή{digits(rng, 2)}@παράδειγμα.δοκιμή",
                            f"{local}@münchen.de", f"ñandú{digits(rng, 2)}@correo.es"])
    elif how == 2:
        value = f"{local}%40{domain}"
        return _pick(rng, ["GET /api/users?email={v}&page=1 HTTP/1.1", "https://app.example.net/reset?to={v}",
                           "redirect_uri=https%3A%2F%2Fapp.example.net%2Fcb%3Fuser%3D{v}"], v=value), value
    elif how == 3:
        value = f"{local}\\u0040{domain}"
        return _pick(rng, ["payload: {{\"email\": \"{v}\"}}", "body='{{\"to\":\"{v}\",\"subject\":\"refund\"}}'"],
                     v=value), value
    else:
        value = f"{local}@{domain}"
    return _pick(rng, ["contact: {v}", "Email: {v}", "{{\"email\": \"{v}\"}}", "please write to {v} today",
                       "From: \"Support\" <{v}>"], v=value), value


def _nanp(rng: Rng) -> str:
    """NANP (nationalnanpa.com): NPA [2-9][0-8][0-9], exchange [2-9][0-9][0-9], neither N11; 4-digit line."""
    while True:
        npa = f"{rng.randrange(2, 10)}{rng.randrange(0, 9)}{rng.randrange(10)}"
        nxx = f"{rng.randrange(2, 10)}{digits(rng, 2)}"
        if npa[1:] != "11" and nxx[1:] != "11":
            return npa + nxx + digits(rng, 4)


def phone_us(rng: Rng) -> tuple[str, str]:
    n = _nanp(rng)
    a, b, c = n[:3], n[3:6], n[6:]
    number = rng.choice([f"{a} {b} {c}", n, f"({a}) {b}-{c}", f"{a}.{b}.{c}", f"{a}-{b}-{c}", f"1-{a}-{b}-{c}",
                         f"+1 {a} {b} {c}", f"+1 ({a}) {b}-{c}", f"1 ({a}) {b} {c}"])
    return _phone_text(rng, number, "en"), number


def phone_uk(rng: Rng) -> tuple[str, str]:
    """Ofcom's National Telephone Numbering Plan: 0 + 10 digits; London 020 xxxx xxxx, large cities 01x1 xxx
    xxxx, other areas 01xxx xxxxxx, mobiles 07xxx xxxxxx; +44 drops the 0, sometimes kept as (0)."""
    kind = rng.randrange(4)
    if kind == 0:
        groups = ["020", f"{rng.choice('378')}{digits(rng, 3)}", digits(rng, 4)]
    elif kind == 1:
        groups = [f"01{rng.randrange(1, 7)}1", digits(rng, 3), digits(rng, 4)]
    elif kind == 2:
        groups = [f"01{rng.randrange(2, 10)}{digits(rng, 2)}", digits(rng, 6)]
    else:
        groups = [f"07{rng.randrange(1, 10)}{digits(rng, 2)}", digits(rng, 6)]
    national = " ".join(groups)
    number = rng.choice([national, national.replace(" ", ""), "-".join(groups), f"+44 {national[1:]}",
                         f"+44 (0){national[1:]}", f"+44{national[1:].replace(' ', '')}"])
    return _phone_text(rng, number, "en"), number


def phone_fr(rng: Rng) -> tuple[str, str]:
    """ARCEP's plan: 10 digits, 0 then 1-5 (geographic), 6-7 (mobile) or 9, written in pairs; +33 drops the 0."""
    national = f"0{rng.choice('1234567679')}{digits(rng, 8)}"
    pairs = [national[i:i + 2] for i in range(0, 10, 2)]
    rest = " ".join(pairs[1:])
    number = rng.choice([" ".join(pairs), ".".join(pairs), national, "-".join(pairs), f"+33 {national[1]} {rest}",
                         f"+33 (0){national[1]} {rest}"])
    return _phone_text(rng, number, "fr"), number


def phone_de(rng: Rng) -> tuple[str, str]:
    """Bundesnetzagentur's plan: 0 + area code (2-5 digits: 30 Berlin, 40 Hamburg, 89 München, 221 Köln, 69
    Frankfurt, 711 Stuttgart) + subscriber number, or a mobile prefix 15x/16x/17x + 7-8 digits (DIN 5008 writes
    `030 12345678`; `030/1234567` and `(030) 1234567` are common); +49 drops the 0."""
    if rng.random() < 0.5:
        area, sub = rng.choice(["30", "40", "89", "221", "69", "711", "351", "6221"]), digits(rng, rng.randrange(6, 9))
    else:
        area, sub = rng.choice(["151", "152", "157", "160", "162", "170", "171", "172", "176", "179"]), \
            digits(rng, rng.randrange(7, 9))
    number = rng.choice([f"0{area} {sub}", f"0{area}/{sub}", f"(0{area}) {sub}", f"0{area}-{sub}",
                         f"+49 {area} {sub}", f"+49 (0){area} {sub}", f"0{area} {sub[:len(sub) // 2]} "
                                                                       f"{sub[len(sub) // 2:]}"])
    return _phone_text(rng, number, "de"), number


def phone_in(rng: Rng) -> tuple[str, str]:
    """TRAI's National Numbering Plan: mobiles are 10 digits starting 6-9 (written 5+5), landlines an STD code
    (11 Delhi, 22 Mumbai, 80 Bengaluru, 44 Chennai) and the subscriber number to 10 digits; a 0 trunk prefix
    nationally, +91 from abroad."""
    if rng.random() < 0.7:
        m = f"{rng.randrange(6, 10)}{digits(rng, 9)}"
        number = rng.choice([f"{m[:5]} {m[5:]}", m, f"+91 {m[:5]} {m[5:]}", f"+91-{m}", f"0{m}", f"{m[:5]}-{m[5:]}",
                             f"+91{m}"])
    else:
        std = rng.choice(["11", "22", "80", "44"])
        sub = digits(rng, 8)
        number = rng.choice([f"0{std} {sub[:4]} {sub[4:]}", f"0{std}-{sub}", f"+91 {std} {sub}"])
    return _phone_text(rng, number, "en"), number


_PHONE_CONTEXT = {
    "en": ["phone: {n}", "Phone number: {n}", "call me at {n}", "my cell is {n}", "mobile: {n}", "Tel: {n}",
           "tel. {n}", "contact number {n}", "reach me on {n} after 5pm", "text me at {n}", "WhatsApp {n}",
           "ph: {n}", "{{\"phone\": \"{n}\"}}", "phone_number={n}", "Mobile No. {n}"],
    "fr": ["Tél. : {n}", "téléphone : {n}", "portable : {n}", "mon numéro est le {n}", "Tel: {n}",
           "{{\"telephone\": \"{n}\"}}", "appelez-moi au {n}"],
    "de": ["Telefon: {n}", "Tel.: {n}", "Handy: {n}", "Mobil: {n}", "Rufnummer {n}", "erreichbar unter {n}",
           "{{\"telefon\": \"{n}\"}}", "phone: {n}"],
}


def _phone_text(rng: Rng, number: str, language: str) -> str:
    return rng.choice(_PHONE_CONTEXT[language]).format(n=number)


def ssn(rng: Rng) -> tuple[str, str]:
    """US Social Security numbers (SSA, "Social Security Number Randomization", 2011): area 001-899 except 666,
    group 01-99, serial 0001-9999; written 3-2-4 with dashes, spaces or none."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    a, g, s = f"{area:03d}", f"{rng.randrange(1, 100):02d}", f"{rng.randrange(1, 10000):04d}"
    number = rng.choice([f"{a}-{g}-{s}", f"{a}-{g}-{s}", f"{a} {g} {s}", f"{a}{g}{s}"])
    text = _pick(rng, ["SSN: {n}", "my social security number is {n}", "ssn={n}", "{{\"ssn\": \"{n}\"}}",
                       "SS# {n}", "Social Security No. {n}", "applicant {n} (SSN) verified"], n=number)
    return text, number


def _luhn_complete(rng: Rng, prefix: str, length: int) -> str:
    body = prefix + digits(rng, length - len(prefix) - 1)
    return body + luhn_digit(body)


def card(rng: Rng) -> tuple[str, str]:
    """Payment cards (ISO/IEC 7812: issuer prefixes, Luhn check digit): Visa 4, Mastercard 51-55 and 2221-2720,
    Amex 34/37 (15 digits, 4-6-5), Discover 6011; grouped in fours with the separators form fields and exports
    use: space, dash, dot, underscore, or none."""
    prefix, length = rng.choice([("4", 16), ("51", 16), ("55", 16), ("2221", 16), ("2720", 16), ("34", 15),
                                 ("37", 15), ("6011", 16)])
    number = _luhn_complete(rng, prefix, length)
    sep = rng.choice([".", "_", ".", "_", " ", "-", ""])
    groups = [number[:4], number[4:10], number[10:]] if length == 15 else \
        [number[i:i + 4] for i in range(0, 16, 4)]
    shown = sep.join(groups)
    text = _pick(rng, ["card number {c} exp 09/27", "{{\"card\": \"{c}\", \"cvc\": \"123\"}}", "cc={c}",
                       "charged {c} for $42.10", "Card: {c}"], c=shown)
    return text, shown


_IBAN_SHAPES = {"DE": "8n10n", "GB": "4a14n", "FR": "5n5n11c2n", "NL": "4a10n", "ES": "20n", "IT": "1a10n12c",
                "BE": "12n", "CH": "5n12c", "AT": "16n", "PL": "24n"}


def iban(rng: Rng) -> tuple[str, str]:
    """IBANs (ISO 13616; the SWIFT IBAN registry's BBAN shapes per country), check digits by ISO 7064 mod 97-10;
    written in print form (groups of four) or compact, upper- or lower-case as pasted from bank apps and forms."""
    country = rng.choice(list(_IBAN_SHAPES))
    body = bban(rng, _IBAN_SHAPES[country])
    code = f"{country}{iban_check(country, body)}{body}"
    shown = rng.choice([code.lower(), group(code, 4, " ").lower(), code,
                        code[:2].lower() + code[2:]])
    text = _pick(rng, ["IBAN: {i}", "please refund to {i}", "{{\"iban\": \"{i}\"}}", "bank account {i}",
                       "SEPA transfer to {i} done", "iban={i}"], i=shown)
    return text, shown


GENERATORS: dict[str, Callable[[Rng], tuple[str, str]]] = {
    "password": password, "aws_secret_key": aws_secret_key, "webhook_url": webhook_url,
    "stripe_webhook_secret": stripe_webhook_secret, "connection_string_key": connection_string_key,
    "labelled_key": labelled_key, "obfuscated_key": obfuscated_key, "email": email, "phone_us": phone_us,
    "phone_uk": phone_uk, "phone_fr": phone_fr, "phone_de": phone_de, "phone_in": phone_in, "ssn": ssn,
    "card": card, "iban": iban,
}
KINDS = tuple(GENERATORS)


def _bad_luhn(rng: Rng) -> str:
    """A Visa-shaped number whose check digit is wrong, grouped with dots."""
    number = _luhn_complete(rng, "4", 16)
    number = number[:-1] + str((int(number[-1]) + rng.randrange(1, 10)) % 10)
    return ".".join(number[i:i + 4] for i in range(0, 16, 4))


def negatives(rng: Rng) -> list[str]:
    """Near misses: none of these holds a value to redact."""
    bad_ssn = rng.choice(["000", "666", "912"]) + f"-{rng.randrange(1, 100):02d}-{rng.randrange(1, 10000):04d}"
    return [
        f"SSN: {bad_ssn}",
        f"ssn: {rng.randrange(100, 900)}-00-{rng.randrange(1000, 10000)}",
        "DB_PASSWORD=${DB_PASSWORD}", "password: ********", "POSTGRES_PASSWORD_FILE=/run/secrets/db_password",
        "{\"password\": \"<redacted>\"}", "password: {{ vault_db_password }}", "--password-stdin",
        "password_min_length=12", "password = os.environ['DB_PASSWORD']",
        f"order number {digits(rng, 10)} shipped", f"call_id: {digits(rng, 12)}",
        f"tel_{pick(rng, string.ascii_lowercase, 4)}_{digits(rng, 6)}",
        f"card {_bad_luhn(rng)} rejected", f"version {rng.randrange(1, 9)}.{rng.randrange(30)}.{rng.randrange(30)}",
        f"IBAN DE00 {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 2)}",
        f"sha1 {pick(rng, '0123456789abcdef', 40)}", f"secret_key_path = /etc/app/keys/{pick(rng, 'abcdefgh', 8)}.pem",
        f"trace_id={pick(rng, '0123456789abcdef', 32)}", f"timestamp 2024{digits(rng, 10)}",
        "email me at the usual address", "user@localhost",
    ]


CARRIERS = ("message", "tool_result", "tool_arguments", "metadata")


def carry(text: str, carrier: str, rng: Rng) -> str:
    """`text` as the store holds it: a message or tool result around other lines, or a JSON string value."""
    before = rng.choice(["", "ok, here you go.\n", "$ cat .env\n", "Thanks! ", "INFO 2024-05-02 10:11:12 "])
    after = rng.choice(["", "\nlet me know if that works", "\n[exit code 0]", " -- sent from my phone"])
    if carrier == "message" or carrier == "tool_result":
        return before + text + after
    key = "command" if carrier == "tool_arguments" else "note"
    return json.dumps({key: before + text + after, "timeout": 30})


def generate(per_kind: int = 200, seed: int = 0) -> list[Case]:
    rng = Rng(seed)
    cases = []
    for kind, make in GENERATORS.items():
        for n in range(per_kind):
            text, secret = make(rng)
            assert secret in text, (kind, text, secret)
            carrier = CARRIERS[n % len(CARRIERS)]
            cases.append(Case(kind, text, secret, carrier, carry(text, carrier, rng)))
    return cases


def generate_negatives(seed: int = 0, rounds: int = 20) -> list[tuple[str, str]]:
    """(carrier, carried text) of near misses."""
    rng = Rng(seed + 1)
    out = []
    for n in range(rounds):
        for text in negatives(rng):
            carrier = CARRIERS[n % len(CARRIERS)]
            out.append((carrier, carry(text, carrier, rng)))
    return out
