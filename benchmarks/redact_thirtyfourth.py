"""The thirty-fourth blind redaction corpus: marketing, growth and ad-tech agents, what an agent that runs campaigns
and customer data reads and writes. Written from the formats' public specifications by someone who read neither the
detection rules nor the other corpora (only the twenty-first's interface).

Carriers (the `form` head). JSON (`is_json`, about a third): Segment track/identify calls, a RudderStack destination
config, HubSpot CRM v3 objects, a Braze user export, Iterable and Klaviyo events, Google Ads API search rows, Meta
Lead Ads `field_data`, SendGrid event webhooks, Postmark inbound webhooks, Amazon SES events via EventBridge, GA4
Measurement Protocol payloads, Mixpanel and Amplitude exports, Typeform responses, a LaunchDarkly flag, a TikTok
Ads report and an agent's tool result. Text: HubSpot and Qualtrics CSV exports, a Mailgun suppression list,
UTM-tagged links in a growth channel, multipart lead-form posts, landing-page HTML, affiliate and influencer
outreach e-mails (RFC 5322), the agent's messages to users in 28 languages (labels in the user's language), Google
Ads TSV reports, a GrowthBook experiment YAML, the stack's .env, agent tool logs, Braze Liquid templates, Jira
tickets, warehouse query results as psql prints them, shell history, a Notion campaign brief, a click-tracking
redirect log and a LinkedIn Campaign Manager draft.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the
SWIFT IBAN registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00,
serial not 0000); phones, the national numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT) with each country's
context words, avoiding the ranges the regulators keep for drama; AWS, IAM's AKIA/ASIA ids and 40-character
secrets; webhooks as Slack, Discord, Microsoft Teams (Office 365 connector and Power Automate workflow), Google Chat,
Zapier, Make and Mattermost print them (the secret is the token segment or `sig`/`token` value only); Stripe
`whsec_` (dashboard, 32 characters; `stripe listen`, 64 hex), `sk_live_`/`sk_test_`/`rk_live_`; PostgreSQL,
MySQL, MongoDB SRV, Redis, Snowflake, AMQP and SFTP URIs, Redshift JDBC, ADO.NET, Azure Storage and Service Bus
strings (the secret is the password or key only); JWT (RFC 7519/7515), HTTP Basic (RFC 7617), Bearer (RFC 6750)
and TikTok's `Access-Token`; PEM PKCS#8/SEC1 (RFC 5958/5915) and OpenSSH keys, also inside service-account JSON;
TOTP seeds (RFC 4648 base32, Google Authenticator's Key Uri Format); recovery codes as GitHub, Google and Meta
print them; provider tokens as their docs show them: SendGrid `SG.`, Mailchimp `-usN` keys, Slack `xoxb-`/`xoxp-`,
Google `AIza`, `GOCSPX-`, `1//` refresh and `ya29.` access tokens, HubSpot `pat-na1-`, Shopify `shpat_`/`shpss_`,
OpenAI `sk-proj-`, Meta `EAA` access tokens; labelled unprefixed keys (Segment write keys, Mixpanel and Amplitude
secrets, Braze and Postmark UUID keys, Google Ads developer tokens, Twilio auth tokens); national ids (outside the
target): Spanish DNI/NIE (mod 23 letter), Brazilian CPF (two mod 11 digits), French NIR (97 - n mod 97), Italian
codice fiscale (odd/even table mod 26), Swedish personnummer (Luhn), Finnish henkilötunnus (mod 31), Chinese
resident id (ISO 7064 MOD 11-2).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a header's credential, a PEM body without its armour). A key hidden with a zero-width character,
full-width forms, %-encoding or JSON `\\u` escapes is still the key. Providers' published test card numbers are
neither values nor near misses. Near misses are what campaign tooling holds that is neither secret nor personal:
element ids, CSS selectors, XPath, click coordinates, creative sizes, timestamps, request and trace ids,
cache-busting hashes, CSRF and password field NAMES, merge tags and placeholders, masked values, SDK versions,
measurement and container ids, businesses' toll-free service lines, Luhn-invalid numbers, order and tracking
numbers, Google Ads customer ids (XXX-XXX-XXXX, not phones), UTM parameters, the AWS docs' EXAMPLE keys.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import NamedTuple
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

SEED = 34
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "fr_nir", "it_cf", "se_pnr", "fi_hetu", "cn_rid"})
"""National ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWNUM = string.ascii_lowercase + string.digits
UPNUM = string.ascii_uppercase + string.digits
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

Carrier = Callable[[random.Random, str, int], str]
"""(rng, snippet, case index) -> the carrier's text; the index picks the user's language where one is needed."""


class Lang(NamedTuple):
    """One user language: the agent's opening line and the labels a user of it reads."""

    code: str
    intro: str
    password: str
    key: str
    email: str
    card: str


LANGS = [
    Lang("en", "Here is what I found in the campaign workspace:", "Password", "API key", "Email", "Card number"),
    Lang("de", "Das habe ich im Kampagnen-Workspace gefunden:", "Passwort", "API-Schlüssel", "E-Mail",
         "Kartennummer"),
    Lang("fr", "Voici ce que j'ai trouvé dans l'espace de campagne :", "Mot de passe", "Clé API", "E-mail",
         "Numéro de carte"),
    Lang("es", "Esto es lo que encontré en el espacio de la campaña:", "Contraseña", "Clave de API",
         "Correo electrónico", "Número de tarjeta"),
    Lang("pt", "Veja o que encontrei no espaço da campanha:", "Senha", "Chave de API", "E-mail",
         "Número do cartão"),
    Lang("it", "Ecco cosa ho trovato nello spazio della campagna:", "Password", "Chiave API", "E-mail",
         "Numero della carta"),
    Lang("nl", "Dit heb ik gevonden in de campagneomgeving:", "Wachtwoord", "API-sleutel", "E-mailadres",
         "Kaartnummer"),
    Lang("sv", "Det här hittade jag i kampanjytan:", "Lösenord", "API-nyckel", "E-post", "Kortnummer"),
    Lang("da", "Her er, hvad jeg fandt i kampagneområdet:", "Adgangskode", "API-nøgle", "E-mail", "Kortnummer"),
    Lang("no", "Her er det jeg fant i kampanjeområdet:", "Passord", "API-nøkkel", "E-post", "Kortnummer"),
    Lang("fi", "Tässä on, mitä löysin kampanjan työtilasta:", "Salasana", "API-avain", "Sähköposti",
         "Kortin numero"),
    Lang("pl", "Oto, co znalazłem w przestrzeni kampanii:", "Hasło", "Klucz API", "E-mail", "Numer karty"),
    Lang("cs", "Tohle jsem našel v prostoru kampaně:", "Heslo", "Klíč API", "E-mail", "Číslo karty"),
    Lang("hu", "Ezt találtam a kampány munkaterületén:", "Jelszó", "API-kulcs", "E-mail-cím", "Kártyaszám"),
    Lang("ro", "Iată ce am găsit în spațiul campaniei:", "Parolă", "Cheie API", "E-mail", "Numărul cardului"),
    Lang("tr", "Kampanya çalışma alanında bulduklarım:", "Şifre", "API anahtarı", "E-posta", "Kart numarası"),
    Lang("ru", "Вот что я нашёл в рабочей области кампании:", "Пароль", "API-ключ", "Эл. почта", "Номер карты"),
    Lang("uk", "Ось що я знайшов у робочому просторі кампанії:", "Пароль", "API-ключ", "Ел. пошта",
         "Номер картки"),
    Lang("el", "Αυτά βρήκα στον χώρο της καμπάνιας:", "Κωδικός πρόσβασης", "Κλειδί API", "Email",
         "Αριθμός κάρτας"),
    Lang("ar", "هذا ما وجدته في مساحة الحملة:", "كلمة المرور", "مفتاح API", "البريد الإلكتروني", "رقم البطاقة"),
    Lang("he", "זה מה שמצאתי בסביבת הקמפיין:", "סיסמה", "מפתח API", "דוא״ל", "מספר כרטיס"),
    Lang("hi", "कैंपेन वर्कस्पेस में मुझे यह मिला:", "पासवर्ड", "API कुंजी", "ईमेल", "कार्ड नंबर"),
    Lang("ja", "キャンペーンのワークスペースで見つけた内容です。", "パスワード", "APIキー", "メールアドレス",
         "カード番号"),
    Lang("ko", "캠페인 작업 공간에서 찾은 내용입니다:", "비밀번호", "API 키", "이메일", "카드 번호"),
    Lang("zh", "这是我在营销活动工作区中找到的内容：", "密码", "API 密钥", "邮箱", "卡号"),
    Lang("vi", "Đây là những gì tôi tìm thấy trong không gian chiến dịch:", "Mật khẩu", "Khóa API", "Email",
         "Số thẻ"),
    Lang("id", "Ini yang saya temukan di ruang kerja kampanye:", "Kata sandi", "Kunci API", "Email",
         "Nomor kartu"),
    Lang("th", "นี่คือสิ่งที่ฉันพบในพื้นที่แคมเปญ:", "รหัสผ่าน", "คีย์ API", "อีเมล", "หมายเลขบัตร"),
]


def lang_of(i: int) -> Lang:
    """The user language of case `i`: carriers and values of one case agree on it."""
    return LANGS[i % len(LANGS)]


def labelled(lang: Lang, label: str, value: str) -> str:
    """`label` and `value` with the separator the language writes (full-width colon in Japanese and Chinese)."""
    if lang.code in ("ja", "zh"):
        return f"{label}：{value}"
    return f"{label} : {value}" if lang.code == "fr" else f"{label}: {value}"


# ---- carriers -------------------------------------------------------------------------------------------------

