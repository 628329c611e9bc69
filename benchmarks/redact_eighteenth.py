"""The eighteenth redaction corpus: voice and messaging agents and the contact-centre and commerce operations
around them, written from the formats' public specifications by someone who had read neither the rules nor the
other corpora.

Carriers: ASR output as engines print it (Deepgram pre-recorded JSON with words and utterances, AWS Transcribe job
JSON, Google Speech-to-Text `recognize` JSON, Whisper SRT, WebVTT and verbose_json, diarised plain text with the
engine's speaker labels, some of them wrong), IVR and voice-bot logs (Amazon Connect contact trace records, Lex V2
session state, Dialogflow CX detectIntent responses, Twilio Studio execution logs, Genesys Cloud transcripts, Five9
call-log CSV), messaging webhooks (WhatsApp Business Cloud API, Twilio Messages resource, Telegram Bot API
updates, LINE Messaging API, WeChat official-account XML, Viber REST callbacks, Google RBM), live chat (Intercom
conversation parts, Zendesk Chat transcripts, Freshchat, LivePerson), helpdesk tickets from calls, CRM activities
(Salesforce Task CSV, HubSpot call engagements, Zoho notes, Pipedrive activities, Dynamics phone calls), LLM call
summaries, QA scorecards, recording metadata, dialler CSV, KYC review queues, order and return chats, reminders and
delivery notices, and integration chats where someone pastes a config. Free text in 30 languages (39 locales).

Formats and their sources. Cards: ISO/IEC 7812 IIN ranges as the networks publish them (Visa 4, Mastercard 51-55
and 2221-2720, Amex 34/37, Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62, RuPay 508/6521) and
the Luhn check (annex B). IBAN: ISO 13616 with the SWIFT IBAN registry's BBAN structures, MOD 97-10 (ISO 7064).
SSN: the SSA's rules (area 001-899 but 666, group 01-99, serial 0001-9999). Phones: the national numbering plans
as the regulators publish them (NANP; Ofcom's UK plan; ARCEP's French plan; BNetzA's German plan; TRAI/DoT's Indian
plan; CNMC Spain, IFT Mexico, Anatel Brazil, AGCOM Italy, ACM Netherlands, UKE Poland, ACMA Australia, NCC Nigeria,
MIC Japan, TDRA UAE, MSIT Korea, BTK Turkey), ITU-T E.164 for international forms. E-mail: RFC 5321/5322 and RFC
6531 for internationalised addresses, RFC 3986 percent-encoding, RFC 8259 `\\u` escapes, HTML numeric references,
RFC 6068 mailto. AWS keys: AWS IAM's documented access key id (AKIA/ASIA + 16 base32) and 40-character secret.
Stripe: `whsec_` signing secrets (dashboard and `stripe listen`), `sk_live_`/`rk_live_` keys. Webhooks: Slack
incoming webhooks and workflow triggers, Discord, Microsoft Teams incoming webhooks and Power Automate/Logic Apps
`sig=` URLs, Google Chat `token=`, Zapier catch hooks, Make, IFTTT Maker, Mattermost and Rocket.Chat hooks, as each
one's documentation prints them. Connection strings: Azure Storage and Service Bus (`AccountKey=`,
`SharedAccessKey=`), ADO.NET, ODBC, JDBC drivers' documented URLs, RFC 3986 userinfo in database and broker URIs.
Twilio: Account SID `AC` + 32 hex and 32-hex Auth Token, Access Tokens (JWT with `cty: twilio-fpa;v=1`). SendGrid
`SG.` keys, Meta Graph `EAA` access tokens, Telegram bot tokens (`<bot id>:AA...`), Slack `xoxb-`/`xoxp-`/
`xapp-`, Shopify `shpat_`/`shpca_`/`shpss_`, Google `AIza` keys, as their docs print them. JWT: RFC 7519/7515.
Private keys: RFC 5915 (SEC1), RFC 5208/5958 (PKCS#8), OpenSSH PROTOCOL.key, Google service-account JSON. HTTP auth:
RFC 7617 Basic, RFC 6750 Bearer, RFC 7616 Digest `response=`, AWS SigV4 `Signature=`. Cookies: RFC 6265 and the
frameworks' session cookie names. National ids (OUTSIDE_TARGET): Aadhaar (UIDAI, Verhoeff), Brazil CPF (mod 11),
Spain DNI/NIE (mod 23 letter), Poland PESEL (weights 1-3-7-9), Turkey T.C. Kimlik (its two check digits).
Spoken forms (`phone_spoken`, `email_spoken`): values as some ASR engines without number formatting print them.

Judgements. A business's published service number (toll-free 1-800/0800/1800, UK 03xx, SMS short codes) names an
organisation, not a person: not personal data, so such numbers are near misses even beside "call". Providers'
published test card numbers (Stripe's 4242 4242 4242 4242, the 4111 1111 1111 1111 family) are printed in public
documentation and open no account: not secrets, so they are near misses too. Masked values (last four, `***`)
and placeholders are near misses. Reset codes of six digits are not planted (too short to judge by 8 characters).
Utterance splits in the middle of a value are not planted: the value would not occur whole in the text.
"""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass

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

PER_KIND = 100
"""Cases written per kind."""

HEX = "0123456789abcdef"
ALNUM = string.ascii_letters + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
B32 = string.ascii_uppercase + "234567"

OUTSIDE_TARGET = frozenset({"aadhaar", "cpf_br", "dni_es", "pesel_pl", "tckn_tr"})
"""National ids with public check digits: printed, not held to the target."""

ISSUE_KINDS = ("password", "aws_secret", "webhook", "stripe_whsec", "connection_string", "labelled_key", "disguised",
               "email", "phone_us_ca", "phone_uk", "phone_fr", "phone_de", "phone_in", "ssn", "card", "iban")
"""The issue's 16 kinds, named as the eighth to seventeenth corpora name them."""


@dataclass(frozen=True)
class Case:
    """One planted value: `secret` is what must not survive; `carried` is what the redactor is given (JSON when
    `is_json`); `text` is the same record; `form` is carrier/style."""

    kind: str
    form: str
    text: str
    secret: str
    carried: str
    is_json: bool


Value = tuple[str, str, str]
"""(style, the value as written in the record, the secret part of it)."""


def J(obj: object) -> str:
    """JSON as the services print it: UTF-8 kept, no spaces after separators beyond the default."""
    return json.dumps(obj, ensure_ascii=False)


def uid(rng: random.Random) -> str:
    """A random UUID (v4 layout) drawn from `rng`."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def clock(rng: random.Random) -> str:
    """An hh:mm:ss offset into a call."""
    return f"{rng.randint(0, 1):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}"


def stamp(rng: random.Random) -> str:
    """An ISO 8601 UTC timestamp in 2025."""
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


NAMES = ("Maria Lopez", "James O'Connor", "Priya Sharma", "Chinedu Okafor", "Sophie Martin", "Jonas Becker",
         "Ana Souza", "Giulia Rossi", "Pieter de Vries", "Kasia Nowak", "Erik Lindqvist", "Aiko Tanaka",
         "Minji Park", "Wei Zhang", "Nguyen Van An", "Ahmed Al-Mansouri", "Noa Cohen", "Arjun Reddy",
         "Olena Shevchenko", "Mehmet Yilmaz", "Siti Rahma", "Juan dela Cruz", "Amina Njeri", "Tunde Adeyemi")
"""Callers' and customers' names (not planted values)."""


# ---- carriers: each takes a line of speech or chat (with the value in it) and prints the record ---------------

def words(rng: random.Random, line: str) -> list[tuple[str, float, float, float]]:
    """The line's words with start, end and confidence, as word-level ASR output holds them."""
    out, t = [], round(rng.uniform(3, 400), 2)
    for w in line.split():
        d = round(rng.uniform(0.12, 0.6), 2)
        out.append((w, t, round(t + d, 2), round(rng.uniform(0.62, 0.999), 3)))
        t = round(t + d + 0.04, 2)
    return out


def deepgram(rng: random.Random, line: str, lang: str) -> str:
    """Deepgram /v1/listen (smart_format, diarize, utterances) response."""
    ws = [{"word": w.lower().strip(".,?!"), "start": s, "end": e, "confidence": c, "speaker": 1,
           "speaker_confidence": 0.71, "punctuated_word": w} for w, s, e, c in words(rng, line)]
    alt = {"transcript": line, "confidence": round(rng.uniform(0.8, 0.99), 5), "words": ws}
    return J({"metadata": {"request_id": uid(rng), "duration": round(rng.uniform(60, 900), 3), "channels": 1,
                           "models": [uid(rng)], "model_info": {"name": "2-general-nova", "version": "2024-01-09"}},
              "results": {"channels": [{"alternatives": [alt], "detected_language": lang[:2]}],
                          "utterances": [{"start": ws[0]["start"], "end": ws[-1]["end"], "speaker": 1,
                                          "channel": 0, "transcript": line, "id": uid(rng)}]}})


def transcribe(rng: random.Random, line: str, lang: str) -> str:
    """AWS Transcribe (call analytics off) job output JSON."""
    items = [{"start_time": f"{s:.3f}", "end_time": f"{e:.3f}", "alternatives": [{"confidence": f"{c:.4f}",
              "content": w.strip(".,?!")}], "type": "pronunciation", "speaker_label": "spk_1"}
             for w, s, e, c in words(rng, line)]
    return J({"jobName": f"connect-{uid(rng)}", "accountId": digits(rng, 12), "status": "COMPLETED",
              "results": {"transcripts": [{"transcript": line}], "speaker_labels": {"speakers": 2},
                          "items": items}})



def whisper_srt(rng: random.Random, line: str, lang: str) -> str:
    """Whisper's SRT output, one cue."""
    a = rng.randint(5, 900)
    return (f"{rng.randint(2, 140)}\n00:{a // 60:02d}:{a % 60:02d},{rng.randint(0, 999):03d} --> "
            f"00:{(a + 6) // 60:02d}:{(a + 6) % 60:02d},{rng.randint(0, 999):03d}\n{line}\n")


def whisper_vtt(rng: random.Random, line: str, lang: str) -> str:
    """WebVTT with a voice span, as diarising Whisper wrappers write it."""
    a = rng.randint(5, 900)
    return (f"WEBVTT\nKind: captions\nLanguage: {lang[:2]}\n\n00:{a // 60:02d}:{a % 60:02d}.{rng.randint(0, 999):03d}"
            f" --> 00:{(a + 5) // 60:02d}:{(a + 5) % 60:02d}.000\n<v Caller>{line}</v>\n")


def whisper_json(rng: random.Random, line: str, lang: str) -> str:
    """OpenAI Whisper verbose_json."""
    s = round(rng.uniform(1, 500), 2)
    return J({"task": "transcribe", "language": lang, "duration": round(s + 30, 2), "text": f" {line}",
              "segments": [{"id": rng.randint(0, 80), "seek": 0, "start": s, "end": round(s + 4.8, 2),
                            "text": f" {line}", "temperature": 0.0, "avg_logprob": -round(rng.uniform(0.1, 0.5), 4),
                            "compression_ratio": 1.31, "no_speech_prob": round(rng.uniform(0, 0.05), 4)}]})


def diarised(rng: random.Random, line: str, lang: str) -> str:
    """Plain diarised text; the engine gives the caller's line to the agent's label now and then."""
    who = rng.choice(("Speaker 0", "Speaker 1", "AGENT", "CUSTOMER", "spk_0", "Caller"))
    return f"[{clock(rng)}] AGENT: Thanks, go ahead.\n[{clock(rng)}] {who}: {line}\n[{clock(rng)}] AGENT: Got it."







def five9_csv(rng: random.Random, line: str, lang: str) -> str:
    """Five9 call log report export."""
    note = line.replace('"', '""')
    return (f"CALL ID,TIMESTAMP,CAMPAIGN,AGENT NAME,DISPOSITION,NOTES\n{digits(rng, 18)},"
            f"\"{stamp(rng)}\",Inbound_Support,{rng.choice(NAMES)},Resolved,\"{note}\"\n")


def whatsapp(rng: random.Random, line: str, lang: str) -> str:
    """WhatsApp Business Cloud API messages webhook."""
    wa = "1" + digits(rng, 10)
    return J({"object": "whatsapp_business_account", "entry": [{"id": digits(rng, 15), "changes": [{"field":
              "messages", "value": {"messaging_product": "whatsapp", "metadata": {"phone_number_id":
              digits(rng, 15)}, "contacts": [{"profile": {"name": rng.choice(NAMES)}, "wa_id": wa}],
              "messages": [{"from": wa, "id": f"wamid.{pick(rng, ALNUM, 40)}", "timestamp": digits(rng, 10),
                            "type": "text", "text": {"body": line}}]}}]}]})



def telegram(rng: random.Random, line: str, lang: str) -> str:
    """Telegram Bot API Update."""
    user = {"id": rng.randint(10 ** 8, 10 ** 10), "is_bot": False, "first_name": rng.choice(NAMES).split()[0],
            "language_code": lang[:2]}
    return J({"update_id": rng.randint(10 ** 8, 10 ** 9), "message": {"message_id": rng.randint(1, 9999),
              "from": user, "chat": {"id": user["id"], "type": "private"}, "date": rng.randint(17 * 10 ** 8,
              18 * 10 ** 8), "text": line}})










def ticket(rng: random.Random, line: str, lang: str) -> str:
    """A helpdesk ticket created from a call, as the agent's e-mail notification prints it."""
    minutes, seconds = rng.randint(1, 9), rng.randint(10, 59)
    return (f"Ticket #{rng.randint(100000, 999999)} — Inbound call\nVia: Voice (inbound), duration 0{minutes}:"
            f"{seconds}\nPriority: normal\n\nDescription:\n{line}\n")


def salesforce_csv(rng: random.Random, line: str, lang: str) -> str:
    """Salesforce Task export (Data Loader CSV)."""
    desc = line.replace('"', '""')
    return (f"\"ID\",\"SUBJECT\",\"DESCRIPTION\",\"WHOID\",\"ACTIVITYDATE\",\"CALLTYPE\"\n\"00T{pick(rng, ALNUM, 15)}"
            f"\",\"Call\",\"{desc}\",\"003{pick(rng, ALNUM, 15)}\",\"2025-0{rng.randint(1, 9)}-12\",\"Inbound\"\n")