CAMPAIGNS = ["spring_sale_2024", "bf_retargeting", "webinar_q3_emea", "cart_abandon_v2", "brand_awareness_nl",
             "app_install_ios", "lead_gen_dach", "newsletter_relaunch", "influencer_wave_4", "holiday_gift_guide"]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    return (f"2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def _campaign(rng: random.Random) -> str:
    return rng.choice(CAMPAIGNS)


def j_segment_track(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"type": "track", "event": rng.choice(["Form Submitted", "Demo Requested", "Chat Message Sent"]),
                  "anonymousId": _uuid(rng), "messageId": f"ajs-next-{pick(rng, HEX, 32)}",
                  "properties": {"form_id": f"hsForm_{pick(rng, HEX, 8)}", "message": snip},
                  "context": {"library": {"name": "analytics.js", "version": "next-1.70.0"},
                              "campaign": {"name": _campaign(rng), "source": "linkedin", "medium": "paid_social"}},
                  "timestamp": _ts(rng)})


def j_segment_identify(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"type": "identify", "userId": f"usr_{pick(rng, LOWNUM, 14)}",
                  "traits": {"plan": rng.choice(["trial", "pro", "enterprise"]), "lead_notes": snip},
                  "integrations": {"All": True, "Salesforce": False}, "sentAt": _ts(rng)})


def j_rudderstack(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"destination": {"id": pick(rng, ALNUM, 27), "name": "Warehouse sync",
                                  "destinationDefinition": {"name": rng.choice(["POSTGRES", "SNOWFLAKE", "S3"])},
                                  "config": {"syncFrequency": "30", "notes": snip}, "enabled": True}})


def j_hubspot(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"id": digits(rng, 11), "properties": {"hs_lead_status": "NEW", "lifecyclestage": "lead",
                                                        "hs_analytics_source": "PAID_SEARCH", "message": snip},
                  "createdAt": _ts(rng), "archived": False})


def j_braze(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"external_id": f"cust-{digits(rng, 8)}", "braze_id": pick(rng, HEX, 24),
                  "custom_attributes": {"loyalty_tier": "gold", "last_support_note": snip},
                  "push_subscribe": "opted_in", "random_bucket": rng.randint(0, 9999)})


def j_iterable(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"eventName": "emailClick", "campaignId": rng.randint(10 ** 6, 10 ** 7),
                  "templateId": rng.randint(10 ** 6, 10 ** 7), "dataFields": {"url": "https://shop.northwind.io/sale",
                                                                            "comment": snip},
                  "createdAt": _ts(rng)})


def j_klaviyo(rng: random.Random, snip: str, _i: int) -> str:
    metric = {"data": {"type": "metric", "attributes": {"name": "Placed Order"}}}
    return _dump({"data": {"type": "event", "attributes": {"properties": {"$event_id": pick(rng, HEX, 16),
                                                                         "note": snip}, "metric": metric}}})


def j_google_ads(rng: random.Random, snip: str, _i: int) -> str:
    cid, camp = digits(rng, 10), digits(rng, 11)
    return _dump({"results": [{"campaign": {"resourceName": f"customers/{cid}/campaigns/{camp}",
                                            "name": _campaign(rng), "status": "ENABLED"},
                               "changeEvent": {"changeDateTime": _ts(rng), "userEmail": "",
                                               "clientType": "GOOGLE_ADS_API", "oldResource": {"note": snip}}}],
                  "fieldMask": "campaign.name,change_event.old_resource", "requestId": pick(rng, URLSAFE, 22)})


def j_meta_leads(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"data": [{"created_time": _ts(rng), "id": digits(rng, 16), "ad_id": digits(rng, 17),
                            "form_id": digits(rng, 15),
                            "field_data": [{"name": "budget", "values": ["5k-10k"]},
                                           {"name": "anything_else", "values": [snip]}]}],
                  "paging": {"cursors": {"before": pick(rng, URLSAFE, 20), "after": pick(rng, URLSAFE, 20)}}})


def j_sendgrid(rng: random.Random, snip: str, _i: int) -> str:
    return _dump([{"event": rng.choice(["bounce", "dropped", "spamreport"]),
                   "timestamp": rng.randint(1_700_000_000, 1_730_000_000),
                   "sg_event_id": pick(rng, URLSAFE, 22), "reason": snip, "category": [_campaign(rng)]}])


def j_postmark(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"RecordType": "Inbound", "MessageStream": "inbound", "MessageID": _uuid(rng),
                  "Subject": "Re: your partnership offer", "TextBody": snip, "Tag": _campaign(rng)})


def j_ses(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"version": "0", "id": _uuid(rng), "detail-type": "Email Bounced", "source": "aws.ses",
                  "region": "eu-west-1", "detail": {"eventType": "Bounce", "bounce": {
                      "bounceType": "Permanent", "bouncedRecipients": [{"diagnosticCode": snip}]},
                      "mail": {"messageId": f"{pick(rng, HEX, 16)}-{_uuid(rng)}-000000"}}})


def j_ga4(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"client_id": f"{rng.randint(10 ** 8, 10 ** 9)}.{rng.randint(1_700_000_000, 1_730_000_000)}",
                  "events": [{"name": "generate_lead", "params": {"form_text": snip, "engagement_time_msec": 100,
                                                                  "campaign": _campaign(rng)}}]})


def j_mixpanel(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"event": "Signup Form Error", "properties": {"time": rng.randint(1_700_000_000, 1_730_000_000),
                                                               "distinct_id": _uuid(rng), "$insert_id": pick(
                                                                   rng, LOWNUM, 16), "error_context": snip}})


def j_amplitude(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"event_type": "onboarding_step", "insert_id": _uuid(rng), "device_id": _uuid(rng),
                  "event_properties": {"step": rng.randint(1, 6), "free_text": snip},
                  "server_upload_time": _ts(rng)})


def j_typeform(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"event_type": "form_response", "form_response": {
        "form_id": pick(rng, ALNUM, 8), "token": pick(rng, LOWNUM, 32), "submitted_at": _ts(rng),
        "answers": [{"type": "choice", "choice": {"label": "Agency"}, "field": {"ref": "company_type"}},
                    {"type": "text", "text": snip, "field": {"ref": "other_details"}}]}})


def j_launchdarkly(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"key": rng.choice(["new-pricing-page", "checkout-upsell", "exit-intent-modal"]),
                  "description": snip, "variations": [{"value": True}, {"value": False}],
                  "_version": rng.randint(2, 60), "tags": ["growth"]})


def j_tiktok(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"code": 0, "message": "OK", "request_id": digits(rng, 20) + pick(rng, UPNUM, 12),
                  "data": {"list": [{"dimensions": {"campaign_id": digits(rng, 19)},
                                     "metrics": {"spend": f"{rng.uniform(10, 900):.2f}", "remark": snip}}]}})


def j_tool_result(rng: random.Random, snip: str, _i: int) -> str:
    return _dump({"role": "tool", "tool_call_id": f"call_{pick(rng, ALNUM, 24)}",
                  "name": rng.choice(["crm_search", "read_campaign_doc", "fetch_form_submissions"]), "content": snip})


def t_hubspot_csv(rng: random.Random, snip: str, _i: int) -> str:
    cell = snip.replace('"', '""')
    return ("Record ID,Lifecycle Stage,Lead Status,Original Source,Notes\n"
            f'{digits(rng, 11)},lead,OPEN,PAID_SOCIAL,"{cell}"\n')


def t_qualtrics_csv(rng: random.Random, snip: str, _i: int) -> str:
    cell = snip.replace('"', '""')
    return ('StartDate,EndDate,Status,Progress,ResponseId,Q1,Q7_TEXT\n'
            f'{_ts(rng)},{_ts(rng)},IP Address,100,R_{pick(rng, ALNUM, 15)},4,"{cell}"\n')


def t_mailgun_csv(rng: random.Random, snip: str, _i: int) -> str:
    cell = snip.replace('"', '""')
    return (f"# suppressions export {rng.choice(['bounces', 'complaints', 'unsubscribes'])} mg.northwind.io\n"
            f'id,code,error,created_at\n{pick(rng, HEX, 24)},550,"{cell}",{_ts(rng)}\n')


def t_utm_chat(rng: random.Random, snip: str, _i: int) -> str:
    camp = _campaign(rng)
    return (f"#growth-launches  {rng.randint(8, 18)}:{rng.randint(10, 59)}\nFinal link for {camp}: https://go.north"
            f"wind.io/{camp}?utm_source=newsletter&utm_medium=email&utm_campaign={camp}\n{snip}")


def t_lead_post(rng: random.Random, snip: str, _i: int) -> str:
    b = f"----WebKitFormBoundary{pick(rng, ALNUM, 16)}"
    return (f"POST /f/{pick(rng, LOWNUM, 10)} HTTP/1.1\nHost: forms.landingkit.io\n"
            f"Content-Type: multipart/form-data; boundary={b}\n\n--{b}\n"
            'Content-Disposition: form-data; name="company"\n\nNorthwind Apparel\n'
            f'--{b}\nContent-Disposition: form-data; name="message"\n\n{snip}\n--{b}--\n')


def t_landing_html(rng: random.Random, snip: str, _i: int) -> str:
    return (f'<section id="hero-{pick(rng, HEX, 6)}" class="lp-section lp-section--dark">\n'
            '  <h1>Grow faster with Northwind</h1>\n'
            f'  <!-- draft copy from the brief -->\n  <div class="lp-text">{snip}</div>\n</section>')


def t_outreach_email(rng: random.Random, snip: str, _i: int) -> str:
    return (f"Message-ID: <{pick(rng, HEX, 12)}@mail.northwind.io>\nSubject: Collab for "
            f"{_campaign(rng).replace('_', ' ')}\nContent-Type: text/plain; charset=utf-8\n\n"
            f"Hi there,\n\nthanks for your reply! As discussed:\n\n{snip}\n\nBest,\nPartnerships team")


def t_agent_message(_rng: random.Random, snip: str, i: int) -> str:
    return f"{lang_of(i).intro}\n\n{snip}"


def t_ads_tsv(rng: random.Random, snip: str, _i: int) -> str:
    return ("Campaign\tAd group\tImpr.\tClicks\tCost\tNotes\n"
            f"{_campaign(rng)}\tAG {rng.randint(1, 9)}\t{rng.randint(1000, 90000)}\t{rng.randint(10, 900)}\t"
            f"{rng.uniform(10, 900):.2f}\t{snip}\n")


def t_growthbook_yaml(rng: random.Random, snip: str, _i: int) -> str:
    return (f"experiment: {rng.choice(['hero-cta-color', 'pricing-anchor', 'signup-steps'])}\n"
            f"hashAttribute: id\ncoverage: 1\nweights: [0.5, 0.5]\n# notes pasted from the brief:\n{snip}\n")


def t_dotenv(rng: random.Random, snip: str, _i: int) -> str:
    return (f"# marketing-ops worker\nNODE_ENV=production\nSYNC_INTERVAL_MIN={rng.choice([5, 15, 30])}\n"
            f"{snip}\nLOG_LEVEL=info\n")


def t_agent_log(rng: random.Random, snip: str, _i: int) -> str:
    return (f"{_ts(rng)} INFO agent step={rng.randint(1, 40)} tool={rng.choice(['hubspot', 'braze', 'sheets'])}"
            f" trace={pick(rng, HEX, 16)}\n{snip}\n{_ts(rng)} INFO agent step done")


def t_liquid(rng: random.Random, snip: str, _i: int) -> str:
    return ("{% if ${language} == 'en' %}Hi {{${first_name} | default: 'there'}}!{% endif %}\n"
            f"{{% comment %}} {snip} {{% endcomment %}}\n<a href=\"{{{{${{unsubscribe_url}}}}}}\">Unsubscribe</a>"
            f"<!-- tpl {pick(rng, HEX, 8)} -->")


def t_jira(rng: random.Random, snip: str, _i: int) -> str:
    return (f"MKT-{rng.randint(100, 9999)} | Launch checklist: {_campaign(rng)}\nStatus: In Progress\n"
            f"Description:\n{snip}")


def t_psql(rng: random.Random, snip: str, _i: int) -> str:
    return (" lead_id |   source   | raw_note\n---------+------------+----------\n"
            f" {rng.randint(10000, 99999)}   | {rng.choice(['webinar', 'g_ads', 'meta']):<10} | {snip}\n(1 row)\n")


def t_shell(rng: random.Random, snip: str, _i: int) -> str:
    return (f"  {rng.randint(100, 999)}  cd ~/growth/reverse-etl\n  {rng.randint(100, 999)}  {snip}\n"
            f"  {rng.randint(100, 999)}  make sync CAMPAIGN={_campaign(rng)}")


def t_notion(rng: random.Random, snip: str, _i: int) -> str:
    return (f"# Campaign brief: {_campaign(rng)}\n\n## Audience\nLapsed buyers, 90 days.\n\n## Setup notes\n"
            f"> {snip}\n\n- [ ] QA the UTM links")


def t_redirect_log(rng: random.Random, snip: str, _i: int) -> str:
    return (f'{rng.randint(10, 250)}.{rng.randint(0, 255)}.0.0 - - [{_ts(rng)}] "GET /c/{pick(rng, ALNUM, 10)} '
            f'HTTP/2" 302 0 "-" "Mozilla/5.0"\nredirect-note: {snip}')


def t_linkedin(rng: random.Random, snip: str, _i: int) -> str:
    return (f"Campaign Manager > Account {digits(rng, 9)} > Conversation ad (draft)\n"
            f"Sender: Growth team\nMessage:\n{snip}\nCTA: Book a demo")


JSON_CARRIERS: dict[str, Carrier] = {
    "segment_track": j_segment_track, "segment_identify": j_segment_identify, "rudderstack": j_rudderstack,
    "hubspot_object": j_hubspot, "braze_export": j_braze, "iterable_event": j_iterable, "klaviyo_event": j_klaviyo,
    "google_ads_api": j_google_ads, "meta_leads": j_meta_leads, "sendgrid_webhook": j_sendgrid,
    "postmark_inbound": j_postmark, "ses_event": j_ses, "ga4_mp": j_ga4, "mixpanel_export": j_mixpanel,
    "amplitude_export": j_amplitude, "typeform_response": j_typeform, "launchdarkly_flag": j_launchdarkly,
    "tiktok_report": j_tiktok, "agent_tool_result": j_tool_result,
}
TEXT_CARRIERS: dict[str, Carrier] = {
    "hubspot_csv": t_hubspot_csv, "qualtrics_csv": t_qualtrics_csv, "mailgun_suppressions": t_mailgun_csv,
    "utm_chat": t_utm_chat, "lead_form_post": t_lead_post, "landing_html": t_landing_html,
    "outreach_email": t_outreach_email, "agent_message": t_agent_message, "ads_report_tsv": t_ads_tsv,
    "growthbook_yaml": t_growthbook_yaml, "dotenv": t_dotenv, "agent_log": t_agent_log, "braze_liquid": t_liquid,
    "jira_ticket": t_jira, "psql_result": t_psql, "shell_history": t_shell, "notion_brief": t_notion,
    "redirect_log": t_redirect_log, "linkedin_draft": t_linkedin,
}


# ---- target kinds: credentials ----------------------------------------------------------------------------------

PW_SYMBOLS = "!#$%*-_.@?+=~"


def password_value(rng: random.Random) -> str:
    """A password as people and tools set them: random (a manager's), or words, digits and a symbol."""
    if rng.random() < 0.5:
        return pick(rng, ALNUM + PW_SYMBOLS, rng.randint(12, 22))
    words = ["Sunset", "Harbor", "Maple", "Quartz", "Falcon", "Velvet", "Cobalt", "Meadow", "Tango", "Orbit"]
    return (rng.choice(words) + rng.choice(PW_SYMBOLS) + rng.choice(words).lower() + digits(rng, rng.randint(2, 4))
            + rng.choice(PW_SYMBOLS))


def v_password(rng: random.Random, i: int) -> Value:
    pw, lang = password_value(rng), lang_of(i)
    tool = rng.choice(["Unbounce", "Webflow", "Marketo", "Hootsuite", "Canva", "WordPress", "Salesforce"])
    styles = [
        ("lang_label", f"{tool} — {labelled(lang, lang.password, pw)}"),
        ("smtp_env", f"MAILGUN_SMTP_PASSWORD={pw}"),
        ("yaml", f"sftp:\n  host: ftp.s{rng.randint(4, 12)}.exacttarget.com\n  username: {digits(rng, 8)}\n"
                 f"  password: {pw}"),
        ("json_field", f'{{"username": "growth-ops", "password": "{pw}"}}'),
        ("form_field", f"login=growth-ops&password={quote(pw, safe='')}&remember=1"
         if pw == quote(pw, safe="") else f"login: growth-ops / password: {pw}"),
        ("sentence", f"shared {tool} login is growth-ops, pw {pw} (please move it to the vault)"),
        ("cli", f"wp user update 7 --user_pass='{pw}' --path=/var/www/landing"),
        ("handoff", f"{tool} credentials for the agency\nuser: agency-{pick(rng, LOWER, 5)}\npass: {pw}"),
    ]
    style, snip = styles[i % len(styles)]
    return style, pw, snip, False