def dialler_csv(rng: random.Random, line: str, lang: str) -> str:
    """An outbound dialler campaign export with the agent's notes."""
    note = line.replace('"', '""')
    return (f"campaign_id;list_id;lead_id;first_name;status;last_disposition;notes\nCMP-{digits(rng, 4)};"
            f"L{digits(rng, 3)};{digits(rng, 7)};{rng.choice(NAMES).split()[0]};CALLBK;Callback;\"{note}\"\n")






Frame = Callable[[random.Random, str, str], str]

FRAMES: dict[str, tuple[Frame, bool, str]] = {
    "deepgram": (deepgram, True, "voice"),
    "transcribe": (transcribe, True, "voice"),
    # Google Cloud Speech-to-Text v1 `recognize` response
    "google_stt": (lambda r, t, lang: J({"results": [{"alternatives": [{"transcript": t, "confidence": round(
        r.uniform(0.7, 0.98), 8)}], "resultEndTime": f"{r.uniform(2, 90):.3f}s", "languageCode": lang.lower()}],
        "totalBilledTime": f"{r.randint(15, 600)}s", "requestId": str(r.getrandbits(62))}), True, "voice"),
    "whisper_srt": (whisper_srt, False, "voice"),
    "whisper_vtt": (whisper_vtt, False, "voice"),
    "whisper_json": (whisper_json, True, "voice"),
    "diarised": (diarised, False, "voice"),
    # Amazon Connect contact trace record, the Lex transcript kept as a contact attribute
    "connect_ctr": (lambda r, t, lang: J({"AWSAccountId": digits(r, 12), "Channel": "VOICE", "ContactId": uid(r),
        "InitiationMethod": "INBOUND", "InitiationTimestamp": stamp(r), "Queue": {"Name": "BasicQueue", "Duration":
        r.randint(3, 300)}, "Attributes": {"lexInputTranscript": t, "intentName": "AccountHelp"}}), True, "voice"),
    # Lex V2 RecognizeText response
    "lex": (lambda r, t, lang: J({"sessionState": {"dialogAction": {"type": "ElicitSlot", "slotToElicit": "Detail"},
        "intent": {"name": "UpdateAccount", "slots": {"Detail": {"value": {"originalValue": t, "interpretedValue":
        t}}}}}, "interpretations": [{"nluConfidence": {"score": round(r.uniform(0.5, 1), 2)}}], "sessionId": uid(r),
        "inputTranscript": t}), True, "voice"),
    # Dialogflow CX detectIntent response
    "dialogflow_cx": (lambda r, t, lang: J({"responseId": uid(r), "queryResult": {"text": t, "languageCode":
        lang.lower(), "parameters": {"detail": t}, "match": {"confidence": round(r.uniform(0.3, 1), 4), "matchType":
        "PARAMETER_FILLING"}, "currentPage": {"displayName": "Collect details"}}}), True, "voice"),
    # Twilio Studio execution step, as the console's log view copies it
    "studio_log": (lambda r, t, lang: f"{stamp(r)} FW{pick(r, HEX, 32)} FN{pick(r, HEX, 32)} widget=gather_details "
                   f"event=audioComplete SpeechResult=\"{t}\" Confidence=0.{digits(r, 6)}", False, "voice"),
    # Genesys Cloud speech-and-text analytics transcript
    "genesys": (lambda r, t, lang: J({"conversationId": uid(r), "mediaType": "call", "transcripts": [{"language": lang,
        "phrases": [{"text": t, "startTimeMs": r.randint(10 ** 12, 2 * 10 ** 12), "participantPurpose":
        "external"}]}]}), True, "voice"),
    "five9_csv": (five9_csv, False, "paste"),
    "whatsapp": (whatsapp, True, "paste"),
    # Twilio Messages resource (GET /Messages/SM....json)
    "twilio_sms": (lambda r, t, lang: J({"sid": f"SM{pick(r, HEX, 32)}", "account_sid": f"AC{pick(r, HEX, 32)}",
        "body": t, "direction": "inbound", "status": "received", "num_segments": "1", "date_sent": stamp(r),
        "api_version": "2010-04-01"}), True, "paste"),
    "telegram": (telegram, True, "paste"),
    # LINE Messaging API webhook event
    "line": (lambda r, t, lang: J({"destination": "U" + pick(r, HEX, 32), "events": [{"type": "message", "message":
        {"type": "text", "id": digits(r, 18), "text": t}, "source": {"type": "user", "userId": "U" +
        pick(r, HEX, 32)}, "replyToken": pick(r, HEX, 32)}]}), True, "paste"),
    # WeChat official account text message push
    "wechat_xml": (lambda r, t, lang: f"<xml><ToUserName><![CDATA[gh_{pick(r, HEX, 12)}]]></ToUserName><FromUserName>"
                   f"<![CDATA[o{pick(r, URLSAFE, 27)}]]></FromUserName><CreateTime>{digits(r, 10)}</CreateTime>"
                   f"<MsgType><![CDATA[text]]></MsgType><Content><![CDATA[{t}]]></Content><MsgId>{digits(r, 19)}"
                   "</MsgId></xml>", False, "paste"),
    # Viber REST bot API message callback
    "viber": (lambda r, t, lang: J({"event": "message", "timestamp": r.randint(10 ** 12, 2 * 10 ** 12), "sender":
        {"id": pick(r, B64, 22) + "==", "name": r.choice(NAMES), "language": lang[:2]}, "message": {"type": "text",
        "text": t}}), True, "paste"),
    # Google RCS Business Messaging user message
    "rbm": (lambda r, t, lang: J({"agentId": f"support_{pick(r, 'abcdefghij', 8)}_agent@rbm.goog", "messageId":
        uid(r), "sendTime": stamp(r), "text": t}), True, "typed"),
    # Intercom conversation part (REST API)
    "intercom": (lambda r, t, lang: J({"type": "conversation_part", "id": digits(r, 11), "part_type": "comment",
        "body": f"<p>{t}</p>", "author": {"type": "user", "id": pick(r, HEX, 24)}}), True, "paste"),
    # Zendesk Chat transcript as it lands in the ticket
    "zendesk_chat": (lambda r, t, lang: f"Chat started: 2025-0{r.randint(1, 9)}-1{r.randint(0, 9)} 08:14 PM UTC\n\n"
                     f"(08:14:{r.randint(10, 59)} PM) Visitor {digits(r, 7)}: {t}\n(08:15:02 PM) "
                     f"{r.choice(NAMES)}: Thank you, one moment please.", False, "paste"),
    # Freshchat message_create webhook
    "freshchat": (lambda r, t, lang: J({"action": "message_create", "actor": {"actor_type": "user"}, "data":
        {"message": {"message_parts": [{"text": {"content": t}}], "conversation_id": uid(r), "created_time":
        stamp(r)}}}), True, "paste"),
    # LivePerson Messaging Interactions API record
    "liveperson": (lambda r, t, lang: J({"info": {"conversationId": uid(r), "brandId": digits(r, 8)},
        "messageRecords": [{"type": "TEXT_PLAIN", "messageData": {"msg": {"text": t}}, "sentBy": "Consumer",
        "timeL": r.randint(10 ** 12, 2 * 10 ** 12)}]}), True, "paste"),
    "ticket": (ticket, False, "paste"),
    "salesforce_csv": (salesforce_csv, False, "paste"),
    # HubSpot CRM v3 call object
    "hubspot": (lambda r, t, lang: J({"id": digits(r, 11), "properties": {"hs_call_title": "Inbound call",
        "hs_call_body": f"<p>{t}</p>", "hs_call_duration": str(r.randint(10, 900) * 1000), "hs_timestamp":
        stamp(r)}}), True, "typed"),
    # Zoho CRM note as the UI copies it
    "zoho_note": (lambda r, t, lang: f"Note_Title: Call follow-up\nParent_Id: Contacts/{digits(r, 19)}\n"
                  f"Created_Time: {stamp(r)}\nNote_Content: {t}", False, "paste"),
    # Pipedrive activity (API v1)
    "pipedrive": (lambda r, t, lang: J({"success": True, "data": {"id": r.randint(1000, 99999), "type": "call",
        "subject": "Callback", "done": True, "note": t, "person_id": r.randint(100, 9999)}}), True, "paste"),
    # Dynamics 365 phonecall activity (Web API)
    "dynamics": (lambda r, t, lang: J({"@odata.etag": f"W/\"{digits(r, 7)}\"", "activityid": uid(r), "subject":
        "Phone Call", "description": t, "actualdurationminutes": r.randint(1, 40)}), True, "paste"),
    # a call summary an LLM summariser writes into the CRM
    "llm_summary": (lambda r, t, lang: "## Call summary (auto-generated)\n**Intent:** account access\n**Key details:**"
                    f"\n- {t}\n- Sentiment: {r.choice(('neutral', 'frustrated'))}\n**Next step:** agent to follow up.",
                    False, "typed"),
    # a QA scorecard row flagging what the agent read back
    "qa_card": (lambda r, t, lang: f"QA Scorecard | Evaluator: {r.choice(NAMES)} | Score {r.randint(40, 99)}/100\n"
                f"Compliance (PCI/PII read-back): FAIL — transcript at {clock(r)}: \"{t}\"", False, "typed"),
    # call-recording metadata sidecar kept beside the audio
    "recording_meta": (lambda r, t, lang: J({"RecordingSid": f"RE{pick(r, HEX, 32)}", "CallSid":
        f"CA{pick(r, HEX, 32)}", "Duration": str(r.randint(20, 1800)), "Source": "DialVerb", "annotation":
        {"comment": t}}), True, "typed"),
    "dialler_csv": (dialler_csv, False, "typed"),
    # a fraud/KYC review queue item
    "kyc_queue": (lambda r, t, lang: f"Case KYC-{digits(r, 6)} | Risk score {r.randint(10, 99)} | Status: pending "
                  f"review\nReviewer note: customer stated on the call: {t}", False, "typed"),
    # an e-commerce order/return conversation in the store's inbox
    "order_chat": (lambda r, t, lang: f"Order #{r.randint(1000, 99999)} · Return request RMA-{digits(r, 6)}\n"
                   f"{r.choice(NAMES)} ({clock(r)}): {t}\nStore (auto-reply): We received your message.", False,
                   "typed"),
    # an appointment reminder SMS and the customer's reply
    "reminder_sms": (lambda r, t, lang: f"[SMS out] Reminder: your appointment on {r.randint(1, 28)}/0{r.randint(1, 9)}"
                     f" at {r.randint(8, 17)}:30. Reply C to confirm or R to reschedule.\n[SMS in] {t}", False,
                     "typed"),
    # a delivery notification and the reply the carrier's bot logged
    "delivery_notice": (lambda r, t, lang: f"Your parcel {pick(r, string.ascii_uppercase, 2)}{digits(r, 9)}GB is "
                        f"out for delivery today, {r.randint(8, 12)}:00-{r.randint(13, 18)}:00. Reply with "
                        f"instructions.\nCustomer reply: {t}", False, "typed"),
    # Genesys/Five9 wrap-up notes field
    "agent_notes": (lambda r, t, lang: f"Wrap-up code: {r.choice(('ACCT_UPDATE', 'REFUND'))}\nAgent notes: {t}",
                    False, "paste"),
    # an integration set-up chat where someone pastes a config
    "integration_chat": (lambda r, t, lang: f"[{clock(r)[3:]}] {r.choice(NAMES)}: here's what the bot is running "
                         f"with\n```\n{t}\n```\n[{clock(r)[3:]}] {r.choice(NAMES)}: thx, deploying", False, "paste")}
"""Name -> (printer, is_json, what it carries): `voice` carriers print speech, `typed` ones what people type
or say, `paste` ones also what people paste (config lines, env files, commands)."""



# ---- values of the issue's kinds ------------------------------------------------------------------------------

WORDS = ("Maracuja", "Sunflower", "Tiburon", "Kestrel", "Papagaio", "Zitrone", "Ouragan", "Gelsomino", "Wiewior",
         "Hallon", "Mustikka", "Jablko", "Lavanda", "Bahar", "Sakura", "Hanul", "Mango", "Orchid", "Baobab")


def password(rng: random.Random, i: int) -> Value:
    """A password as people and admins choose them: word+digits+symbol, random, passphrase, or a temp one."""
    style = ("word", "random", "phrase", "temp")[i % 4]
    if style == "word":
        v = rng.choice(WORDS) + rng.choice("!#$%*@&?") + digits(rng, rng.randint(2, 4))
    elif style == "random":
        v = pick(rng, ALNUM + "!#%*-_.~^", rng.randint(12, 20))
    elif style == "phrase":
        v = "-".join(rng.choice(WORDS).lower() for _ in range(3)) + digits(rng, 2)
    else:
        v = pick(rng, string.ascii_uppercase, 3) + digits(rng, 3) + pick(rng, string.ascii_lowercase, 3) + "!"
    return style, v, v


def aws_secret(rng: random.Random, i: int) -> Value:
    """An IAM access key id and its 40-character secret (with a / or + in it); the secret is the value."""
    kid = rng.choice(("AKIA", "ASIA")) + pick(rng, B32, 16)
    sec = pick(rng, B64, 40)
    if "/" not in sec and "+" not in sec:
        sec = sec[:17] + rng.choice("/+") + sec[18:]
    return kid[:4].lower(), kid, sec