def aws_secret_value(rng: random.Random) -> str:
    """A 40-character IAM secret access key (base64 alphabet)."""
    return pick(rng, B64, 40)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    key_id = rng.choice(["AKIA", "ASIA"]) + pick(rng, BASE32, 16)
    secret = aws_secret_value(rng)
    bucket = f"{rng.choice(['creatives', 'currents-export', 'ads-reports'])}-{pick(rng, LOWNUM, 6)}"
    styles = [
        ("credentials_file", f"[marketing-exports]\naws_access_key_id = {key_id}\naws_secret_access_key = {secret}"),
        ("env_exports", f"export AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={secret}"),
        ("braze_currents", f"Currents > Amazon S3\nAccess Key ID: {key_id}\nSecret Access Key: {secret}\n"
                           f"Bucket: {bucket}"),
        ("boto3", f's3 = boto3.client("s3", aws_access_key_id="{key_id}", aws_secret_access_key="{secret}")'),
        ("segment_dest", f'"bucket": "{bucket}", "accessKey": "{key_id}", "secretKey": "{secret}"'),
        ("labelled_only", f"AWS secret for the {bucket} bucket: {secret}"),
        ("beside_id", f"{key_id} {secret}"),
        ("tfvars", f'aws_access_key = "{key_id}"\naws_secret_key = "{secret}"'),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    forms: list[tuple[str, str, Callable[[str], str]]] = []
    tok = pick(rng, ALNUM, 24)
    forms.append(("slack", tok, lambda t: f"https://hooks.slack.com/services/T{pick(rng, UPNUM, 10)}/"
                                          f"B{pick(rng, UPNUM, 10)}/{t}"))
    dtok = pick(rng, URLSAFE, 68)
    forms.append(("discord", dtok, lambda t: f"https://discord.com/api/webhooks/{digits(rng, 19)}/{t}"))
    ttok = pick(rng, HEX, 32)
    forms.append(("teams_connector", ttok, lambda t: f"https://northwind.webhook.office.com/webhookb2/{_uuid(rng)}@"
                                                     f"{_uuid(rng)}/IncomingWebhook/{t}/{_uuid(rng)}"))
    sig = pick(rng, URLSAFE, 43)
    forms.append(("power_automate", sig, lambda t: f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443"
                                                   f"/workflows/{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?"
                                                   f"api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={t}"))
    gtok = pick(rng, URLSAFE, 43)
    forms.append(("google_chat", gtok, lambda t: f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}"
                                                 f"/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={t}%3D"))
    ztok = pick(rng, LOWNUM, 7)
    forms.append(("zapier", ztok, lambda t: f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{t}/"))
    mtok = pick(rng, LOWNUM, 32)
    forms.append(("make", mtok, lambda t: f"https://hook.eu1.make.com/{t}"))
    mmtok = pick(rng, LOWNUM, 26)
    forms.append(("mattermost", mmtok, lambda t: f"https://chat.northwind.io/hooks/{t}"))
    name, secret, build = forms[i % len(forms)]
    url = build(secret)
    context = rng.choice([f"LEADS_WEBHOOK_URL={url}", f"New MQLs are posted to {url}",
                          f'"webhook_url": "{url}"', f"notify:\n  on_form_submit: {url}",
                          f"curl -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"lead\"}}' {url}"])
    return name, secret, context, False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, ALNUM, 32) if i % 2 else pick(rng, HEX, 64))
    styles = [
        ("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
        ("cli_output", f"> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is "
                       f"{secret} (^C to quit)"),
        ("code", f'event = stripe.Webhook.construct_event(payload, sig_header, "{secret}")'),
        ("dashboard", f"Signing secret\n{secret}\nEndpoint: https://api.northwind.io/billing/stripe"),
        ("vercel", f"vercel env add STRIPE_WHSEC production <<< '{secret}'"),
    ]
    style, snip = styles[i % len(styles)]
    return style, secret, snip, False


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = pick(rng, ALNUM + "-._~", rng.randint(14, 28))
    user = rng.choice(["hightouch", "census_sync", "marketing_ro", "dbt_mkt", "wp_landing"])
    host = f"{rng.choice(['warehouse', 'crm-replica', 'mkt-db'])}.{pick(rng, LOWNUM, 8)}.eu-west-1.rds.amazonaws.com"
    akey = base64.b64encode(rng.randbytes(64)).decode()
    sbkey = base64.b64encode(rng.randbytes(32)).decode()
    forms = [
        ("postgres_uri", pw, f"postgresql://{user}:{pw}@{host}:5432/analytics?sslmode=require"),
        ("mysql_uri", pw, f"mysql://{user}:{pw}@{host}:3306/wordpress"),
        ("mongodb_srv", pw, f"mongodb+srv://{user}:{pw}@cluster0.{pick(rng, LOWNUM, 5)}.mongodb.net/leads"),
        ("redis", pw, f"redis://default:{pw}@redis-{digits(rng, 5)}.c1.eu-west-1-2.ec2.cloud.redislabs.com:"
                      f"{digits(rng, 5)}"),
        ("snowflake", pw, f"snowflake://{user}:{pw}@{pick(rng, LOWER, 7)}-{pick(rng, LOWER, 6)}/MARKETING/RAW"),
        ("redshift_jdbc", pw, f"jdbc:redshift://{host}:5439/dev;UID={user};PWD={pw}"),
        ("adonet", pw, f"Server=tcp:crm-{pick(rng, LOWER, 5)}.database.windows.net,1433;Database=Dynamics;"
                       f"User ID={user};Password={pw};Encrypt=True;"),
        ("azure_storage", akey, f"DefaultEndpointsProtocol=https;AccountName=creatives{pick(rng, LOWNUM, 6)};"
                                f"AccountKey={akey};EndpointSuffix=core.windows.net"),
        ("service_bus", sbkey, f"Endpoint=sb://mkt-events-{pick(rng, LOWNUM, 5)}.servicebus.windows.net/;"
                               f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={sbkey}"),
        ("amqp", pw, f"amqps://{user}:{pw}@rabbit.northwind.io:5671/campaigns"),
        ("sftp_uri", pw, f"sftp://{digits(rng, 8)}:{pw}@ftp.s{rng.randint(4, 12)}.exacttarget.com/Import"),
    ]
    style, secret, conn = forms[i % len(forms)]
    snip = rng.choice([f"DATABASE_URL={conn}", f"connection: {conn}", f"Warehouse source: {conn}", conn])
    return style, secret, snip, False


def labelled_key_value(rng: random.Random, provider: str) -> str:
    """An unprefixed key in the shape its provider documents."""
    shapes = {"segment": lambda: pick(rng, ALNUM, 32), "mixpanel": lambda: pick(rng, HEX, 32),
              "amplitude": lambda: pick(rng, HEX, 32), "braze": lambda: _uuid(rng),
              "postmark": lambda: _uuid(rng), "google_ads_dev": lambda: pick(rng, URLSAFE, 22),
              "twilio": lambda: pick(rng, HEX, 32), "iterable": lambda: pick(rng, HEX, 32)}
    return shapes[provider]()


def v_labelled_key(rng: random.Random, i: int) -> Value:
    provider = ["segment", "mixpanel", "amplitude", "braze", "postmark", "google_ads_dev", "twilio",
                "iterable"][i % 8]
    key, lang = labelled_key_value(rng, provider), lang_of(i)
    styles = [
        ("lang_label", f"{provider.replace('_', ' ').title()} {labelled(lang, lang.key, key)}"),
        ("api_key_label", f"API key: {key}"),
        ("header", f"{'X-Postmark-Server-Token' if provider == 'postmark' else 'Api-Key'}: {key}"),
        ("query", f"GET /api/v1/export?api_key={key}&from=2024-05-01"),
        ("yaml", f"{provider}:\n  api_secret: {key}"),
        ("json", f'"{provider}": {{"apiKey": "{key}", "region": "eu"}}'),
    ]
    style, snip = styles[(i // 8 + i) % len(styles)]
    return f"{provider}_{style}", key, snip, False


def _zero_width(rng: random.Random, s: str) -> str:
    at = rng.randint(3, len(s) - 3)
    return s[:at] + rng.choice(["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]) + s[at:]


def _full_width(s: str) -> str:
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in s)


def _percent(rng: random.Random, s: str) -> str:
    if rng.random() < 0.5:
        return "".join(f"%{ord(c):02X}" for c in s)
    return "".join(c if c.isalnum() else f"%{ord(c):02X}" for c in s)


def _json_u(s: str) -> str:
    return "".join(f"\\u{ord(c):04x}" if k % 2 == 0 else c for k, c in enumerate(s))


def v_disguised(rng: random.Random, i: int) -> Value:
    base = [lambda: "sk_live_" + pick(rng, ALNUM, 24), lambda: "xoxb-" + digits(rng, 12) + "-" + digits(rng, 13)
            + "-" + pick(rng, ALNUM, 24), lambda: "SG." + pick(rng, URLSAFE, 22) + "." + pick(rng, URLSAFE, 43),
            lambda: "shpat_" + pick(rng, HEX, 32), lambda: password_value(rng)][i % 5]()
    how = ["zero_width", "full_width", "percent", "json_u"][(i // 5) % 4]
    if how == "zero_width":
        secret = _zero_width(rng, base)
    elif how == "full_width":
        secret = _full_width(base)
    elif how == "percent":
        secret = _percent(rng, base)
    else:
        secret = _json_u(base)
    label = rng.choice(["token", "secret", "api_key", "password", "credential"])
    if how == "json_u":
        return how, secret, f'{{"{label}": "{secret}"}}', True
    return how, secret, rng.choice([f"{label}: {secret}", f"{label}={secret}", f"the {label} is {secret}"]), False


# ---- target kinds: personal data --------------------------------------------------------------------------------

FIRST = ["maria", "james", "aiko", "lukas", "chloe", "arjun", "fatima", "mateo", "olga", "wei", "sofia", "kwame",
         "ingrid", "pierre", "yuki", "omar", "priya", "tomasz", "ana", "liam", "elif", "minh", "hana", "diego"]
LAST = ["garcia", "smith", "tanaka", "mueller", "dubois", "sharma", "haddad", "rossi", "kowalski", "ivanova",
        "chen", "silva", "okafor", "lindqvist", "martin", "sato", "khan", "novak", "costa", "brennan", "yilmaz",
        "tran", "kim", "moreau"]
MAIL_DOMAINS = ["gmail.com", "outlook.com", "hotmail.co.uk", "yahoo.com", "icloud.com", "proton.me", "web.de",
                "gmx.de", "orange.fr", "free.fr", "libero.it", "yahoo.co.jp", "naver.com", "qq.com", "mail.ru",
                "rediffmail.com", "uol.com.br", "t-online.de", "brightloop.io", "kestrel-studio.co"]


def email_value(rng: random.Random) -> str:
    """A lead's or customer's address: the local part shapes people choose, on real mail providers' domains."""
    first, last = rng.choice(FIRST), rng.choice(LAST)
    local = rng.choice([f"{first}.{last}", f"{first}{last}", f"{first[0]}.{last}", f"{first}_{last}{digits(rng, 2)}",
                        f"{first}+{rng.choice(['promo', 'news', 'webinar'])}", f"{last}.{first}{digits(rng, 4)}"])
    return f"{local}@{rng.choice(MAIL_DOMAINS)}"


def v_email(rng: random.Random, i: int) -> Value:
    addr, lang = email_value(rng), lang_of(i)
    name = addr.split("@")[0].split(".")[0].split("+")[0].split("_")[0].title()
    styles = [
        ("lang_label", labelled(lang, lang.email, addr), addr),
        ("display_name", f"From: {name} <{addr}>", addr),
        ("mailto", f'Reply to <a href="mailto:{addr}">this lead</a>', addr),
        ("click_url", f"https://go.northwind.io/c?u={quote(addr, safe='')}&utm_source=email&utm_campaign=winback",
         quote(addr, safe="")),
        ("csv_row", f"email,first_name,opt_in\n{addr},{name},true", addr),
        ("upper", f"EMAIL: {addr.upper()}", addr.upper()),
        ("sentence", f"the influencer asked us to use {addr} for the contract", addr),
        ("suppression", f"{addr}  hard_bounce  2024-04-0{rng.randint(1, 9)}", addr),
    ]
    style, snip, secret = styles[i % len(styles)]
    return style, secret, snip, False


def phone_case(rng: random.Random, i: int, forms: list[Callable[[random.Random], tuple[str, str]]],
               words: list[str]) -> Value:
    """One of a country's print forms (style, number) after one of its context words."""
    style, number = forms[i % len(forms)](rng)
    word = words[(i // len(forms) + i) % len(words)]
    return style, number, rng.choice([f"{word} {number}", f"{word}: {number}", f"{word} - {number}"]), False


NANP_AREAS = ["201", "202", "212", "213", "305", "312", "347", "404", "415", "469", "503", "512", "602", "617",
              "646", "702", "713", "718", "773", "786", "818", "917", "206", "303", "416", "437", "514", "604",
              "613", "647", "778", "905"]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """Area code, exchange (2-9, not N11, not 555) and line of a NANP number."""
    while True:
        exchange = str(rng.randint(2, 9)) + digits(rng, 2)
        if exchange[1:] != "11" and exchange != "555":
            return rng.choice(NANP_AREAS), exchange, digits(rng, 4)


US_FORMS = [lambda r: ("paren", "({}) {}-{}".format(*_nanp(r))),
            lambda r: ("dash", "{}-{}-{}".format(*_nanp(r))), lambda r: ("dot", "{}.{}.{}".format(*_nanp(r))),
            lambda r: ("e164", "+1{}{}{}".format(*_nanp(r))), lambda r: ("intl", "+1 {} {} {}".format(*_nanp(r))),
            lambda r: ("one_dash", "1-{}-{}-{}".format(*_nanp(r)))]
US_WORDS = ["Phone", "Mobile", "Cell", "Call me at", "Text me at", "phone_number", "SMS opt-in number",
            "Teléfono", "Cellulaire", "Best number to reach me"]


def _uk_mobile(r: random.Random) -> str:
    while True:
        n = "7" + r.choice("123457 89".replace(" ", "")) + digits(r, 8)
        if not n.startswith("7700900"):
            return n


def _uk_geo(r: random.Random) -> tuple[str, str]:
    """Area code and number (Ofcom plan), outside the ranges Ofcom keeps for drama (020 7946 0, 01x1 496 0)."""
    while True:
        area = r.choice(["20", "161", "121", "113", "141", "131", "117"])
        n = r.choice("378") + digits(r, 7) if area == "20" else r.choice("2345789") + digits(r, 6)
        if not n.startswith(("79460", "4960")):
            return area, n


UK_FORMS = [lambda r: ("mobile", (lambda n: f"0{n[:4]} {n[4:]}")(_uk_mobile(r))),
            lambda r: ("mobile_intl", (lambda n: f"+44 {n[:4]} {n[4:]}")(_uk_mobile(r))),
            lambda r: ("mobile_e164", "+44" + _uk_mobile(r)),
            lambda r: ("geo", (lambda a, n: f"0{a} {n[:len(n) - 4]} {n[-4:]}")(*_uk_geo(r))),
            lambda r: ("geo_intl", (lambda a, n: f"+44 (0){a} {n[:len(n) - 4]} {n[-4:]}")(*_uk_geo(r)))]
UK_WORDS = ["Mobile", "Mob", "Tel", "Phone", "Ring me on", "Direct line", "Contact number", "WhatsApp"]


def _fr_number(r: random.Random) -> str:
    """Nine digits after the trunk 0 (ARCEP plan), outside the ranges ARCEP keeps for fiction."""
    while True:
        n = r.choice(["6", "7", "1", "2", "3", "4", "5", "9"])
        n += r.choice("3456789") if n == "7" else str(r.randint(1, 9))
        n += digits(r, 7)
        if n[:5] not in ("19900", "26191", "35301", "46571", "53649", "63998", "97742"):
            return n


FR_FORMS = [lambda r: ("pairs", (lambda n: "0" + n[0] + " " + group(n[1:], 2, " "))(_fr_number(r))),
            lambda r: ("dots", (lambda n: "0" + n[0] + "." + group(n[1:], 2, "."))(_fr_number(r))),
            lambda r: ("compact", "0" + _fr_number(r)),
            lambda r: ("intl", (lambda n: "+33 " + n[0] + " " + group(n[1:], 2, " "))(_fr_number(r))),
            lambda r: ("intl_trunk", (lambda n: "+33 (0)" + n[0] + " " + group(n[1:], 2, " "))(_fr_number(r))),
            lambda r: ("e164", "+33" + _fr_number(r))]
FR_WORDS = ["Tél.", "Téléphone", "Portable", "Mobile", "Rappelez-moi au", "N° de téléphone", "Joignable au"]


def _de_number(r: random.Random) -> tuple[str, str]:
    """Prefix without the trunk 0 and subscriber number (BNetzA plan): mobile 015x/016x/017x or a city."""
    prefix = r.choice(["151", "152", "157", "159", "160", "162", "163", "170", "171", "172", "173", "174", "175",
                       "176", "177", "178", "179", "30", "89", "40", "69", "221", "211", "711"])
    length = {"30": 8, "40": 8, "69": 8, "89": 8, "221": 7, "211": 7, "711": 7}.get(prefix, 8 if prefix[1] == "5"
                                                                                    else r.choice([7, 8]))
    return prefix, str(r.randint(2, 9)) + digits(r, length - 1)


DE_FORMS = [lambda r: ("space", "0{} {}".format(*_de_number(r))), lambda r: ("slash", "0{}/{}".format(*_de_number(r))),
            lambda r: ("dash", "0{}-{}".format(*_de_number(r))), lambda r: ("intl", "+49 {} {}".format(*_de_number(r))),
            lambda r: ("intl_trunk", "+49 (0){} {}".format(*_de_number(r))),
            lambda r: ("paren", "(0{}) {}".format(*_de_number(r)))]
DE_WORDS = ["Telefon", "Tel.", "Handy", "Mobil", "Rückrufnummer", "Telefonnummer", "Erreichbar unter"]


def _in_mobile(r: random.Random) -> str:
    return r.choice("6789") + digits(r, 9)


IN_FORMS = [lambda r: ("split", (lambda n: f"{n[:5]} {n[5:]}")(_in_mobile(r))),
            lambda r: ("intl", (lambda n: f"+91 {n[:5]} {n[5:]}")(_in_mobile(r))),
            lambda r: ("intl_dash", "+91-" + _in_mobile(r)),
            lambda r: ("trunk", "0" + _in_mobile(r)),
            lambda r: ("landline", r.choice(["011-2", "022-2", "080-4", "044-2"]) + digits(r, 7)),
            lambda r: ("landline_space", r.choice(["011 2", "022 6", "080 4", "033 2"]) + digits(r, 3) + " "
                       + digits(r, 4))]
IN_WORDS = ["Mobile No.", "मोबाइल नंबर", "फ़ोन", "संपर्क करें", "WhatsApp", "Contact", "भ्रमणध्वनी", "கைபேசி",
            "মোবাইল"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, US_FORMS, US_WORDS)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, UK_FORMS, UK_WORDS)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, FR_FORMS, FR_WORDS)


def v_phone_de(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, DE_FORMS, DE_WORDS)


def v_phone_in(rng: random.Random, i: int) -> Value:
    return phone_case(rng, i, IN_FORMS, IN_WORDS)


def ssn_value(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but not 666, group 01-99, serial 0001-9999 (SSA); never the numbers the SSA lists as
    misused in advertising (078-05-1120, 219-09-9999, 123-45-6789)."""
    while True:
        parts = f"{rng.randint(1, 899):03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
        if parts[0] != "666" and "".join(parts) not in ("078051120", "219099999", "123456789"):
            return parts


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_value(rng)
    styles = [
        ("dashed", f"{a}-{g}-{s}", "SSN: {}"),
        ("w9", f"{a} {g} {s}", "Form W-9, Part I, Social security number: {}"),
        ("compact", f"{a}{g}{s}", "ssn={}"),
        ("payout", f"{a}-{g}-{s}", "Influencer payout onboarding (1099-NEC): TIN (SSN) {}"),
        ("spanish", f"{a}-{g}-{s}", "Número de Seguro Social: {}"),
        ("affiliate", f"{a}-{g}-{s}", "Affiliate tax form received — Social Security No. {} — approve payout"),
    ]
    style, secret, fmt = styles[i % len(styles)]
    return style, secret, fmt.format(secret), False


CARD_IINS = {"visa": (["4"], 16), "mastercard": ([str(n) for n in range(51, 56)], 16),
             "mastercard_2": ([str(n) for n in range(2221, 2721)], 16), "amex": (["34", "37"], 15),
             "discover": (["6011", "644", "645", "646", "647", "648", "649", "65"], 16),
             "jcb": ([str(n) for n in range(3528, 3590)], 16), "diners": (["36"], 14), "unionpay": (["62"], 16)}
TEST_CARDS = frozenset({"4242424242424242", "4111111111111111", "5555555555554444", "378282246310005",
                        "6011111111111117", "3530111333300000", "4000056655665556", "5105105105105100"})


def card_number(rng: random.Random, brand: str) -> str:
    """A number in the brand's IIN range with its Luhn digit, never a published test number."""
    prefixes, length = CARD_IINS[brand]
    while True:
        partial = rng.choice(prefixes)
        partial += digits(rng, length - 1 - len(partial))
        number = partial + luhn_digit(partial)
        if number not in TEST_CARDS:
            return number


def v_card(rng: random.Random, i: int) -> Value:
    brand = list(CARD_IINS)[i % len(CARD_IINS)]
    number, lang = card_number(rng, brand), lang_of(i)
    exp = f"{rng.randint(1, 12):02d}/{rng.randint(26, 31)}"
    printed = [group_card(number, " "), group_card(number, "-"), number][(i // 8) % 3]
    styles = [
        ("lang_label", labelled(lang, lang.card, printed)),
        ("ad_billing", f"Meta ads billing: card {printed} exp {exp} — the old one was declined"),
        ("lead_form_leak", f"message=please charge {printed} {exp} for the starter plan"),
        ("agency_card", f"Agency card for Google Ads top-ups: {printed}, exp. {exp}"),
    ]
    style, snip = styles[i % len(styles)]
    return f"{brand}_{style}", printed, snip, False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n2n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n",
                   "IE": "4a6n8n", "SE": "3n16n1n", "DK": "4n9n1n", "FI": "3n11n"}
IBAN_WORDS = {"DE": "IBAN", "FR": "IBAN (RIB)", "GB": "IBAN", "ES": "IBAN / cuenta", "IT": "IBAN del conto",
              "NL": "Rekeningnummer (IBAN)", "BE": "IBAN-rekening", "AT": "IBAN", "CH": "IBAN",
              "PL": "Numer konta IBAN", "PT": "IBAN para transferência", "IE": "IBAN", "SE": "IBAN-nummer",
              "DK": "IBAN-kontonummer", "FI": "Tilinumero (IBAN)"}


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    body = bban(rng, IBAN_STRUCTURES[country])
    iban = country + iban_check(country, body) + body
    printed = group(iban, 4, " ") if i % 2 else iban
    snip = rng.choice([f"{IBAN_WORDS[country]}: {printed}",
                       f"Affiliate payout (SEPA) to {printed}, ref. commission {rng.randint(2024, 2025)}-Q2",
                       f"Influencer invoice — bank details: {printed} / BIC {pick(rng, UPPER, 4)}{country}2X"])
    return f"{country.lower()}", printed, snip, False


# ---- target kinds: tokens, keys and seeds the domain holds ------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A signed JWT (RFC 7519): HS256 with a 32-byte MAC or ES256 with a 64-byte signature."""
    alg = rng.choice(["HS256", "ES256"])
    header = b64url(json.dumps({"alg": alg, "typ": "JWT"}, separators=(",", ":")).encode())
    now = rng.randint(1_700_000_000, 1_730_000_000)
    claims = {"sub": _uuid(rng), "aud": rng.choice(["braze-sdk", "iterable", "portal.northwind.io"]),
              "iat": now, "exp": now + 3600}
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    return f"{header}.{payload}.{b64url(rng.randbytes(32 if alg == 'HS256' else 64))}"


def v_jwt(rng: random.Random, i: int) -> Value:
    token = jwt_value(rng)
    styles = [("bearer", f"Authorization: Bearer {token}"),
              ("magic_link", f"https://portal.northwind.io/preferences?token={token}&utm_source=email"),
              ("braze_sdk", f'braze.changeUser("cust-{digits(rng, 6)}", "{token}")'),
              ("cookie", f"Cookie: id_token={token}; _gcl_au=1.1.{digits(rng, 10)}.{digits(rng, 10)}"),
              ("bare", token)]
    style, snip = styles[i % len(styles)]
    return style, token, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    forms = [("basic_mailgun", base64.b64encode(f"api:{pick(rng, HEX, 32)}-{pick(rng, HEX, 8)}-{pick(rng, HEX, 8)}"
                                                .encode()).decode(), "Authorization: Basic {}"),
             ("basic_twilio", base64.b64encode(f"AC{pick(rng, HEX, 32)}:{pick(rng, HEX, 32)}".encode()).decode(),
              "curl -H 'Authorization: Basic {}' https://api.twilio.com/2010-04-01/Accounts.json"),
             ("bearer_linkedin", "AQ" + pick(rng, URLSAFE, rng.randint(300, 340)),
              "Authorization: Bearer {}\nLinkedIn-Version: 202405"),
             ("tiktok_access_token", pick(rng, HEX, 40), "Access-Token: {}"),
             ("bearer_opaque", pick(rng, ALNUM, 48), "-H \"Authorization: Bearer {}\"")]
    style, secret, fmt = forms[i % len(forms)]
    return style, secret, fmt.format(secret), False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    forms = [("express", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, ALNUM + '%', 43)}", "connect.sid"),
             ("php", pick(rng, LOWNUM, 26), "PHPSESSID"), ("jsession", pick(rng, HEX.upper(), 32), "JSESSIONID"),
             ("django", pick(rng, LOWNUM, 32), "sessionid"), ("rails", pick(rng, HEX, 32), "_session_id"),
             ("laravel", "eyJpdiI6" + pick(rng, ALNUM, 180) + "%3D%3D", "laravel_session"),
             ("wordpress", f"growth-ops%7C{rng.randint(1_700_000_000, 1_730_000_000)}%7C{pick(rng, ALNUM, 43)}"
                           f"%7C{pick(rng, HEX, 64)}", f"wordpress_logged_in_{pick(rng, HEX, 32)}")]
    style, value, name = forms[i % len(forms)]
    snip = rng.choice([f"Cookie: {name}={value}; _ga=GA1.1.{digits(rng, 9)}.{digits(rng, 10)}",
                       f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure; SameSite=Lax",
                       f"document.cookie: {name}={value}"])
    return style, value, snip, False


def _pem(pem: str) -> tuple[str, str]:
    """(the whole PEM, its base64 body without the armour lines)."""
    lines = pem.strip().split("\n")
    return pem, "\n".join(lines[1:-1])


def private_key_pem(rng: random.Random, form: str) -> tuple[str, str]:
    """A PEM private key made from the generator's bytes (deterministic): PKCS#8 or SEC1 P-256, PKCS#8 or
    OpenSSH Ed25519."""
    fmt, none = serialization.PrivateFormat, serialization.NoEncryption()
    if form in ("pkcs8_ec", "sec1_ec"):
        key = ec.derive_private_key(rng.randrange(1, 2 ** 255), ec.SECP256R1())
        kind = fmt.PKCS8 if form == "pkcs8_ec" else fmt.TraditionalOpenSSL
        return _pem(key.private_bytes(serialization.Encoding.PEM, kind, none).decode())
    seed = rng.randbytes(32)
    ed = ed25519.Ed25519PrivateKey.from_private_bytes(seed)
    if form == "pkcs8_ed25519":
        return _pem(ed.private_bytes(serialization.Encoding.PEM, fmt.PKCS8, none).decode())
    public = ed.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    blob = base64.b64encode(openssh_ed25519_blob(seed, public, rng.randbytes(4), b"sfmc-import@northwind")).decode()
    return _pem(f"-----BEGIN OPENSSH PRIVATE KEY-----\n{group(blob, 70, chr(10))}\n-----END OPENSSH PRIVATE KEY-----\n")


def v_private_key(rng: random.Random, i: int) -> Value:
    form = ["pkcs8_ec", "sec1_ec", "pkcs8_ed25519", "openssh"][i % 4]
    pem, body = private_key_pem(rng, form)
    if i % 8 == 0:
        escaped = json.dumps(pem)
        snip = (f'{{"type": "service_account", "project_id": "mkt-ads-{pick(rng, LOWNUM, 6)}", '
                f'"private_key_id": "{pick(rng, HEX, 40)}", "private_key": {escaped}}}')
        return f"{form}_sa_json", escaped[1:-1].split("\\n", 1)[1].rsplit("\\n-----END", 1)[0], snip, True
    context = rng.choice(["Apple Search Ads API key (ES256):", "SFTP key for the Marketing Cloud import:",
                          "key file for the ads reporting job:", ""])
    return form, body, f"{context}\n{pem}".strip("\n"), False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = pick(rng, BASE32, 32 if i % 3 else 16)
    tool = rng.choice(["HubSpot", "Meta Business", "Google Ads", "Shopify", "Klaviyo"])
    styles = [("otpauth", f"otpauth://totp/{quote(tool)}:growth-ops?secret={seed}&issuer={quote(tool)}&digits=6"),
              ("setup_key", f"{tool} 2FA setup key: {group(seed.lower(), 4, ' ')}", group(seed.lower(), 4, " ")),
              ("env", f"{tool.upper().replace(' ', '_')}_TOTP_SECRET={seed}"),
              ("vault_note", f"{tool} shared login — one-time password seed: {seed}")]
    style, snip, *written = styles[i % len(styles)]
    return style, written[0] if written else seed, snip, False


def v_recovery_code(rng: random.Random, i: int) -> Value:
    forms = [("github", f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}", "GitHub recovery code for the marketing-site org:"
              " {}"), ("google", f"{digits(rng, 4)} {digits(rng, 4)}", "Google Ads account backup code: {}"),
             ("meta", f"{digits(rng, 4)} {digits(rng, 4)}", "Meta Business recovery code {} (keep one for the agency)"),
             ("shopify", f"{pick(rng, UPNUM, 5)}-{pick(rng, UPNUM, 5)}", "Shopify 2FA recovery code: {}"),
             ("hubspot", pick(rng, LOWNUM, 10), "HubSpot backup code — {}")]
    style, code, fmt = forms[i % len(forms)]
    return style, code, fmt.format(code), False


ProviderSpec = tuple[str, str, Callable[[random.Random], str]]
"""(the env variable, a code or header line with {} for the token, the token maker)."""


def provider(spec: ProviderSpec) -> Callable[[random.Random, int], Value]:
    """A provider token in the contexts an agent meets it: .env, export, YAML, the user's language, code, chat."""
    env, line, make = spec

    def gen(rng: random.Random, i: int) -> Value:
        tok, lang = make(rng), lang_of(i)
        styles = [("env", f"{env}={tok}"), ("export", f'export {env}="{tok}"'),
                  ("yaml", f"{env.lower()}: {tok}"), ("lang_label", labelled(lang, lang.key, tok)),
                  ("code", line.format(tok)), ("chat", f"here's the key for the sync, don't share it: {tok}"),
                  ("bare", tok)]
        style, snip = styles[i % len(styles)]
        return style, tok, snip, False
    return gen


def _stripe_key(r: random.Random) -> str:
    head = r.choice(["sk_live_", "rk_live_", "sk_test_"])
    return head + (pick(r, ALNUM, 24) if r.random() < 0.4 else "51" + pick(r, ALNUM, 97))


def _google_oauth(r: random.Random) -> str:
    return r.choice([lambda: "GOCSPX-" + pick(r, URLSAFE, 28), lambda: "1//0" + pick(r, URLSAFE, 99),
                     lambda: "ya29.a0" + pick(r, URLSAFE, 160)])()


def _openai(r: random.Random) -> str:
    if r.random() < 0.7:
        return "sk-proj-" + pick(r, URLSAFE, 74) + "T3BlbkFJ" + pick(r, URLSAFE, 74)
    return "sk-" + pick(r, ALNUM, 20) + "T3BlbkFJ" + pick(r, ALNUM, 20)


PROVIDERS: dict[str, ProviderSpec] = {
    "sendgrid_key": ("SENDGRID_API_KEY", "sg = SendGridAPIClient('{}')",
                     lambda r: "SG." + pick(r, URLSAFE, 22) + "." + pick(r, URLSAFE, 43)),
    "mailchimp_key": ("MAILCHIMP_API_KEY", "mailchimp.setConfig({{ apiKey: '{}' }})",
                      lambda r: pick(r, HEX, 32) + f"-us{r.randint(1, 21)}"),
    "stripe_secret_key": ("STRIPE_SECRET_KEY", "stripe.api_key = \"{}\"", _stripe_key),
    "slack_token": ("SLACK_BOT_TOKEN", "client = WebClient(token=\"{}\")",
                    lambda r: r.choice([f"xoxb-{digits(r, 12)}-{digits(r, 13)}-{pick(r, ALNUM, 24)}",
                                        f"xoxp-{digits(r, 12)}-{digits(r, 12)}-{digits(r, 13)}-{pick(r, HEX, 32)}"])),
    "google_api_key": ("YOUTUBE_API_KEY", "GET https://www.googleapis.com/youtube/v3/channels?part=statistics"
                       "&forHandle=@northwind&key={}", lambda r: "AIza" + pick(r, URLSAFE, 35)),
    "google_oauth": ("GOOGLE_ADS_OAUTH_CREDENTIAL", "client_secret: {}  # google-ads.yaml", _google_oauth),
    "hubspot_token": ("HUBSPOT_ACCESS_TOKEN", "Authorization: Bearer {}",
                      lambda r: f"pat-{r.choice(['na1', 'eu1'])}-{_uuid(r)}"),
    "shopify_token": ("SHOPIFY_ADMIN_TOKEN", "X-Shopify-Access-Token: {}",
                      lambda r: r.choice(["shpat_", "shpss_", "shpca_"]) + pick(r, HEX, 32)),
    "openai_key": ("OPENAI_API_KEY", "client = OpenAI(api_key=\"{}\")  # ad copy variants", _openai),
    "meta_token": ("META_ACCESS_TOKEN", "GET https://graph.facebook.com/v20.0/me/adaccounts?fields=name&access_token={}",
                   lambda r: "EAA" + r.choice("BGIJ") + pick(r, ALNUM, r.randint(150, 200))),
}


# ---- national ids (outside the target) --------------------------------------------------------------------------

def es_dni(rng: random.Random) -> str:
    """DNI (8 digits) or NIE (X/Y/Z + 7 digits; the letter counts as 0/1/2) and the mod 23 letter."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if rng.random() < 0.7:
        number = digits(rng, 8)
        return number + letters[int(number) % 23]
    head, number = rng.choice("XYZ"), digits(rng, 7)
    return head + number + letters[int(str("XYZ".index(head)) + number) % 23]


def br_cpf(rng: random.Random) -> str:
    """CPF: nine digits and two mod 11 check digits (weights 10..2, then 11..2), printed 000.000.000-00."""
    while True:
        base = digits(rng, 9)
        if len(set(base)) > 1:
            break
    for weight in (10, 11):
        total = sum(int(d) * (weight - k) for k, d in enumerate(base))
        base += str(total * 10 % 11 % 10)
    return f"{base[:3]}.{base[3:6]}.{base[6:9]}-{base[9:]}"


def fr_nir(rng: random.Random) -> str:
    """NIR: sex, year, month, department (not Corsica), commune, order, and key 97 - (number mod 97)."""
    dept = f"{rng.choice([n for n in range(1, 96) if n != 20]):02d}"
    number = (f"{rng.randint(1, 2)}{rng.randint(0, 99):02d}{rng.randint(1, 12):02d}{dept}"
              f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}")
    key = 97 - int(number) % 97
    return f"{number[0]} {number[1:3]} {number[3:5]} {number[5:7]} {number[7:10]} {number[10:13]} {key:02d}"


CF_ODD = dict(zip("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ",
                  [1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 1, 0, 5, 7, 9, 13, 15, 17, 19, 21, 2, 4, 18, 20, 11, 3, 6, 8,
                   12, 14, 16, 10, 22, 25, 24, 23], strict=True))


def it_cf(rng: random.Random) -> str:
    """Codice fiscale: 3+3 consonants, year, month letter, day (+40 for women), Belfiore code, and the control
    letter (odd positions by the decree's table, even by value, sum mod 26)."""
    day = rng.randint(1, 28) + rng.choice([0, 40])
    body = (pick(rng, "BCDFGLMNPRSTVZ", 6) + f"{rng.randint(0, 99):02d}" + rng.choice("ABCDEHLMPRST") + f"{day:02d}"
            + rng.choice(["H501", "F205", "L219", "F839", "G273", "A944", "D612", "L736"]))
    total = 0
    for k, ch in enumerate(body):
        total += CF_ODD[ch] if k % 2 == 0 else (int(ch) if ch.isdigit() else ord(ch) - 65)
    return body + chr(65 + total % 26)


def se_pnr(rng: random.Random) -> str:
    """Personnummer YYMMDD-NNNC, C the Luhn digit of the nine before it."""
    base = f"{rng.randint(40, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    return f"{base[:6]}-{base[6:]}{luhn_digit(base)}"


def fi_hetu(rng: random.Random) -> str:
    """Henkilötunnus DDMMYY, century sign, individual number 002-899, and the mod 31 control character."""
    year = rng.randint(0, 99)
    date = f"{rng.randint(1, 28):02d}{rng.randint(1, 12):02d}{year:02d}"
    number = f"{rng.randint(2, 899):03d}"
    sign = "A" if year <= 6 else "-"
    return date + sign + number + "0123456789ABCDEFHJKLMNPRSTUVWXY"[int(date + number) % 31]


def cn_rid(rng: random.Random) -> str:
    """Resident identity card number: region, birth date, sequence, ISO 7064 MOD 11-2 check character."""
    base = (rng.choice(["110101", "310104", "440305", "330106", "510107", "420106"]) + f"19{rng.randint(60, 99)}"
            + f"{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}" + digits(rng, 3))
    weights = [7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2]
    return base + "10X98765432"[sum(int(d) * w for d, w in zip(base, weights, strict=True)) % 11]


NATIONAL_IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "es_dni": (es_dni, ["DNI/NIE", "Documento de identidad", "NIF para la factura"]),
    "br_cpf": (br_cpf, ["CPF", "CPF do titular", "Informe seu CPF"]),
    "fr_nir": (fr_nir, ["N° de sécurité sociale", "NIR", "Numéro de sécu"]),
    "it_cf": (it_cf, ["Codice fiscale", "C.F.", "Codice fiscale per la fattura"]),
    "se_pnr": (se_pnr, ["Personnummer", "Pers.nr", "Personnummer för utbetalning"]),
    "fi_hetu": (fi_hetu, ["Henkilötunnus", "Hetu", "Henkilötunnus palkkiota varten"]),
    "cn_rid": (cn_rid, ["身份证号", "居民身份证号码", "身份证"]),
}


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    make, words = NATIONAL_IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        word = words[i % len(words)]
        snip = rng.choice([f"{word}: {value}", f"Influencer onboarding — {word} {value}", f"{word} = {value}"])
        return "labelled", value, snip, False
    return gen


# ---- kinds, carrying, generation --------------------------------------------------------------------------------

KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "session_cookie": v_session_cookie, "private_key": v_private_key,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code,
    **{kind: provider(spec) for kind, spec in PROVIDERS.items()},
    **{kind: national_id(kind) for kind in NATIONAL_IDS},
}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """Every third case in a JSON carrier (in turn), the rest in a text carrier the generator picks; a raw-only
    snippet always in text."""
    snip, raw_only = value[2], value[3]
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[(i // 3) % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, i), True
    name = rng.choice(list(TEXT_CARRIERS))
    return name, TEXT_CARRIERS[name](rng, snip, i), False


def generate() -> Iterator[Case]:
    """PER_KIND cases of each kind, deterministic."""
    rng = random.Random(SEED)
    for kind, gen in KINDS.items():
        for i in range(PER_KIND):
            value = gen(rng, i)
            carrier, text, is_json = carry(rng, i, value)
            yield Case(kind, f"{carrier}/{value[0]}", value[1], text, is_json)


# ---- near misses ------------------------------------------------------------------------------------------------

def _luhn_bad(rng: random.Random, length: int = 16) -> str:
    """Digits whose last is not the Luhn digit of the rest."""
    partial = str(rng.randint(1, 9)) + digits(rng, length - 2)
    good = luhn_digit(partial)
    return partial + rng.choice([d for d in string.digits if d != good])


def n_element_ids(rng: random.Random) -> str:
    return rng.choice([f'<div id="hs_cos_wrapper_widget_{digits(rng, 13)}" class="hs_cos_wrapper">',
                       f'<button id="cta-{pick(rng, HEX, 8)}" data-track="hero_cta">Start free trial</button>',
                       f'<input id="email-{pick(rng, LOWNUM, 6)}" name="email" type="email" required>',
                       f'<form id="mktoForm_{rng.randint(1000, 9999)}" class="mktoForm">'])


def n_css_selectors(rng: random.Random) -> str:
    return rng.choice([f"div.lp-section--{pick(rng, LOWER, 5)} > a.cta-button[data-variant='b']",
                       f"#hero-{pick(rng, HEX, 6)} .headline:nth-child({rng.randint(1, 6)})",
                       "form.hs-form input[name='phone'], form.hs-form input[name='password']",
                       f".exit-intent-modal__close[aria-label='Close'] {{ z-index: {rng.randint(100, 9999)}; }}"])


def n_xpath(rng: random.Random) -> str:
    return rng.choice([f"//form[@id='lead-form']/div[{rng.randint(1, 9)}]/input[@name='email']",
                       f"//*[@data-testid='signup-password-{rng.randint(1, 4)}']",
                       f"(//a[contains(@href,'utm_campaign')])[{rng.randint(1, 20)}]",
                       f"//table[@class='report']/tbody/tr[{rng.randint(1, 99)}]/td[{rng.randint(1, 8)}]"])


def n_coordinates(rng: random.Random) -> str:
    return rng.choice([f"heatmap click x={rng.randint(0, 1920)} y={rng.randint(0, 4000)} el=#cta-primary",
                       f"store locator: {rng.uniform(-60, 60):.6f}, {rng.uniform(-120, 150):.6f} (flagship)",
                       f"geo target radius {rng.randint(1, 40)} km around {rng.uniform(40, 55):.4f},"
                       f"{rng.uniform(-5, 20):.4f}"])


def n_creative_sizes(rng: random.Random) -> str:
    w, h = rng.choice([(300, 250), (728, 90), (160, 600), (1080, 1920), (1200, 628), (320, 50), (970, 250)])
    return rng.choice([f"creative {w}x{h} px, max {rng.randint(100, 500)} KB",
                       f"banner_{w}x{h}_v{rng.randint(1, 9)}.png",
                       f"@media (max-width: {rng.choice([480, 768, 1024])}px) {{ .hero {{ height: {h}px }} }}"])


def n_timestamps(rng: random.Random) -> str:
    return rng.choice([f"sent_at {_ts(rng)}", f"event_time {rng.randint(1_700_000_000_000, 1_730_000_000_000)}",
                       f"Scheduled: 2024-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} "
                       f"{rng.randint(0, 23):02d}:{rng.choice(['00', '30'])} CET"])


def n_request_ids(rng: random.Random) -> str:
    return rng.choice([f"X-Request-Id: {_uuid(rng)}", f'"fbtrace_id": "{pick(rng, URLSAFE, 11)}"',
                       f"request-id: {pick(rng, URLSAFE, 22)}", f"X-Amzn-Trace-Id: Root=1-{pick(rng, HEX, 8)}-"
                       f"{pick(rng, HEX, 24)}", f"x-message-id: {pick(rng, URLSAFE, 22)}"])


def n_cache_busting(rng: random.Random) -> str:
    return rng.choice([f'<script src="/assets/main.{pick(rng, HEX, 8)}.js"></script>',
                       f"https://cdn.northwind.io/lp/hero.webp?v={pick(rng, HEX, 10)}",
                       f"styles.{pick(rng, HEX, 20)}.css", f"build {pick(rng, HEX, 40)} deployed to landing"])


def n_field_names(rng: random.Random) -> str:
    return rng.choice(['<input type="hidden" name="csrfmiddlewaretoken">', '<meta name="csrf-token">',
                       f'<input type="password" name="password" id="pw-{rng.randint(1, 9)}" autocomplete='
                       f'"new-password">', "headers: X-CSRF-Token, X-Requested-With",
                       f"fields: [email, phone, company_size, api_key_hint] (form v{rng.randint(2, 9)})"])


def n_merge_tags(rng: random.Random) -> str:
    return rng.choice(["Hi {{ contact.firstname }}, your code is {{ coupon_code }}", "*|EMAIL|* / *|FNAME|*",
                       "%%emailaddr%% unsubscribed at %%xtshortdate%%", "{{${email_address}}}",
                       f"{{{{ person.phone_number | default: '' }}}} (tpl {rng.randint(1, 99)})",
                       "Dear [First Name], reply to [Email]"])


def n_placeholders(rng: random.Random) -> str:
    return rng.choice(["Email: you@example.com", "Password: ********", "STRIPE_SECRET_KEY=<your-secret-key>",
                       "api_key: YOUR_API_KEY_HERE", "SENDGRID_API_KEY=${SENDGRID_API_KEY}",
                       f"phone: +1 (555) 000-000{rng.randint(0, 9)} (placeholder)", "token: <redacted>",
                       "webhook_url: https://hooks.slack.com/services/XXX/YYY/ZZZ"])


def n_masked(rng: random.Random) -> str:
    return rng.choice([f"card ending **** **** **** {digits(rng, 4)}", "j***@g***.com",
                       f"+1 (***) ***-{digits(rng, 4)}",
                       f"IBAN DE** **** **** **** **{digits(rng, 2)} {digits(rng, 2)}",
                       f"SSN ***-**-{digits(rng, 4)}", f"sk_live_...{pick(rng, ALNUM, 4)}"])


def n_versions(rng: random.Random) -> str:
    return rng.choice([f"analytics.js {rng.randint(3, 5)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                       f"google-ads-python {rng.randint(20, 25)}.{rng.randint(0, 3)}.0 (API v{rng.randint(15, 17)})",
                       f"Graph API v{rng.randint(17, 21)}.0",
                       f"braze-web-sdk@{rng.randint(4, 5)}.{rng.randint(0, 9)}.0",
                       f"@segment/analytics-next 1.{rng.randint(50, 75)}.{rng.randint(0, 9)}"])


def n_measurement_ids(rng: random.Random) -> str:
    return rng.choice([f"gtag('config', 'G-{pick(rng, UPNUM, 10)}');", f"GTM-{pick(rng, UPNUM, 7)}",
                       f"UA-{digits(rng, 8)}-{rng.randint(1, 9)}", f"fbq('init', '{_luhn_bad(rng, 15)}');",
                       f"ttq.load('{pick(rng, UPNUM, 20)}');", f"_linkedin_partner_id = \"{digits(rng, 7)}\";"])


def n_service_numbers(rng: random.Random) -> str:
    return rng.choice([f"Customer service (toll-free): 1-800-{rng.randint(200, 999)}-{digits(rng, 4)}",
                       f"Freephone 0800 {digits(rng, 3)} {digits(rng, 4)} (Mon-Fri)",
                       f"Numéro vert : 0 800 {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}",
                       f"Kostenlose Hotline: 0800 {digits(rng, 3)} {digits(rng, 4)}",
                       f"Toll free: 1800-{digits(rng, 3)}-{digits(rng, 4)}"])


def n_luhn_invalid(rng: random.Random) -> str:
    n = _luhn_bad(rng)
    return rng.choice([f"Transaction {n}", f"conversion_id={n}", f"ref {group(n, 4, ' ')} (settlement batch)"])


def n_order_numbers(rng: random.Random) -> str:
    return rng.choice([f"Order #{rng.randint(1001, 99999)}", f"order_id: SHP-{digits(rng, 6)}",
                       f"Invoice INV-2024-{digits(rng, 5)}", f"PO {digits(rng, 4)}-{pick(rng, UPPER, 3)}"])


def n_tracking_numbers(rng: random.Random) -> str:
    return rng.choice([f"UPS 1Z{pick(rng, UPNUM, 6)}{digits(rng, 10)}", f"FedEx {digits(rng, 12)}",
                       f"DHL Express waybill {digits(rng, 10)}", f"USPS {group('9400' + digits(rng, 18), 4, ' ')}",
                       f"PostNL 3S{pick(rng, UPPER, 4)}{digits(rng, 7)}"])


def n_ads_customer_ids(rng: random.Random) -> str:
    cid = f"{digits(rng, 3)}-{digits(rng, 3)}-{digits(rng, 4)}"
    return rng.choice([f"Google Ads customer ID {cid}", f"login-customer-id: {cid.replace('-', '')}",
                       f"MCC {cid} > client {digits(rng, 3)}-{digits(rng, 3)}-{digits(rng, 4)}"])


def n_utm(rng: random.Random) -> str:
    camp = _campaign(rng)
    return rng.choice([f"?utm_source=google&utm_medium=cpc&utm_campaign={camp}&utm_content=ad_{rng.randint(1, 9)}",
                       f"utm_term={rng.choice(['running+shoes', 'crm+software', 'gift+ideas'])}"
                       f"&utm_id={digits(rng, 6)}",
                       f"customers/{digits(rng, 10)}/campaigns/{digits(rng, 11)}"])


def n_aws_examples(rng: random.Random) -> str:
    return rng.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                       f"arn:aws:s3:::creatives-{pick(rng, LOWNUM, 6)}/banners/*",
                       f"arn:aws:iam::{digits(rng, 12)}:role/braze-currents"])


def n_flag_configs(rng: random.Random) -> str:
    return rng.choice([f"flag new-checkout-flow: rollout {rng.randint(1, 100)}%, salt {pick(rng, LOWER, 8)}",
                       f"experiment_id: {_uuid(rng)} variation: treatment_{rng.randint(1, 3)}",
                       f"traffic split {rng.choice(['50/50', '90/10', '34/33/33'])}, seed {rng.randint(1, 10 ** 6)}"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "element_ids": n_element_ids, "css_selectors": n_css_selectors, "xpath": n_xpath, "coordinates": n_coordinates,
    "creative_sizes": n_creative_sizes, "timestamps": n_timestamps, "request_ids": n_request_ids,
    "cache_busting": n_cache_busting, "field_names": n_field_names, "merge_tags": n_merge_tags,
    "placeholders": n_placeholders, "masked_values": n_masked, "versions": n_versions,
    "measurement_ids": n_measurement_ids, "service_numbers": n_service_numbers, "luhn_invalid": n_luhn_invalid,
    "order_numbers": n_order_numbers, "tracking_numbers": n_tracking_numbers,
    "ads_customer_ids": n_ads_customer_ids, "utm_params": n_utm, "aws_doc_examples": n_aws_examples,
    "flag_configs": n_flag_configs,
}


def generate_negatives() -> Iterator[tuple[str, str]]:
    """NEGATIVES_PER_SORT near misses of each sort, as (sort, text), every third inside a JSON carrier."""
    rng = random.Random(SEED + 1)
    for sort, make in NEAR_MISSES.items():
        for i in range(NEGATIVES_PER_SORT):
            text = make(rng)
            if i % 3 == 0:
                name = list(JSON_CARRIERS)[(i // 3 + len(sort)) % len(JSON_CARRIERS)]
                text = JSON_CARRIERS[name](rng, text, i)
            yield sort, text