def webhook(rng: random.Random, i: int) -> Value:
    """A chat or automation webhook URL; the secret is its token-bearing path or query value."""
    style = ("slack", "slack_workflow", "discord", "teams", "power_automate", "google_chat", "zapier", "make",
             "ifttt", "mattermost", "rocketchat")[i % 11]
    team, bot = "T" + pick(rng, B32[:26] + "0123456789", 10), "B" + pick(rng, B32[:26] + "0123456789", 10)
    if style == "slack":
        sec = f"{team}/{bot}/{pick(rng, ALNUM, 24)}"
        return style, f"https://hooks.slack.com/services/{sec}", sec
    if style == "slack_workflow":
        sec = f"{team}/{digits(rng, 13)}/{pick(rng, HEX, 32)}"
        return style, f"https://hooks.slack.com/triggers/{sec}", sec
    if style == "discord":
        sec = f"{digits(rng, 19)}/{pick(rng, URLSAFE, 68)}"
        host = rng.choice(("discord.com", "discordapp.com", "ptb.discord.com"))
        return style, f"https://{host}/api/webhooks/{sec}", sec
    if style == "teams":
        sec = f"{pick(rng, HEX, 32)}/{uid(rng)}"
        return style, (f"https://{rng.choice(('contoso', 'acmeretail', 'helpline'))}.webhook.office.com/webhookb2/"
                       f"{uid(rng)}@{uid(rng)}/IncomingWebhook/{sec}"), sec
    if style == "power_automate":
        sec = pick(rng, URLSAFE, 43)
        return style, (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/"
                       f"{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2F"
                       f"manual%2Frun&sv=1.0&sig={sec}"), sec
    if style == "google_chat":
        sec = pick(rng, URLSAFE, 43) + "%3D"
        return style, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?key=AIzaSy"
                       f"{pick(rng, URLSAFE, 33)}&token={sec}"), sec
    if style == "zapier":
        sec = f"{digits(rng, 7)}/{pick(rng, string.ascii_lowercase + string.digits, 7)}"
        return style, f"https://hooks.zapier.com/hooks/catch/{sec}/", sec
    if style == "make":
        sec = pick(rng, string.ascii_lowercase + string.digits, 32)
        return style, f"https://hook.{rng.choice(('eu1', 'eu2', 'us1'))}.make.com/{sec}", sec
    if style == "ifttt":
        sec = pick(rng, URLSAFE, 22)
        return style, f"https://maker.ifttt.com/trigger/missed_call/with/key/{sec}", sec
    if style == "mattermost":
        sec = pick(rng, string.ascii_lowercase + string.digits, 26)
        return style, f"https://chat.{rng.choice(('acme.io', 'callcenter.example.org'))}/hooks/{sec}", sec
    sec = f"{pick(rng, ALNUM, 17)}/{pick(rng, ALNUM, 48)}"
    return style, f"https://rocket.{rng.choice(('helpdesk.net', 'contactops.io'))}/hooks/{sec}", sec


def stripe_whsec(rng: random.Random, i: int) -> Value:
    """A Stripe webhook signing secret: dashboard (32 base62) or `stripe listen` (64 hex)."""
    v = "whsec_" + (pick(rng, ALNUM, 32) if i % 3 else pick(rng, HEX, 64))
    return ("dashboard" if i % 3 else "cli"), v, v


def connection_string(rng: random.Random, i: int) -> Value:
    """A connection string or URI; the secret is its password or key."""
    style = ("azure_storage", "service_bus", "ado", "odbc", "jdbc_pg", "jdbc_mysql", "jdbc_mssql", "postgres_uri",
             "mongodb_srv", "redis_uri", "amqp_uri", "mysql_uri")[i % 12]
    pw = pick(rng, ALNUM + "!*-_~", rng.randint(12, 22))
    user = rng.choice(("ivr_app", "crm_sync", "connect_lambda", "botsvc", "orders_rw", "qa_reader"))
    host = rng.choice(("db-prod-01.internal", "crm.cluster-c8x2.eu-west-1.rds.amazonaws.com", "10.20.4.17",
                       "sql-contact.database.windows.net", "pg.callcentre.local"))
    if style == "azure_storage":
        key = pick(rng, B64, 86) + "=="
        acct = rng.choice(("callrecordings", "ivrprompts", "chatexports"))
        return style, (f"DefaultEndpointsProtocol=https;AccountName={acct}{digits(rng, 3)};AccountKey={key};"
                       "EndpointSuffix=core.windows.net"), key
    if style == "service_bus":
        key = pick(rng, B64, 43) + "="
        return style, (f"Endpoint=sb://contact-events-{digits(rng, 2)}.servicebus.windows.net/;SharedAccessKeyName="
                       f"RootManageSharedAccessKey;SharedAccessKey={key}"), key
    written = {
        "ado": f"Server=tcp:{host},1433;Initial Catalog=Contacts;User ID={user};Password={pw};Encrypt=True;",
        "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=ivr;Uid={user};Pwd={pw};",
        "jdbc_pg": f"jdbc:postgresql://{host}:5432/crm?user={user}&password={pw}&sslmode=require",
        "jdbc_mysql": f"jdbc:mysql://{host}:3306/orders?user={user}&password={pw}&useSSL=true",
        "jdbc_mssql": f"jdbc:sqlserver://{host}:1433;databaseName=qa;user={user};password={pw};encrypt=true",
        "postgres_uri": f"postgresql://{user}:{pw}@{host}:5432/contacts",
        "mongodb_srv": f"mongodb+srv://{user}:{pw}@chat-cluster.{pick(rng, 'abcdefxyz0123', 5)}.mongodb.net/"
                       "transcripts?retryWrites=true&w=majority",
        "redis_uri": f"redis://default:{pw}@{host}:6379/0",
        "amqp_uri": f"amqps://{user}:{pw}@{host}:5671/ivr",
        "mysql_uri": f"mysql://{user}:{pw}@{host}:3306/helpdesk"}[style]
    return style, written, pw


LABEL_VALUES = (lambda r: pick(r, HEX, 32), lambda r: pick(r, ALNUM, 40), lambda r: pick(r, B64, 43) + "=",
                lambda r: pick(r, ALNUM, 24), lambda r: uid(r), lambda r: pick(r, URLSAFE, 48))


def labelled_key(rng: random.Random, i: int) -> Value:
    """A key with no provider prefix: hex, base62, base64, UUID or url-safe."""
    style = ("hex32", "b62_40", "b64", "b62_24", "uuid", "urlsafe48")[i % 6]
    v = LABEL_VALUES[i % 6](rng)
    return style, v, v


INVISIBLE = {"zwsp": "\u200b", "zwnj": "\u200c", "zwj": "\u200d", "wj": "\u2060", "bom": "\ufeff", "shy": "\u00ad",
             "lrm": "\u200e", "rlm": "\u200f", "rli": "\u2067", "pdi": "\u2069", "lro": "\u202d", "pdf": "\u202c"}


def provider_key(rng: random.Random, i: int) -> str:
    """A key of a provider this world uses, in its published shape."""
    return (lambda: "sk_live_" + pick(rng, ALNUM, 24), lambda: "SG." + pick(rng, URLSAFE, 22) + "." +
            pick(rng, URLSAFE, 43), lambda: "xoxb-" + digits(rng, 12) + "-" + digits(rng, 13) + "-" +
            pick(rng, ALNUM, 24), lambda: "AIza" + pick(rng, URLSAFE, 35), lambda: crc_token(rng, "ghp_"),
            lambda: "shpat_" + pick(rng, HEX, 32), lambda: "whsec_" + pick(rng, ALNUM, 32),
            lambda: f"{rng.randint(10 ** 8, 8 * 10 ** 9)}:AA{pick(rng, URLSAFE, 33)}")[i % 8]()


def disguised(rng: random.Random, i: int) -> Value:
    """A provider key with invisible characters, bidi controls or full-width forms inside."""
    key = provider_key(rng, i)
    how = list(INVISIBLE) + ["fullwidth"]
    style = how[(i // 8 + i) % len(how)]
    if style == "fullwidth":
        v = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key)
    elif style in ("lro", "rli"):
        v = INVISIBLE[style] + key + INVISIBLE["pdf" if style == "lro" else "pdi"]
    else:
        cut = sorted(rng.sample(range(3, len(key) - 2), 3))
        v = INVISIBLE[style].join(key[a:b] for a, b in zip([0] + cut, cut + [len(key)], strict=True))
    return style, v, v


LOCALS = ("maria.lopez", "j.oconnor", "priya.sharma88", "chinedu_okafor", "sophie.martin", "jonas.becker",
          "ana.souza", "giulia.rossi", "pieter.devries", "k.nowak", "erik.lindqvist", "aiko.tanaka", "minji.park",
          "zhangwei1990", "nguyenvanan", "ahmed.almansouri", "noa.cohen", "arjun.reddy", "olena.shev", "myilmaz",
          "siti.rahma", "juan.delacruz", "amina.njeri", "tunde.adeyemi", "leila.h", "ravi.k+orders")
DOMAINS = ("gmail.com", "outlook.com", "yahoo.co.in", "hotmail.fr", "gmx.de", "web.de", "libero.it", "wp.pl",
           "seznam.cz", "mail.ru", "ukr.net", "naver.com", "qq.com", "163.com", "yahoo.co.jp", "uol.com.br",
           "sapo.pt", "orange.fr", "btinternet.com", "bigpond.com", "icloud.com", "ziggo.nl", "telia.com",
           "outlook.com.tr", "proton.me", "rediffmail.com", "yahoo.com.mx")
IDN = ("josé.garcía@correo.es", "jürgen.müller@gmx.de", "アイコ.田中@例え.jp", "张伟@邮件.中国", "अजय@डाटा.भारत",
       "олена@пошта.укр", "андрей@почта.рф", "γιώργος@παράδειγμα.ελ", "çağlar@örnek.com.tr", "שרה@דוגמה.ישראל",
       "محمد@مثال.مصر", "민지@예시.한국", "ñandú.pérez@dominio.mx", "łukasz.wiśniewski@poczta.pl")


def email(rng: random.Random, i: int) -> Value:
    """An address as records print it: plain, upper, internationalised, %40, \\u0040, &#64;, mailto:."""
    style = ("plain", "upper", "idn", "pct", "json_escape", "html_entity", "mailto", "plain")[i % 8]
    local, dom = f"{rng.choice(LOCALS)}{rng.choice(('', '', str(rng.randint(1, 99))))}", rng.choice(DOMAINS)
    addr = f"{local}@{dom}"
    v = {"plain": addr, "upper": addr.upper(), "idn": rng.choice(IDN), "pct": f"{local}%40{dom}",
         "json_escape": f"{local}\\u0040{dom}", "html_entity": f"{local}&#64;{dom}", "mailto": f"mailto:{addr}"}[style]
    return style, v, v.removeprefix("mailto:")


NANP_AREAS = ("212", "312", "415", "617", "646", "702", "713", "786", "206", "305", "404", "416", "604", "514",
              "403", "647", "905", "480", "919", "347")


def phone_us_ca(rng: random.Random, i: int) -> Value:
    """A NANP number: area code, exchange [2-9]XX (not 555), line."""
    a, x, n = rng.choice(NANP_AREAS), str(rng.randint(2, 9)) + digits(rng, 2), digits(rng, 4)
    x = "556" if x == "555" else x
    forms = {"paren": f"({a}) {x}-{n}", "dash": f"{a}-{x}-{n}", "dot": f"{a}.{x}.{n}", "e164": f"+1{a}{x}{n}",
             "intl_space": f"+1 {a} {x} {n}", "one_dash": f"1-{a}-{x}-{n}", "space": f"{a} {x} {n}",
             "intl_dash": f"+1-{a}-{x}-{n}", "compact": f"{a}{x}{n}"}
    style = list(forms)[i % len(forms)]
    return style, forms[style], forms[style]


def phone_uk(rng: random.Random, i: int) -> Value:
    """An Ofcom-plan number: 07xxx mobiles, 020 London, 01xx1 and 011x geographic."""
    kind = i % 3
    if kind == 0:
        m = "7" + rng.choice("1234579") + digits(rng, 8)
        forms = {"mobile": f"0{m[:4]} {m[4:]}", "mobile_intl": f"+44 {m[:4]} {m[4:]}",
                 "mobile_intl0": f"+44 (0){m[:4]} {m[4:]}", "mobile_e164": f"+44{m}",
                 "mobile_dash": f"0{m[:4]}-{m[4:7]}-{m[7:]}"}
    elif kind == 1:
        n = rng.choice("378") + digits(rng, 7)
        forms = {"london": f"020 {n[:4]} {n[4:]}", "london_intl": f"+44 20 {n[:4]} {n[4:]}",
                 "london_paren": f"(020) {n[:4]} {n[4:]}", "london_compact": f"020{n}"}
    else:
        code = rng.choice(("161", "113", "121", "131", "141", "117", "1904", "1223", "1865"))
        n = str(rng.randint(2, 9)) + digits(rng, 9 - len(code))
        forms = {"geo": f"0{code} {n[:3]} {n[3:]}", "geo_intl": f"+44 {code} {n[:3]} {n[3:]}",
                 "geo_compact": f"0{code}{n}"}
    style = list(forms)[(i // 3) % len(forms)]
    return style, forms[style], forms[style]


def phone_fr(rng: random.Random, i: int) -> Value:
    """An ARCEP-plan number: 06/07 mobiles, 01-05 geographic, 09 VoIP."""
    n = rng.choice("6677123459") + digits(rng, 8)
    pairs = [n[1:][k:k + 2] for k in range(0, 8, 2)]
    forms = {"space": f"0{n[0]} " + " ".join(pairs), "dot": f"0{n[0]}." + ".".join(pairs),
             "intl": f"+33 {n[0]} " + " ".join(pairs), "intl0": f"+33 (0){n[0]} " + " ".join(pairs),
             "compact": f"0{n}", "e164": f"+33{n}", "dash": f"0{n[0]}-" + "-".join(pairs),
             "double0": f"0033 {n[0]} " + " ".join(pairs)}
    style = list(forms)[i % len(forms)]
    return style, forms[style], forms[style]


def phone_de(rng: random.Random, i: int) -> Value:
    """A BNetzA-plan number: 015x/016x/017x mobiles, 030/040/089/069/0221 geographic (DIN 5008 and older)."""
    if i % 2 == 0:
        pre, sub = rng.choice(("151", "152", "157", "160", "162", "170", "171", "172", "173", "176", "178", "179")), \
            digits(rng, rng.choice((7, 8)))
    else:
        pre, sub = rng.choice(("30", "40", "89", "69", "221", "711", "211")), str(rng.randint(2, 9)) + digits(rng, 6)
    forms = {"din": f"0{pre} {sub}", "intl": f"+49 {pre} {sub}", "intl0": f"+49 (0){pre} {sub}",
             "slash": f"0{pre}/{sub}", "e164": f"+49{pre}{sub}", "dash": f"0{pre}-{sub}",
             "grouped": f"0{pre} {group(sub, 2, ' ')}", "double0": f"0049 {pre} {sub}", "paren": f"(0{pre}) {sub}"}
    style = list(forms)[(i // 2) % len(forms)]
    return style, forms[style], forms[style]


def phone_in(rng: random.Random, i: int) -> Value:
    """A TRAI-plan number: 10-digit mobiles from 6-9, STD-coded landlines."""
    if i % 3:
        m = rng.choice("6789") + digits(rng, 9)
        forms = {"mobile": f"{m[:5]} {m[5:]}", "intl": f"+91 {m[:5]} {m[5:]}", "intl_dash": f"+91-{m}",
                 "zero": f"0{m}", "e164": f"+91{m}", "double0": f"0091 {m[:5]} {m[5:]}", "compact": m}
    else:
        code, width = rng.choice((("22", 8), ("11", 8), ("80", 8), ("40", 8), ("44", 8), ("20", 8), ("712", 7)))
        n = str(rng.randint(2, 6)) + digits(rng, width - 1)
        forms = {"std": f"0{code} {n[:4]} {n[4:]}", "std_dash": f"0{code}-{n}",
                 "std_intl": f"+91 {code} {n[:4]} {n[4:]}"}
    style = list(forms)[(i // 3) % len(forms)]
    return style, forms[style], forms[style]


def ssn(rng: random.Random, i: int) -> Value:
    """A number the SSA could issue: area 001-899 but 666, group 01-99, serial 0001-9999."""
    area = rng.choice([a for a in range(1, 900) if a != 666])
    a, g, s = f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    style = ("dash", "space", "compact", "dash")[i % 4]
    v = {"dash": f"{a}-{g}-{s}", "space": f"{a} {g} {s}", "compact": f"{a}{g}{s}"}[style]
    return style, v, v


IINS = (("4", 16), ("51", 16), ("52", 16), ("53", 16), ("54", 16), ("55", 16), ("2221", 16), ("2720", 16),
        ("2591", 16), ("34", 15), ("37", 15), ("6011", 16), ("644", 16), ("65", 16), ("3528", 16), ("3589", 16),
        ("36", 14), ("62", 16), ("508", 16), ("6521", 16), ("4", 13))
TEST_CARDS = ("4242424242424242", "4111111111111111", "5555555555554444", "378282246310005", "6011111111111117",
              "5105105105105100", "4000056655665556", "3530111333300000", "4012888888881881", "371449635398431")


def card(rng: random.Random, i: int) -> Value:
    """A number in a network's IIN range with its Luhn digit, in the print forms records use."""
    iin, length = IINS[i % len(IINS)]
    body = iin + digits(rng, length - len(iin) - 1)
    num = body + luhn_digit(body)
    if num in TEST_CARDS:
        return card(rng, i + 1)
    style = ("space", "dash", "none", "dot", "underscore", "space")[i % 6]
    sep = {"space": " ", "dash": "-", "none": "", "dot": ".", "underscore": "_"}[style]
    v = group_card(num, sep) if length != 13 else num
    return style, v, v


IBAN_BBAN = {"DE": "8n10n", "GB": "4a6n8n", "FR": "5n5n11c2n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "PL": "8n16n", "PT": "4n4n11n2n", "BE": "3n7n2n", "SE": "3n16n1n", "FI": "3n11n",
             "CZ": "4n6n10n", "GR": "3n4n16c", "TR": "5n1n16c", "SA": "2n18c", "AE": "3n16n", "IL": "3n3n13n",
             "IE": "4a6n8n", "AT": "5n11n", "CH": "5n12c", "UA": "6n19c", "BR": "8n5n10n1a1c", "EG": "4n4n17n"}


def iban(rng: random.Random, i: int) -> Value:
    """An ISO 13616 IBAN on the registry's BBAN structure, MOD 97 check digits; grouped, compact or lower."""
    cc = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    b = bban(rng, IBAN_BBAN[cc])
    num = cc + iban_check(cc, b) + b
    style = ("grouped", "compact", "lower_compact", "grouped", "lower_grouped")[i % 5]
    v = {"grouped": group(num, 4, " "), "compact": num, "lower_compact": num.lower(),
         "lower_grouped": group(num.lower(), 4, " ")}[style]
    return style, v, v


# ---- values of the wider kinds --------------------------------------------------------------------------------

def twilio_auth_token(rng: random.Random, i: int) -> Value:
    """A Twilio Auth Token (32 hex) or API key secret (32 base62); written with its SID where the line asks."""
    style = ("auth_token", "api_key_secret")[i % 2]
    v = pick(rng, HEX, 32) if style == "auth_token" else pick(rng, ALNUM, 32)
    return style, v, v


def sendgrid_key(rng: random.Random, i: int) -> Value:
    """A SendGrid API key: SG.<22>.<43>."""
    v = f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"
    return "sg", v, v


def meta_access_token(rng: random.Random, i: int) -> Value:
    """A Meta Graph API access token as WhatsApp Cloud API set-ups use: EAA + app-type letter + ~180 base62."""
    v = "EAA" + rng.choice("BGIJ") + pick(rng, ALNUM, rng.randint(150, 210))
    return ("system_user", "temporary")[i % 2], v, v


def telegram_bot_token(rng: random.Random, i: int) -> Value:
    """A Telegram bot token: the bot id, a colon, 35 characters beginning AA."""
    v = f"{rng.randint(10 ** 8, 8 * 10 ** 9)}:AA{pick(rng, URLSAFE, 33)}"
    return "bot", v, v


def slack_token(rng: random.Random, i: int) -> Value:
    """A Slack bot, user or app-level token."""
    style = ("bot", "user", "app")[i % 3]
    v = {"bot": f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}",
         "user": f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}",
         "app": f"xapp-1-A{pick(rng, B32[:26] + '0123456789', 10)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"}[style]
    return style, v, v


def stripe_key(rng: random.Random, i: int) -> Value:
    """A Stripe live secret or restricted key."""
    style = ("secret", "restricted", "secret_long")[i % 3]
    v = {"secret": "sk_live_" + pick(rng, ALNUM, 24), "restricted": "rk_live_" + pick(rng, ALNUM, 99),
         "secret_long": "sk_live_51" + pick(rng, ALNUM, 97)}[style]
    return style, v, v


def shopify_token(rng: random.Random, i: int) -> Value:
    """A Shopify admin, custom-app or shared-secret token: prefix and 32 hex."""
    prefix = ("shpat_", "shpca_", "shpss_", "shppa_")[i % 4]
    v = prefix + pick(rng, HEX, 32)
    return prefix[:-1], v, v


def google_api_key(rng: random.Random, i: int) -> Value:
    """A Google API key (Maps, Dialogflow, Places): AIza + 35."""
    v = "AIza" + pick(rng, URLSAFE, 35)
    return "aiza", v, v


def jwt(rng: random.Random, i: int) -> Value:
    """A JWS compact token (RFC 7515/7519): Twilio access tokens, chat-widget identity tokens, agent SSO."""
    style = ("twilio_access", "widget_identity", "rs256_sso")[i % 3]
    now = rng.randint(1_735_000_000, 1_765_000_000)
    if style == "twilio_access":
        head = {"alg": "HS256", "typ": "JWT", "cty": "twilio-fpa;v=1"}
        body = {"jti": f"SK{pick(rng, HEX, 32)}-{now}", "iss": f"SK{pick(rng, HEX, 32)}", "sub":
                f"AC{pick(rng, HEX, 32)}", "exp": now + 3600, "grants": {"identity": f"agent_{rng.randint(1, 999)}",
                "voice": {"incoming": {"allow": True}, "outgoing": {"application_sid": f"AP{pick(rng, HEX, 32)}"}}}}
        sig = rng.randbytes(32)
    elif style == "widget_identity":
        head = {"alg": "HS256", "typ": "JWT", "kid": f"app_{pick(rng, HEX, 24)}"}
        body = {"external_id": str(rng.randint(10 ** 5, 10 ** 7)), "scope": "user", "name": rng.choice(NAMES),
                "iat": now}
        sig = rng.randbytes(32)
    else:
        head = {"alg": "RS256", "typ": "JWT", "kid": pick(rng, URLSAFE, 43)}
        body = {"iss": "https://login.mypurecloud.com", "aud": uid(rng), "sub": uid(rng), "iat": now,
                "exp": now + 86400, "org": uid(rng)}
        sig = rng.randbytes(256)
    v = ".".join((b64url(json.dumps(head, separators=(",", ":")).encode()),
                  b64url(json.dumps(body, separators=(",", ":")).encode()), b64url(sig)))
    return style, v, v


def auth_header(rng: random.Random, i: int) -> Value:
    """An HTTP Authorization value; the secret is its credential part."""
    style = ("basic", "bearer", "digest", "sigv4", "token")[i % 5]
    if style == "basic":
        cred = base64.b64encode(f"AC{pick(rng, HEX, 32)}:{pick(rng, HEX, 32)}".encode()).decode()
        return style, f"Authorization: Basic {cred}", cred
    if style == "bearer":
        cred = pick(rng, URLSAFE, rng.randint(40, 64))
        return style, f"Authorization: Bearer {cred}", cred
    if style == "digest":
        cred = pick(rng, HEX, 32)
        return style, (f'Authorization: Digest username="sip-{digits(rng, 4)}", realm="pbx.example", nonce="'
                       f'{pick(rng, HEX, 16)}", uri="sip:pbx.example", response="{cred}", algorithm=MD5'), cred
    if style == "sigv4":
        cred = pick(rng, HEX, 64)
        return style, (f"Authorization: AWS4-HMAC-SHA256 Credential=AKIA{pick(rng, B32, 16)}/2025{digits(rng, 4)}/"
                       "eu-west-2/connect/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + cred), cred
    cred = pick(rng, HEX, 40)
    return style, f"Authorization: Token {cred}", cred


def session_cookie(rng: random.Random, i: int) -> Value:
    """A session cookie of the frameworks helpdesk and store back-ends run on; the secret is its value."""
    name, val = (("sessionid", lambda: pick(rng, string.ascii_lowercase + string.digits, 32)),
                 ("connect.sid", lambda: "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, B64[:-2], 43)),
                 ("PHPSESSID", lambda: pick(rng, string.ascii_lowercase + string.digits, 26)),
                 ("JSESSIONID", lambda: pick(rng, HEX.upper(), 32)),
                 ("_shopify_s", lambda: uid(rng)),
                 ("laravel_session", lambda: "eyJpdiI6" + pick(rng, B64[:-1], 120) + "%3D"),
                 ("ASP.NET_SessionId", lambda: pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)))[i % 7]
    v = val()
    return name, f"{name}={v}", v


def private_key(rng: random.Random, i: int) -> Value:
    """A private key: SEC1 EC, PKCS#8 EC (APNs .p8), PKCS#8 Ed25519, OpenSSH; the secret is the base64 body."""
    style = ("sec1", "p8", "ed25519", "openssh")[i % 4]
    if style == "openssh":
        seed = rng.randbytes(32)
        pub = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        body = base64.b64encode(openssh_ed25519_blob(seed, pub, rng.randbytes(4), b"ivr-deploy")).decode()
        lines = group(body, 70, "\n")
        return style, f"-----BEGIN OPENSSH PRIVATE KEY-----\n{lines}\n-----END OPENSSH PRIVATE KEY-----", lines
    if style == "ed25519":
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        fmt = serialization.PrivateFormat.PKCS8
    else:
        key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
        fmt = serialization.PrivateFormat.TraditionalOpenSSL if style == "sec1" else serialization.PrivateFormat.PKCS8
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
    body = "\n".join(pem.split("\n")[1:-1])
    return style, pem, body


def plan(forms: dict[str, str], i: int) -> Value:
    """The i-th print form of a number."""
    style = list(forms)[i % len(forms)]
    return style, forms[style], forms[style]


def phone_es(rng: random.Random, i: int) -> Value:
    """CNMC plan: 6xx/7[1-4]x mobiles, 8/9 geographic, nine digits."""
    n = rng.choice(("6", "6", "71", "72", "91", "93", "96", "95"))
    n += digits(rng, 9 - len(n))
    return plan({"mobile": f"{n[:3]} {n[3:6]} {n[6:]}", "intl": f"+34 {n[:3]} {n[3:5]} {n[5:7]} {n[7:]}",
                 "compact": n, "e164": f"+34{n}", "pairs": f"{n[:3]} {n[3:5]} {n[5:7]} {n[7:]}",
                 "double0": f"0034 {n}"}, i)


def phone_mx(rng: random.Random, i: int) -> Value:
    """IFT plan (2019): ten digits, 2- or 3-digit area code; the old +52 1 mobile prefix still seen."""
    area = rng.choice(("55", "33", "81", "222", "442", "998", "664"))
    n = area + digits(rng, 10 - len(area))
    a = len(area)
    return plan({"local": f"{n[:a]} {n[a:a + 4 - (a == 3)]} {n[a + 4 - (a == 3):]}", "intl": f"+52 {n}",
                 "intl_space": f"+52 {n[:a]} {n[a:6]} {n[6:]}", "old_mobile": f"+52 1 {n}",
                 "dash": f"{n[:a]}-{n[a:6]}-{n[6:]}", "paren": f"({n[:a]}) {n[a:6]} {n[6:]}"}, i)


def phone_br(rng: random.Random, i: int) -> Value:
    """Anatel plan: two-digit DDD, 9 + 8 digits for mobiles, 8 digits from 2-5 for fixed lines."""
    ddd = rng.choice(("11", "21", "31", "41", "51", "61", "71", "81", "85", "92"))
    m = "9" + rng.choice("6789") + digits(rng, 7) if i % 3 else rng.choice("2345") + digits(rng, 7)
    return plan({"paren": f"({ddd}) {m[:-4]}-{m[-4:]}", "intl": f"+55 {ddd} {m[:-4]}-{m[-4:]}",
                 "intl_paren": f"+55 ({ddd}) {m[:-4]}-{m[-4:]}", "e164": f"+55{ddd}{m}",
                 "space": f"{ddd} {m[:-4]} {m[-4:]}", "zero": f"0{ddd} {m[:-4]}-{m[-4:]}"}, i)


def phone_it(rng: random.Random, i: int) -> Value:
    """AGCOM plan: 3xx mobiles of 10 digits; geographic numbers keep their 0-led area code."""
    if i % 3:
        n = "3" + rng.choice("234567") + digits(rng, 8)
        return plan({"space": f"{n[:3]} {n[3:6]} {n[6:]}", "intl": f"+39 {n[:3]} {n[3:]}", "compact": n,
                     "e164": f"+39{n}", "dot": f"{n[:3]}.{n[3:6]}.{n[6:]}", "double0": f"0039 {n}"}, i)
    code = rng.choice(("06", "02", "011", "055"))
    rest = str(rng.randint(2, 9)) + digits(rng, 10 - len(code) - 1)
    return plan({"geo": f"{code} {rest}", "geo_intl": f"+39 {code} {rest}", "geo_split": f"{code} {rest[:4]} "
                 f"{rest[4:]}"}, i // 3)


def phone_nl(rng: random.Random, i: int) -> Value:
    """ACM plan: 06-[1-5] mobiles, 0xx geographic, ten digits with the 0."""
    area = "6" if i % 2 else rng.choice(("20", "10", "30", "70", "40"))
    rest = (rng.choice("12345") if area == "6" else str(rng.randint(2, 9))) + digits(rng, 8 - len(area))
    return plan({"dash": f"0{area}-{rest}", "intl": f"+31 {area} {rest}", "space": f"0{area} {group(rest, 4, ' ')}",
                 "e164": f"+31{area}{rest}", "intl0": f"+31 (0){area} {rest}", "compact": f"0{area}{rest}"}, i)


def phone_pl(rng: random.Random, i: int) -> Value:
    """UKE plan: nine digits; 50x/51x/53x/57x/60x/66x/69x/72x/73x/78x/79x/88x mobiles, 2-digit area codes."""
    if i % 4 == 3:
        n = rng.choice(("22", "12", "61", "58", "71")) + digits(rng, 7)
        return "area", f"{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}", f"{n[:2]} {n[2:5]} {n[5:7]} {n[7:]}"
    n = rng.choice(("50", "51", "53", "57", "60", "66", "69", "72", "73", "78", "79", "88")) + digits(rng, 7)
    return plan({"mobile": f"{n[:3]} {n[3:6]} {n[6:]}", "intl": f"+48 {n[:3]} {n[3:6]} {n[6:]}", "e164": f"+48{n}",
                 "dash": f"{n[:3]}-{n[3:6]}-{n[6:]}", "double0": f"0048 {n}"}, i)


def phone_au(rng: random.Random, i: int) -> Value:
    """ACMA plan: 04 mobiles, 02/03/07/08 geographic, ten digits with the 0."""
    n = "4" + digits(rng, 8) if i % 2 else rng.choice("2378") + rng.choice("3456789") + digits(rng, 7)
    mob = n[0] == "4"
    return plan({"local": f"0{n[:3]} {n[3:6]} {n[6:]}" if mob else f"(0{n[0]}) {n[1:5]} {n[5:]}",
                 "intl": f"+61 {n[:3]} {n[3:6]} {n[6:]}" if mob else f"+61 {n[0]} {n[1:5]} {n[5:]}",
                 "e164": f"+61{n}", "compact": f"0{n}", "pairs": f"0{n[:1]} {n[1:5]} {n[5:]}"}, i)


def phone_ng(rng: random.Random, i: int) -> Value:
    """NCC plan: 070x/080x/081x/090x/091x mobiles, 11 digits with the 0."""
    n = rng.choice(("803", "806", "703", "706", "813", "816", "810", "814", "903", "805", "807", "705", "815",
                    "905", "802", "808", "708", "812", "701", "902", "809", "817", "818", "909")) + digits(rng, 7)
    return plan({"local": f"0{n[:3]} {n[3:6]} {n[6:]}", "intl": f"+234 {n[:3]} {n[3:6]} {n[6:]}",
                 "e164": f"+234{n}", "compact": f"0{n}", "dash": f"0{n[:3]}-{n[3:6]}-{n[6:]}",
                 "intl_compact": f"+234 {n}"}, i)


def phone_jp(rng: random.Random, i: int) -> Value:
    """MIC plan: 070/080/090 mobiles, 03/06 geographic; hyphens, and full-width digits as Japanese forms print."""
    n = rng.choice(("90", "80", "70")) + str(rng.randint(1, 9)) + digits(rng, 7) if i % 3 else \
        rng.choice(("3", "6")) + str(rng.randint(2, 9)) + digits(rng, 7)
    a = 2 if len(n) == 10 else 1
    local = f"0{n[:a]}-{n[a:a + 4]}-{n[a + 4:]}"
    wide = local.translate({ord(c): ord(c) + 0xFEE0 for c in "0123456789"}).replace("-", "－")
    return plan({"hyphen": local, "intl": f"+81 {n[:a]}-{n[a:a + 4]}-{n[a + 4:]}", "compact": f"0{n}",
                 "fullwidth": wide, "intl_space": f"+81 {n[:a]} {n[a:a + 4]} {n[a + 4:]}",
                 "paren": f"0{n[:a]}({n[a:a + 4]}){n[a + 4:]}"}, i)


def phone_kr(rng: random.Random, i: int) -> Value:
    """MSIT plan: 010 mobiles of 11 digits, 02 Seoul."""
    n = "10" + rng.choice("23456789") + digits(rng, 7) if i % 3 else "2" + rng.choice("23456789") + digits(rng, 7)
    a = 2 if n[0] == "1" else 1
    return plan({"hyphen": f"0{n[:a]}-{n[a:-4]}-{n[-4:]}", "intl": f"+82 {n[:a]}-{n[a:-4]}-{n[-4:]}",
                 "compact": f"0{n}", "e164": f"+82{n}", "space": f"0{n[:a]} {n[a:-4]} {n[-4:]}"}, i)


def phone_tr(rng: random.Random, i: int) -> Value:
    """BTK plan: 5xx mobiles, 212/216/312 geographic, ten digits after the 0."""
    n = "5" + rng.choice("0345") + digits(rng, 8) if i % 3 else rng.choice(("212", "216", "312", "232")) + \
        digits(rng, 7)
    return plan({"local": f"0{n[:3]} {n[3:6]} {n[6:8]} {n[8:]}", "intl": f"+90 {n[:3]} {n[3:6]} {n[6:8]} {n[8:]}",
                 "paren": f"0 ({n[:3]}) {n[3:6]} {n[6:8]} {n[8:]}", "e164": f"+90{n}", "compact": f"0{n}"}, i)


def phone_ae(rng: random.Random, i: int) -> Value:
    """TDRA plan: 05x mobiles, 0x geographic; also Eastern Arabic digits as Arabic text prints them."""
    n = "5" + rng.choice("0245678") + digits(rng, 7) if i % 3 else rng.choice("2467") + digits(rng, 7)
    a = 2 if n[0] == "5" else 1
    local = f"0{n[:a]} {n[a:a + 3]} {n[a + 3:]}"
    arabic = local.translate({ord(c): 0x0660 + int(c) for c in "0123456789"})
    return plan({"local": local, "intl": f"+971 {n[:a]} {n[a:a + 3]} {n[a + 3:]}", "e164": f"+971{n}",
                 "arabic_digits": arabic, "dash": f"0{n[:a]}-{n[a:]}", "double0": f"00971 {n}"}, i)


SPOKEN_DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


def phone_spoken(rng: random.Random, i: int) -> Value:
    """A UK, US or Indian number as an engine without number formatting prints it: digit words, `oh`, `double`."""
    num = ("07" + rng.choice("1234579") + digits(rng, 8), rng.choice(NANP_AREAS) + str(rng.randint(2, 9)) +
           digits(rng, 6), rng.choice("6789") + digits(rng, 9))[i % 3]
    out, k = [], 0
    while k < len(num):
        d = num[k]
        word = "oh" if d == "0" and i % 2 else SPOKEN_DIGITS[int(d)]
        if k + 1 < len(num) and num[k + 1] == d and i % 4 < 2:
            out.append(f"double {word}")
            k += 2
        else:
            out.append(word)
            k += 1
    v = " ".join(out)
    return ("uk", "us", "in")[i % 3], v, v


def email_spoken(rng: random.Random, i: int) -> Value:
    """An address as an engine prints the spoken form: `dot`, `at`, `underscore`."""
    local = rng.choice(LOCALS).split("+")[0]
    dom = rng.choice(("gmail.com", "outlook.com", "yahoo.co.uk", "hotmail.com", "icloud.com", "rediffmail.com"))
    v = f"{local} at {dom}".replace(".", " dot ").replace("_", " underscore ")
    return ("lower", "title")[i % 2], (v if i % 2 == 0 else v.replace(" at ", " At ")), \
        (v if i % 2 == 0 else v.replace(" at ", " At "))


# ---- national ids (outside the target) -------------------------------------------------------------------------

VERHOEFF_D = ("0123456789", "1234067895", "2340178956", "3401289567", "4012395678", "5987604321", "6598710432",
              "7659821043", "8765932104", "9876543210")
"""Verhoeff's multiplication table (the dihedral group D5)."""
VERHOEFF_P1 = (1, 5, 7, 6, 2, 8, 3, 0, 9, 4)
"""Verhoeff's permutation; position i applies it i times."""
VERHOEFF_INV = (0, 4, 3, 2, 1, 5, 6, 7, 8, 9)


def verhoeff_digit(partial: str) -> str:
    """The Verhoeff check digit that completes `partial` (Aadhaar's, UIDAI)."""
    c = 0
    for k, ch in enumerate(reversed(partial)):
        d = int(ch)
        for _ in range((k + 1) % 8):
            d = VERHOEFF_P1[d]
        c = int(VERHOEFF_D[c][d])
    return str(VERHOEFF_INV[c])


def aadhaar(rng: random.Random, i: int) -> Value:
    """A 12-digit Aadhaar number: first digit 2-9, Verhoeff check digit; grouped in fours."""
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    n = body + verhoeff_digit(body)
    return plan({"grouped": group(n, 4, " "), "compact": n, "dash": group(n, 4, "-")}, i)


def cpf_br(rng: random.Random, i: int) -> Value:
    """A Brazilian CPF: nine digits and two mod-11 check digits, printed 000.000.000-00."""
    n = digits(rng, 9)
    for width in (10, 11):
        r = sum(int(d) * w for d, w in zip(n, range(width, 1, -1), strict=True)) * 10 % 11
        n += str(r % 10)
    return plan({"dotted": f"{n[:3]}.{n[3:6]}.{n[6:9]}-{n[9:]}", "compact": n}, i)


def dni_es(rng: random.Random, i: int) -> Value:
    """A Spanish DNI (8 digits + mod-23 letter) or NIE (X/Y/Z standing for 0/1/2)."""
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if i % 3:
        n = digits(rng, 8)
        return plan({"dni": n + letters[int(n) % 23], "dni_dash": f"{n}-{letters[int(n) % 23]}"}, i)
    lead = rng.choice("XYZ")
    n = digits(rng, 7)
    v = lead + n + letters[int(str("XYZ".index(lead)) + n) % 23]
    return "nie", v, v


def pesel_pl(rng: random.Random, i: int) -> Value:
    """A PESEL: YYMMDD (month +20 after 2000), serial, check digit with weights 1-3-7-9."""
    year = rng.randint(1950, 2008)
    month = rng.randint(1, 12) + (20 if year >= 2000 else 0)
    n = f"{year % 100:02d}{month:02d}{rng.randint(1, 28):02d}{digits(rng, 4)}"
    n += str((10 - sum(int(d) * w for d, w in zip(n, (1, 3, 7, 9, 1, 3, 7, 9, 1, 3), strict=True)) % 10) % 10)
    return "compact", n, n


def tckn_tr(rng: random.Random, i: int) -> Value:
    """A T.C. Kimlik No: 11 digits, first non-zero, digits 10 and 11 from the published rule."""
    d = [rng.randint(1, 9)] + [rng.randint(0, 9) for _ in range(8)]
    d.append((sum(d[0:9:2]) * 7 - sum(d[1:8:2])) % 10)
    d.append(sum(d) % 10)
    v = "".join(map(str, d))
    return "compact", v, v


# ---- lines people say, type or paste, by kind: (language, s(poken) or p(asted), template with {v}) -------------

SAYINGS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "password": (("en-US", "s", "yeah my password is {v} and it still won't let me in"),
        ("en-GB", "s", "I've reset it for you, your temporary password is {v}, you'll be asked to change it"),
        ("en-IN", "s", "sir the password I am putting is {v} only"),
        ("es-MX", "s", "mi contraseña es {v} pero me sale error"),
        ("es-ES", "s", "la contraseña provisional es {v}, cámbiela al entrar"),
        ("pt-BR", "s", "minha senha é {v} e não entra no app"), ("fr-FR", "s", "mon mot de passe c'est {v}"),
        ("fr-CA", "s", "votre mot de passe temporaire : {v}"),
        ("de-DE", "s", "Ihr neues Kennwort lautet {v}, bitte nach dem Login ändern"),
        ("it-IT", "s", "la mia password è {v}"), ("nl-NL", "s", "mijn wachtwoord is {v}"),
        ("pl-PL", "s", "moje hasło to {v}"), ("sv-SE", "s", "mitt lösenord är {v}"),
        ("ru-RU", "s", "мой пароль {v}, не подходит"), ("uk-UA", "s", "мій пароль {v}"),
        ("tr-TR", "s", "şifrem {v} ama giriş yapamıyorum"), ("ar-EG", "s", "كلمة السر بتاعتي {v}"),
        ("he-IL", "s", "הסיסמה שלי היא {v}"), ("hi-IN", "s", "मेरा पासवर्ड {v} है"),
        ("ja-JP", "s", "パスワードは{v}です"), ("ko-KR", "s", "비밀번호는 {v} 입니다"),
        ("zh-CN", "s", "我的密码是 {v}"), ("vi-VN", "s", "mật khẩu của tôi là {v}"),
        ("id-ID", "s", "kata sandi saya {v}"), ("en-US", "p", "DB_PASSWORD={v}"),
        ("en-US", "p", "PGPASSWORD={v} psql -h crm-db -U connect_app -d contacts"),
        ("en-GB", "p", "  MYSQL_ROOT_PASSWORD: {v}"),
        ("en-US", "p", "{\"userName\": \"ivr-bot\", \"userPassword\": \"{v}\"}"), ("en-US", "p", "REDIS_PASS={v}"),
        ("de-DE", "p", "spring.datasource.password={v}"),
        ("en-IN", "p", "mysql -u helpdesk -p{v} -h 10.0.3.12 tickets"),
        ("en-US", "p", "five9-cli login --user supervisor01 --password {v}"), ("en-AU", "p", "sipPassword: {v}"),
        ("pt-BR", "p", "ZENDESK_AGENT_PASSWORD='{v}'"), ("en-NG", "p", "smtp_password = {v}")),
    "aws_secret": (("en-US", "p", "AWS_ACCESS_KEY_ID={v}\nAWS_SECRET_ACCESS_KEY={s}"),
        ("en-GB", "p", "aws_access_key_id = {v}\naws_secret_access_key = {s}"),
        ("en-US", "p", "keys for the Connect lambda: {v} {s}"), ("en-IN", "p", "{v}:{s}"),
        ("es-ES", "p", "clave de acceso {v} / secreto {s}"), ("pt-BR", "p", "Access key: {v}\nSecret: {s}"),
        ("de-DE", "p", "\"AccessKeyId\": \"{v}\", \"SecretAccessKey\": \"{s}\""),
        ("fr-FR", "p", "export AWS_SECRET_ACCESS_KEY={s} # id {v}"),
        ("ja-JP", "p", "アクセスキー {v} シークレット {s}"),
        ("en-US", "p", "transcribe: { accessKeyId: '{v}', secretAccessKey: '{s}' }"),
        ("pl-PL", "p", "klucz {v} sekret {s} (do S3 z nagraniami)"),
        ("tr-TR", "p", "aws configure set aws_secret_access_key {s}")),
    "webhook": (("en-US", "p", "SLACK_WEBHOOK_URL={v}"), ("en-GB", "p", "escalations go to {v}"),
        ("en-US", "p", "curl -X POST -H 'Content-type: application/json' --data '{\"text\":\"missed call\"}' {v}"),
        ("es-MX", "p", "el webhook del bot es {v}"), ("pt-BR", "p", "webhook de alerta: {v}"),
        ("fr-FR", "p", "URL du webhook : {v}"), ("de-DE", "p", "Webhook-URL für Rückrufe: {v}"),
        ("it-IT", "p", "notifiche su {v}"), ("nl-NL", "p", "webhook: {v}"),
        ("ja-JP", "p", "通知先のWebhookは {v} です"), ("en-AU", "p", "  notify_url: \"{v}\""),
        ("ko-KR", "p", "웹훅 주소 {v}"), ("zh-TW", "p", "通知網址：{v}"),
        ("en-IN", "p", "<a href=\"{v}\">escalation hook</a>")),
    "stripe_whsec": (("en-US", "p", "STRIPE_WEBHOOK_SECRET={v}"),
        ("en-US", "p", "> Ready! You are using Stripe API Version [2024-06-20]. Your webhook signing secret is {v} "
                       "(^C to quit)"),
        ("en-GB", "p", "signing secret for the refunds endpoint is {v}"), ("es-ES", "p", "secreto de firma: {v}"),
        ("pt-BR", "p", "whsec do endpoint de pedidos: {v}"), ("fr-FR", "p", "stripe:\n  webhook_secret: {v}"),
        ("de-DE", "p", "endpointSecret = \"{v}\""),
        ("nl-NL", "p", "const sig = stripe.webhooks.constructEvent(body, header, '{v}')"),
        ("en-IN", "p", "\"webhookSigningSecret\": \"{v}\""), ("it-IT", "p", "segreto webhook {v}")),
    "connection_string": (("en-US", "p", "DATABASE_URL={v}"),
        ("en-GB", "p", "connection string for the call-recording store: {v}"),
        ("en-US", "p", "\"ConnectionStrings\": { \"Contacts\": \"{v}\" }"), ("es-MX", "p", "cadena de conexión: {v}"),
        ("pt-BR", "p", "string de conexão {v}"), ("fr-CA", "p", "chaîne de connexion : {v}"),
        ("de-DE", "p", "Verbindungszeichenfolge: {v}"), ("pl-PL", "p", "connection string do bazy: {v}"),
        ("en-IN", "p", "spring.datasource.url={v}"), ("ja-JP", "p", "接続文字列 {v}"),
        ("en-AU", "p", "  - name: CRM_DB\n    value: \"{v}\""), ("ru-RU", "p", "строка подключения: {v}")),
    "labelled_key": (("en-US", "p", "API Key: {v}"), ("en-GB", "p", "Secret key = {v}"),
        ("en-US", "s", "the access token is {v}"), ("en-IN", "p", "Client Secret : {v}"),
        ("es-ES", "p", "Clave de API: {v}"), ("es-MX", "p", "token de acceso: {v}"),
        ("pt-BR", "p", "Chave da API: {v}"), ("pt-PT", "p", "chave secreta = {v}"), ("fr-FR", "p", "Clé API : {v}"),
        ("de-DE", "p", "API-Schlüssel: {v}"), ("it-IT", "p", "Chiave API: {v}"), ("nl-NL", "p", "API-sleutel: {v}"),
        ("pl-PL", "p", "Klucz API: {v}"), ("sv-SE", "p", "API-nyckel: {v}"), ("fi-FI", "p", "API-avain: {v}"),
        ("cs-CZ", "p", "API klíč: {v}"), ("el-GR", "p", "Κλειδί API: {v}"), ("tr-TR", "p", "API anahtarı: {v}"),
        ("ru-RU", "p", "API-ключ: {v}"), ("uk-UA", "p", "Ключ API: {v}"), ("ar-AE", "p", "مفتاح API: {v}"),
        ("he-IL", "p", "מפתח API: {v}"), ("fa-IR", "p", "کلید API: {v}"), ("hi-IN", "p", "API कुंजी: {v}"),
        ("ja-JP", "p", "APIキー: {v}"), ("ko-KR", "p", "API 키: {v}"), ("zh-CN", "p", "API 密钥：{v}"),
        ("zh-TW", "p", "API 金鑰：{v}"), ("vi-VN", "p", "Khóa API: {v}"), ("th-TH", "p", "คีย์ API: {v}"),
        ("id-ID", "p", "Kunci API: {v}"), ("sw-KE", "p", "Ufunguo wa API: {v}"), ("en-NG", "p", "Auth Token: {v}"),
        ("fil-PH", "p", "API key po: {v}")),
    "disguised": (("en-US", "p", "here's the key {v} from the dashboard"), ("en-GB", "p", "{v}"),
        ("es-ES", "p", "te paso la clave: {v}"), ("pt-BR", "p", "segue a chave {v}"),
        ("fr-FR", "p", "voici la clé {v}"), ("de-DE", "p", "Schlüssel kopiert: {v}"),
        ("ja-JP", "p", "キーはこちら {v}"), ("ar-AE", "p", "هذا هو المفتاح {v}"), ("he-IL", "p", "המפתח: {v}"),
        ("zh-CN", "p", "密钥 {v}"), ("ru-RU", "p", "ключ: {v}"), ("tr-TR", "p", "anahtar {v}"),
        ("en-IN", "p", "pls use this one {v}"), ("ko-KR", "p", "키 {v} 입니다")),
    "email": (("en-US", "s", "sure, my email is {v}"), ("en-GB", "s", "you can email me at {v}"),
        ("en-IN", "s", "my mail id is {v}"), ("en-AU", "s", "send the return label to {v} thanks"),
        ("en-NG", "s", "my email na {v}"), ("es-MX", "s", "mi correo es {v}"), ("es-ES", "s", "envíamelo a {v}"),
        ("pt-BR", "s", "meu e-mail é {v}"), ("pt-PT", "s", "o meu email é {v}"),
        ("fr-FR", "s", "mon adresse mail c'est {v}"), ("fr-CA", "s", "mon courriel : {v}"),
        ("de-DE", "s", "meine E-Mail-Adresse ist {v}"), ("it-IT", "s", "la mia email è {v}"),
        ("nl-NL", "s", "mijn e-mailadres is {v}"), ("pl-PL", "s", "mój e-mail to {v}"),
        ("sv-SE", "s", "min e-post är {v}"), ("fi-FI", "s", "sähköpostini on {v}"),
        ("cs-CZ", "s", "můj e-mail je {v}"), ("el-GR", "s", "το email μου είναι {v}"),
        ("tr-TR", "s", "e-posta adresim {v}"), ("ru-RU", "s", "моя почта {v}"), ("uk-UA", "s", "моя пошта {v}"),
        ("ar-AE", "s", "بريدي الإلكتروني {v}"), ("he-IL", "s", "המייל שלי {v}"), ("fa-IR", "s", "ایمیل من {v} است"),
        ("hi-IN", "s", "मेरा ईमेल {v} है"), ("mr-IN", "s", "माझा ईमेल {v} आहे"), ("te-IN", "s", "నా ఈమెయిల్ {v}"),
        ("ja-JP", "s", "メールアドレスは{v}です"), ("ko-KR", "s", "이메일은 {v} 입니다"),
        ("zh-CN", "s", "我的邮箱是{v}"), ("zh-TW", "s", "我的電子郵件是 {v}"), ("vi-VN", "s", "email của tôi là {v}"),
        ("th-TH", "s", "อีเมลของฉันคือ {v}"), ("id-ID", "s", "email saya {v}"),
        ("fil-PH", "s", "ang email ko ay {v}"), ("sw-KE", "s", "barua pepe yangu ni {v}"),
        ("yo-NG", "s", "ímeèlì mi ni {v}")),
    "phone_us_ca": (("en-US", "s", "you can call me back at {v}"), ("en-US", "s", "my cell is {v}"),
        ("en-US", "s", "best number to reach me is {v}, that's my mobile"),
        ("fr-CA", "s", "mon numéro de cellulaire est le {v}"), ("es-MX", "s", "mi teléfono en Estados Unidos es {v}"),
        ("en-US", "s", "phone: {v}"), ("en-US", "s", "text me at {v}"), ("en-US", "s", "callback number {v}"),
        ("zh-CN", "s", "我的电话是 {v}"), ("vi-VN", "s", "số điện thoại của tôi là {v}"),
        ("fil-PH", "s", "ang cellphone number ko ay {v}"), ("ko-KR", "s", "제 전화번호는 {v} 입니다")),
    "phone_uk": (("en-GB", "s", "my mobile number is {v}"), ("en-GB", "s", "ring me on {v} after five"),
        ("en-GB", "s", "the best contact number is {v}"), ("en-GB", "s", "tel: {v}"),
        ("en-GB", "s", "call me back on {v} please"), ("pl-PL", "s", "mój numer telefonu w UK to {v}"),
        ("hi-IN", "s", "मेरा फ़ोन नंबर {v} है"), ("en-NG", "s", "my UK phone na {v}"),
        ("yo-NG", "s", "nọ́mbà fóònù mi ni {v}"), ("ar-EG", "s", "رقم تليفوني {v}")),
    "phone_fr": (("fr-FR", "s", "mon numéro de portable c'est le {v}"),
        ("fr-FR", "s", "vous pouvez me rappeler au {v}"), ("fr-FR", "s", "tél. : {v}"),
        ("fr-FR", "s", "mon téléphone : {v}"), ("fr-FR", "s", "joignable au {v}"),
        ("ar-AE", "s", "رقم هاتفي في فرنسا {v}"), ("en-GB", "s", "my French mobile is {v}"),
        ("pt-PT", "s", "o meu telemóvel em França é {v}"), ("vi-VN", "s", "số điện thoại ở Pháp {v}")),
    "phone_de": (("de-DE", "s", "meine Handynummer ist {v}"), ("de-DE", "s", "Sie erreichen mich unter {v}"),
        ("de-DE", "s", "Tel.: {v}"), ("de-DE", "s", "Rückrufnummer {v}"), ("de-DE", "s", "Mobil: {v}"),
        ("tr-TR", "s", "Almanya'daki telefon numaram {v}"), ("en-GB", "s", "my German phone number is {v}"),
        ("pl-PL", "s", "numer telefonu w Niemczech {v}"), ("ru-RU", "s", "мой телефон в Германии {v}")),
    "phone_in": (("en-IN", "s", "my mobile number is {v}"), ("en-IN", "s", "kindly call on {v}"),
        ("hi-IN", "s", "मेरा मोबाइल नंबर {v} है"), ("mr-IN", "s", "माझा मोबाईल नंबर {v} आहे"),
        ("te-IN", "s", "నా ఫోన్ నంబర్ {v}"), ("en-IN", "s", "contact no. {v}"), ("en-IN", "s", "whatsapp number {v}"),
        ("en-GB", "s", "my phone in India is {v}"), ("hi-IN", "s", "इस नंबर पर कॉल करें {v}")),
    "ssn": (("en-US", "s", "my social security number is {v}"), ("en-US", "s", "SSN {v}"),
        ("en-US", "s", "social is {v}"), ("es-MX", "s", "mi número de seguro social es {v}"),
        ("en-US", "s", "SSN#: {v}"), ("en-US", "s", "the last name is Okafor and the social {v}"),
        ("vi-VN", "s", "số an sinh xã hội của tôi là {v}"), ("zh-CN", "s", "我的社会安全号码是 {v}"),
        ("fil-PH", "s", "ang SSN ko ay {v}"), ("ko-KR", "s", "사회보장번호는 {v} 입니다")),
    "card": (("en-US", "s", "the card number is {v}"), ("en-GB", "s", "my card number's {v}"),
        ("en-IN", "s", "card no {v} expiry 08/27"), ("es-ES", "s", "el número de la tarjeta es {v}"),
        ("es-MX", "s", "mi tarjeta es la {v}"), ("pt-BR", "s", "o número do cartão é {v}"),
        ("fr-FR", "s", "numéro de carte {v}"), ("de-DE", "s", "die Kartennummer ist {v}"),
        ("it-IT", "s", "il numero della carta è {v}"), ("nl-NL", "s", "kaartnummer {v}"),
        ("pl-PL", "s", "numer karty {v}"), ("tr-TR", "s", "kart numaram {v}"), ("ru-RU", "s", "номер карты {v}"),
        ("ar-AE", "s", "رقم البطاقة {v}"), ("ja-JP", "s", "カード番号は{v}です"), ("zh-CN", "s", "卡号是{v}"),
        ("th-TH", "s", "หมายเลขบัตร {v}"), ("id-ID", "s", "nomor kartu saya {v}"), ("en-US", "s", "{v}"),
        ("en-NG", "s", "my ATM card number na {v}")),
    "iban": (("en-GB", "s", "refund it to my IBAN {v} please"), ("de-DE", "s", "meine IBAN lautet {v}"),
        ("fr-FR", "s", "mon IBAN : {v}"), ("es-ES", "s", "el IBAN para el reembolso es {v}"),
        ("it-IT", "s", "l'IBAN è {v}"), ("nl-NL", "s", "mijn rekeningnummer is {v}"),
        ("pl-PL", "s", "numer konta {v}"), ("pt-PT", "s", "o meu IBAN é {v}"), ("sv-SE", "s", "mitt IBAN {v}"),
        ("fi-FI", "s", "tilinumeroni {v}"), ("cs-CZ", "s", "číslo účtu {v}"), ("el-GR", "s", "το IBAN μου {v}"),
        ("tr-TR", "s", "IBAN numaram {v}"), ("ar-AE", "s", "رقم الآيبان {v}"), ("he-IL", "s", "מספר IBAN {v}"),
        ("uk-UA", "s", "мій IBAN {v}"), ("pt-BR", "s", "IBAN da conta {v}"), ("ar-EG", "s", "الايبان بتاعي {v}"),
        ("en-US", "s", "{v}")),
    "twilio_auth_token": (("en-US", "p", "TWILIO_AUTH_TOKEN={v}"), ("en-GB", "p", "client = Client('AC{a}', '{v}')"),
        ("en-US", "p", "curl -X POST https://api.twilio.com/2010-04-01/Accounts/AC{a}/Messages.json -u AC{a}:{v}"),
        ("es-MX", "p", "el auth token de Twilio es {v}"),
        ("pt-BR", "p", "twilio:\n  account_sid: AC{a}\n  auth_token: {v}"), ("de-DE", "p", "TWILIO_API_SECRET={v}"),
        ("fr-FR", "p", "jeton Twilio {v}"), ("en-IN", "p", "twilio token {v}")),
    "sendgrid_key": (("en-US", "p", "SENDGRID_API_KEY={v}"), ("en-GB", "p", "sg.setApiKey('{v}')"),
        ("es-ES", "p", "la key de SendGrid para los recordatorios: {v}"), ("pt-BR", "p", "{v}"),
        ("de-DE", "p", "sendgrid:\n  api_key: {v}"), ("ja-JP", "p", "SendGridのキー {v}")),
    "meta_access_token": (("en-US", "p", "WHATSAPP_TOKEN={v}"),
        ("en-GB", "p", "curl -H 'Authorization: Bearer {v}' https://graph.facebook.com/v19.0/1098765432/messages"),
        ("pt-BR", "p", "token permanente do WhatsApp: {v}"), ("es-MX", "p", "access_token={v}"),
        ("id-ID", "p", "token WA Cloud API {v}"), ("hi-IN", "p", "{v}"), ("ar-AE", "p", "توكن واتساب {v}")),
    "telegram_bot_token": (("en-US", "p", "TELEGRAM_BOT_TOKEN={v}"), ("ru-RU", "p", "токен бота {v}"),
        ("uk-UA", "p", "curl https://api.telegram.org/bot{v}/setWebhook?url=https://bot.example.ua/tg"),
        ("fa-IR", "p", "توکن ربات {v}"), ("en-GB", "p", "Use this token to access the HTTP API:\n{v}"),
        ("tr-TR", "p", "bot token: {v}")),
    "slack_token": (("en-US", "p", "SLACK_BOT_TOKEN={v}"), ("en-GB", "p", "Authorization: Bearer {v}"),
        ("de-DE", "p", "slack:\n  token: {v}"), ("ja-JP", "p", "Slackのトークン {v}"), ("en-IN", "p", "{v}")),
    "stripe_key": (("en-US", "p", "STRIPE_SECRET_KEY={v}"), ("en-GB", "p", "stripe.api_key = \"{v}\""),
        ("fr-FR", "p", "clé secrète Stripe : {v}"), ("nl-NL", "p", "curl https://api.stripe.com/v1/refunds -u {v}:"),
        ("pt-BR", "p", "{v}"), ("it-IT", "p", "stripe:\n  secret: {v}")),
    "shopify_token": (("en-US", "p", "SHOPIFY_ACCESS_TOKEN={v}"), ("en-AU", "p", "X-Shopify-Access-Token: {v}"),
        ("es-ES", "p", "token de la app de la tienda {v}"), ("de-DE", "p", "shopify:\n  api_secret: {v}"),
        ("en-IN", "p", "{v}")),
    "google_api_key": (("en-US", "p", "GOOGLE_MAPS_API_KEY={v}"),
        ("en-GB", "p", "https://maps.googleapis.com/maps/api/geocode/json?address=SW1A+1AA&key={v}"),
        ("hi-IN", "p", "dialogflow key {v}"), ("pt-BR", "p", "\"apiKey\": \"{v}\""), ("ko-KR", "p", "{v}")),
    "jwt": (("en-US", "p", "token={v}"), ("en-GB", "p", "Authorization: Bearer {v}"),
        ("es-ES", "p", "el JWT del widget: {v}"), ("de-DE", "p", "identityToken: {v}"),
        ("ja-JP", "p", "アクセストークン {v}"), ("en-IN", "p", "{v}")),
    "auth_header": (("en-US", "p", "{v}"),
        ("en-GB", "p", "> POST /v1/calls HTTP/1.1\n> Host: api.example-cx.com\n> {v}"),
        ("de-DE", "p", "Header gesendet: {v}"), ("pt-BR", "p", "requisição com {v}"),
        ("fr-FR", "p", "en-tête : {v}")),
    "session_cookie": (("en-US", "p", "Cookie: {v}; _ga=GA1.2.12345.67890"),
        ("en-GB", "p", "Set-Cookie: {v}; Path=/; HttpOnly; Secure"), ("es-ES", "p", "cookie de sesión {v}"),
        ("pt-BR", "p", "document.cookie = \"{v}\""), ("ja-JP", "p", "クッキー {v}")),
    "private_key": (("en-US", "p", "{v}"), ("en-GB", "p", "APNs auth key (.p8) for the order-status app:\n{v}"),
        ("de-DE", "p", "Schlüssel für den SFTP-Export:\n{v}"), ("es-ES", "p", "clave privada:\n{v}")),
    "phone_es": (("es-ES", "s", "mi móvil es el {v}"), ("es-ES", "s", "llámame al {v}"),
        ("es-ES", "s", "teléfono: {v}"), ("es-ES", "s", "mi número de teléfono es {v}"),
        ("en-GB", "s", "my Spanish mobile is {v}")),
    "phone_mx": (("es-MX", "s", "mi celular es {v}"), ("es-MX", "s", "márcame al {v}"), ("es-MX", "s", "tel. {v}"),
        ("es-MX", "s", "mi número de WhatsApp es {v}"), ("en-US", "s", "my phone in Mexico is {v}")),
    "phone_br": (("pt-BR", "s", "meu celular é {v}"), ("pt-BR", "s", "me liga no {v}"),
        ("pt-BR", "s", "telefone: {v}"), ("pt-BR", "s", "meu whats é {v}"),
        ("pt-BR", "s", "pode me ligar no número {v}")),
    "phone_it": (("it-IT", "s", "il mio cellulare è {v}"), ("it-IT", "s", "chiamami al {v}"),
        ("it-IT", "s", "tel. {v}"), ("it-IT", "s", "il mio numero di telefono è {v}"),
        ("en-GB", "s", "my Italian mobile is {v}")),
    "phone_nl": (("nl-NL", "s", "mijn mobiele nummer is {v}"), ("nl-NL", "s", "bel me op {v}"),
        ("nl-NL", "s", "tel: {v}"), ("nl-NL", "s", "mijn telefoonnummer is {v}"),
        ("en-GB", "s", "my Dutch phone is {v}")),
    "phone_pl": (("pl-PL", "s", "mój numer telefonu to {v}"), ("pl-PL", "s", "proszę dzwonić pod {v}"),
        ("pl-PL", "s", "tel. kom. {v}"), ("pl-PL", "s", "komórka: {v}"),
        ("uk-UA", "s", "мій польський номер телефону {v}")),
    "phone_au": (("en-AU", "s", "my mobile is {v}"), ("en-AU", "s", "call me on {v}"), ("en-AU", "s", "ph: {v}"),
        ("en-AU", "s", "best contact number {v}"), ("zh-CN", "s", "我在澳洲的电话是 {v}")),
    "phone_ng": (("en-NG", "s", "my phone number na {v}"), ("en-NG", "s", "call me on {v}"),
        ("yo-NG", "s", "nọ́mbà fóònù mi ni {v}"), ("en-NG", "s", "Tel: {v}"),
        ("en-NG", "s", "my line is {v}, abeg call")),
    "phone_jp": (("ja-JP", "s", "電話番号は{v}です"), ("ja-JP", "s", "携帯：{v}"), ("ja-JP", "s", "連絡先 {v}"),
        ("ja-JP", "s", "折り返しのお電話は{v}までお願いします"), ("en-US", "s", "my Japanese phone is {v}")),
    "phone_kr": (("ko-KR", "s", "제 휴대폰 번호는 {v} 입니다"), ("ko-KR", "s", "연락처: {v}"),
        ("ko-KR", "s", "전화번호 {v}"), ("ko-KR", "s", "{v} 으로 전화 주세요"),
        ("en-US", "s", "my Korean mobile is {v}")),
    "phone_tr": (("tr-TR", "s", "cep telefonum {v}"), ("tr-TR", "s", "telefon numaram {v}"),
        ("tr-TR", "s", "beni {v} numaradan arayın"), ("tr-TR", "s", "Tel: {v}"),
        ("de-DE", "s", "meine türkische Handynummer ist {v}")),
    "phone_ae": (("ar-AE", "s", "رقم جوالي {v}"), ("ar-AE", "s", "اتصل على {v}"), ("ar-AE", "s", "رقم الهاتف: {v}"),
        ("en-IN", "s", "my UAE mobile is {v}"), ("hi-IN", "s", "दुबई वाला फ़ोन नंबर {v} है")),
    "phone_spoken": (("en-GB", "s", "my mobile is {v}"), ("en-US", "s", "yeah the phone number is {v}"),
        ("en-IN", "s", "my number is {v}"), ("en-US", "s", "call me back on {v}")),
    "email_spoken": (("en-US", "s", "my email is {v}"), ("en-GB", "s", "it's {v}"), ("en-IN", "s", "email id {v}"),
        ("en-AU", "s", "send it to {v}")),
    "aadhaar": (("en-IN", "s", "my Aadhaar number is {v}"), ("hi-IN", "s", "मेरा आधार नंबर {v} है"),
        ("te-IN", "s", "నా ఆధార్ నంబర్ {v}"), ("mr-IN", "s", "आधार क्रमांक {v}")),
    "cpf_br": (("pt-BR", "s", "meu CPF é {v}"), ("pt-BR", "s", "CPF: {v}"), ("pt-BR", "s", "o CPF do titular {v}")),
    "dni_es": (("es-ES", "s", "mi DNI es {v}"), ("es-ES", "s", "NIE: {v}"),
        ("es-ES", "s", "documento de identidad {v}")),
    "pesel_pl": (("pl-PL", "s", "mój PESEL to {v}"), ("pl-PL", "s", "PESEL: {v}"), ("pl-PL", "s", "numer PESEL {v}")),
    "tckn_tr": (("tr-TR", "s", "TC kimlik numaram {v}"), ("tr-TR", "s", "T.C. Kimlik No: {v}"),
        ("tr-TR", "s", "kimlik no {v}")),
}


# ---- carriers of one kind: fields that name the value --------------------------------------------------------

Extra = Callable[[random.Random, Value], tuple[str, str, bool]]


def lex_slot(slot: str) -> Extra:
    """Lex V2 session state with the value in a named slot."""
    def make(rng: random.Random, val: Value) -> tuple[str, str, bool]:
        v = {"originalValue": val[1], "interpretedValue": val[1], "resolvedValues": [val[1]]}
        return "lex_slot", J({"sessionState": {"intent": {"name": "VerifyCaller", "slots": {slot: {"value": v}},
                                                          "state": "InProgress"}}, "sessionId": uid(rng)}), True
    return make


def field_json(name: str, path: tuple[str, ...], extra: dict | None = None) -> Extra:
    """A JSON record with the value at `path`."""
    def make(rng: random.Random, val: Value) -> tuple[str, str, bool]:
        obj: dict = {path[-1]: val[1], **(extra or {})}
        for key in reversed(path[:-1]):
            obj = {key: obj, "id": rng.randint(1000, 10 ** 9)}
        return name, J(obj), True
    return make


def field_text(name: str, template: str) -> Extra:
    """A text record with the value in a named field (`{v}`, `{s}` for the secret, `{n}` for a name)."""
    def make(rng: random.Random, val: Value) -> tuple[str, str, bool]:
        return name, template.replace("{v}", val[1]).replace("{s}", val[2]).replace("{n}", rng.choice(NAMES)), False
    return make


def aws_extras() -> list[Extra]:
    """Where IAM keys sit in a contact-centre stack."""
    def lambda_env(rng: random.Random, val: Value) -> tuple[str, str, bool]:
        return "lambda_env", J({"FunctionName": "connect-crm-lookup", "Runtime": "python3.12", "Environment":
                                {"Variables": {"AWS_ACCESS_KEY_ID": val[1], "AWS_SECRET_ACCESS_KEY": val[2],
                                               "CRM_BASE_URL": "https://crm.internal"}}}), True

    def create_key(rng: random.Random, val: Value) -> tuple[str, str, bool]:
        return "create_access_key", J({"AccessKey": {"UserName": "transcribe-svc", "AccessKeyId": val[1],
                                                     "Status": "Active", "SecretAccessKey": val[2],
                                                     "CreateDate": stamp(rng)}}), True
    return [lambda_env, create_key,
            field_text("credentials_csv", "User name,Password,Access key ID,Secret access key,Console login link\n"
                                          "connect-recorder,,{v},{s},https://123456789012.signin.aws.amazon.com/"),
            field_text("aws_configure", "$ aws configure\nAWS Access Key ID [None]: {v}\nAWS Secret Access Key "
                                        "[None]: {s}\nDefault region name [None]: eu-west-2")]


def key_file(rng: random.Random, val: Value) -> tuple[str, str, bool]:
    """A PKCS#8 key in a Google service-account JSON (Dialogflow, STT); other keys in an SFTP export's config."""
    if val[0] in ("p8", "ed25519"):
        return "service_account", J({"type": "service_account", "project_id": "cx-bot-31207", "private_key_id":
                                     pick(rng, HEX, 40), "private_key": val[1] + "\n", "client_email":
                                     "dialogflow@cx-bot-31207.iam.gserviceaccount.com"}), True
    return "sftp_export", J({"export": {"type": "sftp", "host": "sftp.callrecords.example", "username": "rec-sync",
                                        "privateKey": val[1]}}), True


EXTRAS: dict[str, list[Extra]] = {
    "password": [lex_slot("NewPassword"), field_json("genesys_data_action", ("credentials", "fields",
                 "clientPassword"), {"clientId": "crm-connector"}),
                 field_text("pjsip_conf", "[1001]\ntype=auth\nauth_type=userpass\nusername=1001\npassword={v}"),
                 field_text("freeswitch_xml", '<user id="1001">\n  <params>\n    <param name="password" value="{v}"/>'
                                              "\n  </params>\n</user>"),
                 field_json("bot_config", ("integrations", "zendesk", "password"), {"username": "bot@help.example"}),
                 field_text("compose_env", "services:\n  crm-db:\n    environment:\n      POSTGRES_PASSWORD: {v}")],
    "aws_secret": aws_extras(),
    "webhook": [field_json("studio_flow", ("states", "properties", "url"), {"method": "POST"}),
                field_json("zendesk_webhook", ("webhook", "endpoint"), {"http_method": "POST", "status": "active"}),
                field_text("bot_yaml", "notifications:\n  escalation_webhook: {v}\n  on: [missed_call, vip_caller]"),
                field_json("connect_flow_attr", ("Parameters", "Attributes", "alertHook"))],
    "stripe_whsec": [field_json("store_settings", ("payments", "stripe", "webhook_secret")),
                     field_text("k8s_secret", "apiVersion: v1\nkind: Secret\nstringData:\n"
                                              "  STRIPE_WEBHOOK_SECRET: {v}")],
    "connection_string": [field_json("appsettings", ("ConnectionStrings", "Recordings")),
                          field_json("lambda_env", ("Environment", "Variables", "DB_CONNECTION")),
                          field_text("helm_values", "crm:\n  database:\n    url: \"{v}\"")],
    "labelled_key": [field_text("integration_form", "Integration settings\nName: Five9 connector\nAPI Key: {v}\n"
                                                    "Status: enabled"),
                     field_json("crm_custom_field", ("fields", "Secret Key")),
                     field_text("handover_note", "Access token is {v} (expires in 90 days)")],
    "disguised": [field_json("bot_settings", ("llm", "api_key")), field_text("chat_paste", "{n}: {v}")],
    "email": [field_json("hubspot_contact", ("properties", "email"), {"firstname": "Ana"}),
              field_json("zendesk_user", ("user", "email"), {"role": "end-user"}),
              field_json("whatsapp_contact", ("contacts", "emails", "email"), {"type": "HOME"}),
              field_text("vcard", "BEGIN:VCARD\nVERSION:3.0\nFN:{n}\nEMAIL;TYPE=INTERNET:{v}\nEND:VCARD"),
              field_text("dialler_row", "first_name,last_name,email,list\nAna,Souza,{v},winback_q3")],
    "phone_us_ca": [field_json("twilio_call", ("call", "from"), {"to": "+18005550199", "direction": "inbound"}),
                    field_json("connect_ctr_endpoint", ("CustomerEndpoint", "Address"),
                               {"Type": "TELEPHONE_NUMBER"}),
                    field_text("caller_profile", "Caller profile\nName: {n}\nPhone: {v}\nTier: Gold"),
                    field_text("dialler_row", "first_name,phone_number,timezone\nJamie,{v},America/Chicago")],
    "ssn": [lex_slot("SSN"), field_json("kyc_applicant", ("applicant", "ssn"), {"dob_verified": True}),
            field_text("fraud_queue", "ALERT 88213 | synthetic-id score 0.91 | SSN: {v} | name mismatch")],
    "card": [lex_slot("CardNumber"), field_json("cx_params", ("queryResult", "parameters", "card_number"),
                                                {"expiry": "08/27"}),
             field_text("order_note", "Order #58213 note from phone order: card {v} exp 11/26 — charge on ship")],
    "iban": [field_json("refund_request", ("refund", "bank_account", "iban"), {"amount": "49.90", "currency": "EUR"}),
             field_text("refund_csv", "return_id;customer;amount;iban\nRMA-20931;{n};59,00;{v}"),
             field_json("kyc_bank", ("payout", "iban"), {"holder": "verified"})],
    "private_key": [key_file],
}
"""Extra carriers of some kinds: a quarter of their cases."""


def phone_extras(country_word: str) -> list[Extra]:
    """Caller-id and profile fields for the issue's other phone plans."""
    return [field_json("connect_ctr_endpoint", ("CustomerEndpoint", "Address"), {"Type": "TELEPHONE_NUMBER"}),
            field_json("genesys_participant", ("participants", "ani"), {"purpose": "customer"}),
            field_text("caller_profile", f"Caller profile\nName: {{n}}\n{country_word}: {{v}}\nLanguage: auto")]


EXTRAS.update({"phone_uk": phone_extras("Mobile"), "phone_fr": phone_extras("Téléphone"),
               "phone_de": phone_extras("Telefon"), "phone_in": phone_extras("Mobile No")})


# ---- the cases ------------------------------------------------------------------------------------------------

VALUES: dict[str, Callable[[random.Random, int], Value]] = {f.__name__: f for f in (
    password, aws_secret, webhook, stripe_whsec, connection_string, labelled_key, disguised, email, phone_us_ca,
    phone_uk, phone_fr, phone_de, phone_in, ssn, card, iban, twilio_auth_token, sendgrid_key, meta_access_token,
    telegram_bot_token, slack_token, stripe_key, shopify_token, google_api_key, jwt, auth_header, session_cookie,
    private_key, phone_es, phone_mx, phone_br, phone_it, phone_nl, phone_pl, phone_au, phone_ng, phone_jp, phone_kr,
    phone_tr, phone_ae, phone_spoken, email_spoken, aadhaar, cpf_br, dni_es, pesel_pl, tckn_tr)}
"""Kind -> its value generator; the issue's 16 first."""


def frames_for(mode: str, as_json: bool, avoid: tuple[str, ...] = ()) -> list[str]:
    """The carriers that take a spoken (`s`) or pasted (`p`) line, JSON or not."""
    return [n for n, (_, j, what) in FRAMES.items()
            if j == as_json and (mode == "s" or what == "paste") and n not in avoid]


def cases_of(kind: str) -> Iterator[Case]:
    """PER_KIND cases of a kind: a quarter in its own carriers where it has them (spread over its styles), the rest
    lines of its sayings in the shared carriers, a third of those JSON."""
    rng = random.Random(f"eighteenth/{kind}")
    sayings, extras, turn = SAYINGS[kind], EXTRAS.get(kind, []), dict.fromkeys("sp", 0)
    for i in range(PER_KIND):
        val = VALUES[kind](rng, i)
        if extras and (i + i // 4) % 4 == 3:
            name, text, is_json = extras[(i // 4) % len(extras)](rng, val)
        else:
            lang, mode, template = sayings[i % len(sayings)]
            names = frames_for(mode, i % 3 == 0)
            name = names[turn[mode] % len(names)]
            turn[mode] += 1
            printer, is_json, _ = FRAMES[name]
            line = template.replace("{v}", val[1]).replace("{s}", val[2]).replace("{a}", pick(rng, HEX, 32))
            text = printer(rng, line, lang)
        if is_json and "\\" in val[1]:
            text = text.replace(json.dumps(val[1], ensure_ascii=False)[1:-1], val[1])
        yield Case(kind, f"{name}/{val[0]}", text, val[2], text, is_json)


def generate() -> Iterator[Case]:
    """Every case, kind by kind."""
    for kind in VALUES:
        yield from cases_of(kind)


# ---- near misses: what these records hold that is neither secret nor personal ----------------------------------

def luhn_invalid(rng: random.Random) -> str:
    """A 16-digit number in a card range whose last digit is not its Luhn digit."""
    prefix = rng.choice(("4", "51", "55", "6011"))
    body = prefix + digits(rng, 15 - len(prefix))
    return body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10)


def toll_free(rng: random.Random) -> str:
    """A business's service number: toll-free or non-geographic, as companies publish them."""
    return rng.choice((f"1-800-{digits(rng, 3)}-{digits(rng, 4)}", f"1 (888) {digits(rng, 3)}-{digits(rng, 4)}",
                       f"0800 {digits(rng, 3)} {digits(rng, 4)}", f"0345 {digits(rng, 3)} {digits(rng, 4)}",
                       f"0 800 {digits(rng, 2)} {digits(rng, 2)} {digits(rng, 2)}",
                       f"0800 {digits(rng, 3)} {digits(rng, 4)}", f"1800 {digits(rng, 3)} {digits(rng, 4)}",
                       f"1300 {digits(rng, 3)} {digits(rng, 3)}", f"0800-{digits(rng, 3)}-{digits(rng, 4)}"))


def bad_ssn(rng: random.Random) -> str:
    """A number the SSA never issues: area 000, 666 or 9xx, group 00, or serial 0000."""
    a, g, s = f"{rng.randint(1, 899):03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"
    which = rng.randrange(5)
    a = ("000", "666", f"9{digits(rng, 2)}", a, a)[which]
    g = "00" if which == 3 else g
    s = "0000" if which == 4 else s
    return f"{a}-{g}-{s}"


NEAR: dict[str, Callable[[random.Random], str]] = {
    "call_sid": lambda r: f"CallSid CA{pick(r, HEX, 32)} status=completed CallDuration={r.randint(5, 900)}",
    "contact_id": lambda r: f"ContactId {uid(r)} transferred to queue BasicQueue at {stamp(r)}",
    "ticket_id": lambda r: f"ticket #{r.randint(10 ** 5, 10 ** 7)} merged into #{r.randint(10 ** 5, 10 ** 7)}",
    "conversation_id": lambda r: f"conversation {r.choice(('2154', '2157', '1867'))}{digits(r, 11)} reopened by "
                                 "the customer",
    "order_number": lambda r: r.choice((f"order {digits(r, 3)}-{digits(r, 7)}-{digits(r, 7)} shipped",
                                        f"your order #{r.randint(1001, 99999)} is confirmed",
                                        f"pedido ORD-2025-{digits(r, 6)} enviado")),
    "tracking_number": lambda r: r.choice((f"tracking 1Z{pick(r, B32[:26] + '0123456789', 6)}03{digits(r, 8)}",
                                           f"USPS tracking {group('9400' + digits(r, 18), 4, ' ')}",
                                           f"Royal Mail {pick(r, string.ascii_uppercase, 2)}{digits(r, 9)}GB",
                                           f"DHL Sendungsnummer {digits(r, 10)}")),
    "return_number": lambda r: f"RMA-2025-{digits(r, 5)} approved, refund of €{r.randint(5, 300)}.{digits(r, 2)}",
    "timestamp_offset": lambda r: f"00:{r.randint(0, 59):02d}:{r.randint(10, 59)}.{digits(r, 3)} --> 00:"
                                  f"{r.randint(0, 59):02d}:{r.randint(10, 59)}.{digits(r, 3)} offset "
                                  f"{r.uniform(0, 3000):.2f}s duration {r.randint(1, 3600)}s",
    "confidence": lambda r: f"confidence {r.uniform(0, 1):.4f} nluConfidence {r.uniform(0, 1):.2f} "
                            f"avg_logprob -{r.uniform(0, 1):.6f}",
    "queue_extension": lambda r: f"transferred to ext. {r.randint(100, 9999)}, queue {r.randint(1, 40)}, skill "
                                 f"{r.randint(100, 999)}, agent station {r.randint(1000, 9999)}",
    "sms_short_code": lambda r: r.choice((f"Text STOP to {r.randint(10000, 99999)} to opt out",
                                          f"Reply HELP to {r.randint(100000, 999999)} for help, msg&data rates may "
                                          "apply")),
    "service_number": lambda r: r.choice(("call us at ", "customer service: ", "appelez le ", "Hotline: ",
                                          "toll-free helpline ", "ring our team on ")) + toll_free(r),
    "ivr_digits": lambda r: f"caller pressed {r.randint(0, 9)}, then {r.randint(0, 9)}, DTMF "
                            f"{' '.join(digits(r, r.randint(2, 5)))} #, menu option {r.randint(0, 9)}",
    "sku_amount": lambda r: f"SKU TSH-{r.choice(('BLK', 'WHT', 'NVY'))}-XL-{digits(r, 4)} x{r.randint(1, 5)} @ "
                            f"${r.randint(5, 99)}.{digits(r, 2)}, EAN {digits(r, 13)}",
    "masked": lambda r: r.choice((f"card ending {digits(r, 4)}", f"**** **** **** {digits(r, 4)}",
                                  f"SSN ***-**-{digits(r, 4)}", f"phone +44 **** ***{digits(r, 3)}",
                                  f"IBAN DE** **** **** **** **{digits(r, 2)} {digits(r, 2)}",
                                  f"PaymentCardNumber=xxxxxxxxxxxx{digits(r, 4)}")),
    "placeholder": lambda r: r.choice(("password: ********", "API Key: YOUR_API_KEY", "DB_PASSWORD=<redacted>",
                                       "password={{customer.password}}", "AWS_SECRET_ACCESS_KEY=<your-secret-key>",
                                       "Secret key = [REDACTED]", "STRIPE_WEBHOOK_SECRET=whsec_...",
                                       "access token is <token>", "mi contraseña es ****", "Passwort: ••••••••")),
    "luhn_invalid": lambda r: f"card number {group(luhn_invalid(r), 4, ' ')} declined (invalid)",
    "version_id": lambda r: r.choice((f"model nova-2-general version 2024-01-09.{digits(r, 5)}",
                                      "api-version=2016-06-01", f"app build 5.{r.randint(1, 20)}.{r.randint(0, 9)} "
                                      f"({digits(r, 5)})", f"Lex bot version {r.randint(1, 40)}",
                                      f"Chrome/124.0.{digits(r, 4)}.{digits(r, 3)}")),
    "invalid_ssn": lambda r: f"SSN {bad_ssn(r)} rejected by the verification service",
    "test_card": lambda r: f"use test card {group_card(r.choice(TEST_CARDS), ' ')} with any future expiry",
    "recording_id": lambda r: f"RecordingSid RE{pick(r, HEX, 32)} stored at s3://connect-{digits(r, 6)}/"
                              f"CallRecordings/2025/0{r.randint(1, 9)}/{uid(r)}.wav",
}
"""Near-miss sort -> a line of that sort."""

NEAR_PER_SORT = 20


def generate_negatives() -> list[tuple[str, str]]:
    """NEAR_PER_SORT lines of each sort, carried like the cases (JSON one time in three; never a carrier that
    holds a caller's number of its own)."""
    rng = random.Random("eighteenth/near")
    out = []
    for sort, make in NEAR.items():
        for i in range(NEAR_PER_SORT):
            names = frames_for("p", i % 3 == 0, avoid=("whatsapp",))
            name = names[(i * 7 + len(sort)) % len(names)]
            out.append((sort, FRAMES[name][0](rng, make(rng), "en-US")))
    return out
