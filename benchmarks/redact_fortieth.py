"""The fortieth blind redaction corpus: healthcare providers, labs and pharmacies, what an agent in a clinic, a
hospital's IT or a pharmacy reads and writes. Written from the formats' public specifications by someone who read
neither the detection rules nor the other corpora.

Carriers (the `form` head): FHIR R4 JSON (Patient with an extension, searchset Bundles of Communication,
Observation and MedicationRequest notes, AuditEvent entity details), Epic-style In Basket messages and
Cerner/Oracle-style clinical events, patient portal threads, telehealth appointment payloads, pharmacy refill
requests, LIS result records, medical device gateway configs, agent tool results and intake form submissions (all
JSON, `is_json`); HL7 v2.5.1 messages (ADT^A04 with an NTE, ORU^R01 OBX TX values, ORM^O01 order notes), NCPDP
SCRIPT 2017071 XML (RxRenewalRequest notes, XML-escaped), DICOM header dumps as dcmdump prints them (Study
Comments, LT), X12 005010 837P claims (NTE) and 835 clearinghouse logs, Mirth Connect channel logs, Rhapsody
communication point properties, ASTM E1394 (LIS2-A2) instrument logs (C comment records), appointment reminder
e-mails, SMS threads, the agent's replies, EHR progress notes, infusion pump gateway YAML, OCR'd fax cover sheets
and hospital IT tickets. About a third is JSON carried.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/644-649/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the
SWIFT IBAN registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00,
serial not 0000), also as HL7 PID-19, X12 `REF*SY` and FHIR's `us-ssn` identifier system; phones, the national
numbering plans (NANP, Ofcom, ARCEP, BNetzA, TRAI/DoT) with context words in each country's language, as HL7 XTN
and FHIR `telecom` too; AWS keys, IAM's documented AKIA/ASIA ids and 40-character secrets; Slack, Discord, Teams
Workflows/Power Automate, legacy Office 365 connectors, Google Chat, Zapier, Make and Mattermost webhook URLs as
their docs print them (the secret is the token segment or `sig`/`token` value only); Stripe `whsec_` signing
secrets and `sk_live_`/`rk_live_` keys; JDBC (SQL Server, Oracle thin), ADO.NET, ODBC, PostgreSQL/MongoDB/Redis/
AMQP/SFTP URIs, Azure Storage and Service Bus connection strings (the secret is the password or key only); JWT
(RFC 7519/7515) as SMART on FHIR access/id tokens and RFC 7523 client assertions; HTTP Basic (RFC 7617), Bearer
(RFC 6750), Azure Service Bus SAS `sig`; PEM PKCS#8/SEC1 EC and Ed25519 keys and OpenSSH (PROTOCOL.key) keys;
session cookies as their frameworks issue them (Tomcat JSESSIONID, ASP.NET_SessionId, express `connect.sid`,
PHPSESSID with PHP's 26-character default); TOTP seeds (RFC 4648 base32, Google Authenticator's Key Uri Format);
recovery codes (GitHub's 5-5 hex, Google's 8 digits, 1Password's A3 Secret Key); Twilio Account SID/Auth Token and
API key secrets, SendGrid `SG.` keys, Slack `xoxb-`/`xoxp-`/`xapp-` tokens, Google `AIza` keys, GitHub `ghp_`
(CRC32 checksum) and `github_pat_` tokens. National and health ids (outside the target): UK NHS number (mod 11),
French NIR (97 - NIR mod 97 key), German KVNR (letter as 01-26, weights 1-2, mod 10), Dutch BSN (11-proof),
Canadian SIN (Luhn), Australian Medicare (weights 1-3-7-9), Indian Aadhaar (Verhoeff) and the US Medicare
Beneficiary Identifier (CMS's position rules, no check digit).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
cookie's value, a header's credential, a TOTP seed inside its otpauth URI). The agent's messages come in 28
languages with the labels in the user's language. Carriers hold no personal data of their own (record ids are
internal references of test patients). Near misses are what clinical systems hold that is neither secret nor
personal: organisation NPIs (public NPPES registry, Luhn over 80840), LOINC, ICD-10-CM, CPT/HCPCS and NDC codes,
DICOM UIDs and geometry, HL7 control ids and X12 control numbers, accession numbers, FHIR references and ETags,
payer ids, published service lines (Poison Help, NHS 111, 116 117, toll-free help desks), masked values,
placeholders, Luhn-invalid barcodes, timestamps, standard and product versions, trace ids, asset hashes and SRI
digests, CSRF field names, selectors and XPath, lab values with ranges, amounts, Rx and order numbers, tracking
numbers and the AWS docs' EXAMPLE keys.
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
from xml.sax.saxutils import escape

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

SEED = 40
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"uk_nhs", "fr_nir", "de_kvnr", "nl_bsn", "ca_sin", "au_medicare", "in_aadhaar", "us_mbi"})
"""National and health ids: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"
HEX = "0123456789abcdef"
B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"


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

FACILITIES = ["RIVERSIDE", "STMARY", "NORTHLAB", "CITYGEN", "LAKEVIEW", "MERCYHLTH", "OAKPHARM", "VALLEYIMG"]
HOSTS = ["fhir.riverside-health.org", "ehr.stmarys-hospital.net", "api.northlab.io", "interop.citygeneral.org"]


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _fid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _ts(rng: random.Random) -> str:
    """An ISO 8601 instant in 2024-2025, as FHIR `instant` writes it."""
    return (f"202{rng.randint(4, 5)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:"
            f"{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z")


def _hl7_ts(rng: random.Random) -> str:
    """An HL7 v2 DTM to the second (YYYYMMDDHHMMSS)."""
    return (f"202{rng.randint(4, 5)}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{rng.randint(0, 23):02d}"
            f"{rng.randint(0, 59):02d}{rng.randint(0, 59):02d}")


def _mrn(rng: random.Random) -> str:
    return f"E{rng.randint(1000, 9999)}"


def c_fhir_patient(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"resourceType": "Patient", "id": f"pat-{pick(rng, HEX, 8)}",
                  "meta": {"versionId": str(rng.randint(1, 9)), "lastUpdated": _ts(rng)},
                  "extension": [{"url": "http://riverside-health.org/fhir/StructureDefinition/intake-note",
                                 "valueString": snip}], "active": True})


def c_fhir_bundle(rng: random.Random, snip: str, _s: str) -> str:
    cid = _fid(rng)
    res = {"resourceType": "Communication", "id": cid, "status": "completed", "sent": _ts(rng),
           "payload": [{"contentString": snip}]}
    return _dump({"resourceType": "Bundle", "type": "searchset", "total": 1,
                  "entry": [{"fullUrl": f"https://{rng.choice(HOSTS)}/R4/Communication/{cid}", "resource": res,
                             "search": {"mode": "match"}}]})


def c_fhir_observation(rng: random.Random, snip: str, _s: str) -> str:
    code, name = rng.choice(LOINC)
    return _dump({"resourceType": "Observation", "id": f"obs-{pick(rng, HEX, 10)}", "status": "final",
                  "code": {"coding": [{"system": "http://loinc.org", "code": code, "display": name}]},
                  "effectiveDateTime": _ts(rng), "note": [{"text": snip}]})


def c_fhir_medrequest(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"resourceType": "MedicationRequest", "id": f"mr-{pick(rng, HEX, 10)}", "status": "active",
                  "intent": "order", "dosageInstruction": [{"text": "1 tablet by mouth once daily"}],
                  "note": [{"text": snip}]})


def c_fhir_auditevent(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"resourceType": "AuditEvent", "type": {"system": "http://dicom.nema.org/resources/ontology/DCM",
                                                         "code": "110110", "display": "Patient Record"},
                  "recorded": _ts(rng), "outcome": "0",
                  "entity": [{"what": {"reference": f"DocumentReference/{pick(rng, HEX, 12)}"},
                              "detail": [{"type": "query-note", "valueString": snip}]}]})


def c_epic_inbasket(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"MessageID": digits(rng, 9), "Type": "Patient Advice Request", "Status": "New",
                  "Pool": rng.choice(["FM NURSE TRIAGE", "CARDIO RN POOL", "PEDS FRONT DESK"]), "Body": snip})


def c_cerner_event(rng: random.Random, snip: str, _s: str) -> str:
    code = rng.choice(["Nursing Note", "Discharge Summary", "Phone Msg"])
    return _dump({"eventId": digits(rng, 10), "eventCode": code,
                  "resultStatus": "Auth (Verified)", "performedAt": _ts(rng), "text": snip})


def c_portal_msg(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"thread_id": f"thr_{pick(rng, ALNUM, 12)}", "subject": "Question about my visit",
                  "messages": [{"from": "patient", "sent_at": _ts(rng), "body": snip}]})


def c_telehealth(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"appointment": {"id": f"apt-{digits(rng, 7)}", "start": _ts(rng), "visit_type": "Video visit",
                                  "duration_min": rng.choice([15, 20, 30]), "instructions": snip}})


def c_pharmacy_refill(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"refill_request": {"rx_number": digits(rng, 7), "store": f"#{digits(rng, 4)}", "status": "pending",
                                     "channel": rng.choice(["IVR", "app", "web"]), "patient_comment": snip}})


def c_lis_result(rng: random.Random, snip: str, _s: str) -> str:
    code, name = rng.choice(LOINC)
    return _dump({"accession": f"{rng.randint(24, 25)}-CH-{digits(rng, 6)}", "test": name, "loinc": code,
                  "instrument": rng.choice(["cobas 8000", "Atellica CH", "Alinity c", "AU5800"]),
                  "result_comment": snip})


def c_device_config(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"gateway": {"host": f"pumpgw{rng.randint(1, 9)}.clin.local", "port": 8443, "tls": True},
                  "fleet": {"model": rng.choice(["Alaris 8015", "Sapphire", "Spectrum IQ"]),
                            "units": rng.randint(20, 400)},
                  "admin_notes": snip})


def c_agent_tool(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"role": "tool", "tool_call_id": f"call_{pick(rng, ALNUM, 24)}",
                  "name": rng.choice(["ehr_lookup", "pharmacy_status", "ticket_search", "read_fax"]), "content": snip})


def c_intake_form(rng: random.Random, snip: str, _s: str) -> str:
    return _dump({"form_id": f"frm_{pick(rng, ALNUM, 10)}", "submitted_at": _ts(rng),
                  "answers": [{"field": "anything_else", "type": "long_text", "text": snip}]})


def c_hl7_adt(rng: random.Random, snip: str, _s: str) -> str:
    fac = rng.choice(FACILITIES)
    return (f"MSH|^~\\&|EPIC|{fac}|MIRTH|{fac}|{_hl7_ts(rng)}||ADT^A04^ADT_A01|{digits(rng, 8)}|P|2.5.1\r"
            f"EVN|A04|{_hl7_ts(rng)}\rPID|1||{_mrn(rng)}^^^{fac}^MR\rPV1|1|O|CLINIC^{rng.randint(1, 40)}\r"
            f"NTE|1|P|{snip}\r")


def c_hl7_oru(rng: random.Random, snip: str, _s: str) -> str:
    code, name = rng.choice(LOINC)
    return (f"MSH|^~\\&|LIS|NORTHLAB|EHR|RIVERSIDE|{_hl7_ts(rng)}||ORU^R01^ORU_R01|{digits(rng, 8)}|P|2.5.1\n"
            f"OBR|1||{digits(rng, 9)}|{code}^{name}^LN\nOBX|1|TX|{code}^{name}^LN||{snip}||||||F\n")


def c_hl7_orm(rng: random.Random, snip: str, _s: str) -> str:
    return (f"MSH|^~\\&|CPOE|CITYGEN|RIS|CITYGEN|{_hl7_ts(rng)}||ORM^O01|{digits(rng, 8)}|P|2.5.1\n"
            f"ORC|NW|{digits(rng, 8)}\nOBR|1|{digits(rng, 8)}||71046^XR CHEST 2 VIEWS^CPT\nNTE|1|L|{snip}\n")


def c_ncpdp_script(rng: random.Random, snip: str, _s: str) -> str:
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<Message xmlns="http://www.ncpdp.org/schema/SCRIPT" '
            f'DatatypesVersion="2017071" TransportVersion="2017071">\n<Header><MessageID>{pick(rng, HEX, 20)}'
            f'</MessageID><SentTime>{_ts(rng)}</SentTime></Header>\n<Body><RxRenewalRequest><Pharmacy>'
            f'<BusinessName>Oak Street Pharmacy</BusinessName></Pharmacy><Note>{escape(snip)}</Note>'
            '</RxRenewalRequest></Body>\n</Message>')


def c_dicom_dump(rng: random.Random, snip: str, _s: str) -> str:
    head = (f"# Dicom-File-Format\n(0002,0010) UI =LittleEndianExplicit  # 20, 1 TransferSyntaxUID\n"
            f"(0008,0060) CS [{rng.choice(['CT', 'MR', 'US', 'CR'])}]  # 2, 1 Modality\n"
            f"(0020,0011) IS [{rng.randint(1, 12)}]  # 2, 1 SeriesNumber\n")
    if "\n" in snip:
        return head + f"(0032,4000) LT [\n{snip}\n]  # StudyComments\n"
    return head + f"(0032,4000) LT [{snip}]  # {len(snip)}, 1 StudyComments\n"


def c_x12_837(rng: random.Random, snip: str, _s: str) -> str:
    ctrl = digits(rng, 9)
    return (f"ISA*00*          *00*          *ZZ*RIVERSIDE      *ZZ*CLEARHOUSE     *{digits(rng, 6)}*1430*^*00501*"
            f"{ctrl}*0*P*:~\nGS*HC*RIVERSIDE*CLEARHOUSE*2025{digits(rng, 4)}*1430*{rng.randint(1, 999)}*X*"
            "005010X222A1~\n"
            f"ST*837*0001*005010X222A1~\nCLM*{pick(rng, UPPER + string.digits, 10)}*{rng.randint(80, 900)}***11:B:1~\n"
            f"NTE*ADD*{snip}~\nSE*5*0001~")


def c_clearinghouse_835(rng: random.Random, snip: str, _s: str) -> str:
    return (f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} 06:{rng.randint(10, 59)}:01 INFO era-loader "
            f"835 batch received, TRN*1*{digits(rng, 10)}*1{digits(rng, 9)}~ CLP count={rng.randint(2, 80)}\n"
            f"2025-01-01 06:00:02 WARN era-loader remark from payer portal: {snip}\n")


def c_mirth_log(rng: random.Random, snip: str, _s: str) -> str:
    chan = rng.choice(["LAB_RESULTS_IN", "ADT_TO_PACS", "RX_ROUTER", "ORU_OUTBOUND"])
    return (f" INFO 2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:14:07,"
            f"{digits(rng, 3)} "
            f"[Database Reader Polling Thread on {chan} ({rng.randint(2, 60)})] "
            f"com.mirth.connect.connectors.jdbc.DatabaseReceiver: {snip}\n")


def c_rhapsody_props(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# Rhapsody communication point: {rng.choice(['HTTP Client', 'Database', 'SFTP Client'])}\n"
            f"commpoint.name=CP_{rng.choice(FACILITIES)}_OUT\nretry.count={rng.randint(1, 5)}\n{snip}\n"
            "timeout.ms=30000\n")


def c_astm_log(rng: random.Random, snip: str, _s: str) -> str:
    return (f"<STX>1H|\\^&|||{rng.choice(['cobas', 'Sysmex XN', 'ARCHITECT'])}^{rng.randint(1, 9)}|||||||P|1|"
            f"{_hl7_ts(rng)}\n<STX>2P|1||{_mrn(rng)}\n<STX>3O|1|{digits(rng, 8)}||^^^GLU\n"
            f"<STX>4C|1|I|{snip}|G\n<STX>5L|1|N\n")


def c_reminder_email(rng: random.Random, snip: str, _s: str) -> str:
    return (f"Subject: Appointment reminder ({rng.choice(['Cardiology', 'Lab draw', 'Physical therapy'])})\n"
            f"Date: {_ts(rng)}\nContent-Type: text/plain; charset=utf-8\n\nHello,\n\n{snip}\n\n"
            "Reply C to confirm or R to reschedule. Please arrive 15 minutes early.\n")


def c_sms_thread(rng: random.Random, snip: str, _s: str) -> str:
    return (f"[{rng.randint(7, 11):02d}:{rng.randint(10, 59)}] Clinic: Reminder: your visit is tomorrow at "
            f"{rng.randint(8, 16)}:{rng.choice(['00', '30'])}. Reply Y to confirm.\n"
            f"[{rng.randint(12, 20)}:05] Patient: {snip}\n")


def c_agent_reply(rng: random.Random, snip: str, _s: str) -> str:
    return f"assistant ({rng.choice(['care-nav', 'rx-helper', 'it-helpdesk'])}): {snip}\n— {rng.randint(1, 9)} sources"


def c_ehr_note(rng: random.Random, snip: str, _s: str) -> str:
    return (f"PROGRESS NOTE — {rng.choice(['Family Medicine', 'Endocrinology', 'Urgent Care'])}\nS: Follow-up, "
            f"feels well.\nO: BP {rng.randint(105, 145)}/{rng.randint(60, 92)}, HR {rng.randint(55, 99)}\n"
            f"CONTACT/ADMIN: {snip}\nP: Continue current regimen, recheck in {rng.randint(2, 12)} weeks.\n")


def c_pump_yaml(rng: random.Random, snip: str, _s: str) -> str:
    return (f"# infusion pump gateway\nserver:\n  listen: 0.0.0.0:{rng.choice([8443, 9443, 443])}\n"
            f"drug_library: v{rng.randint(2, 9)}.{rng.randint(0, 20)}\n# ops note follows\n{snip}\n")


def c_fax_ocr(rng: random.Random, snip: str, _s: str) -> str:
    return (f"FAX COVER SHEET\nTo: {rng.choice(['Pharmacy', 'Records Dept', 'Prior Auth Unit'])}   Pages: "
            f"{rng.randint(2, 9)} (including cover)\nRe: {rng.choice(['Refill', 'Records request', 'Referral'])}\n"
            f"{snip}\nCONFIDENTIALITY NOTICE: This fax may contain protected health information.\n")


def c_it_ticket(rng: random.Random, snip: str, _s: str) -> str:
    return (f"INC{digits(rng, 7)} | Priority {rng.randint(2, 4)} | Assignment group: "
            f"{rng.choice(['Clinical Apps', 'Integration', 'Pharmacy IT', 'Imaging IT'])}\nDescription:\n{snip}\n")


Carrier = Callable[[random.Random, str, str], str]
JSON_CARRIERS: dict[str, Carrier] = {
    "fhir_patient": c_fhir_patient, "fhir_bundle": c_fhir_bundle, "fhir_observation": c_fhir_observation,
    "fhir_medrequest": c_fhir_medrequest, "fhir_auditevent": c_fhir_auditevent, "epic_inbasket": c_epic_inbasket,
    "cerner_event": c_cerner_event, "portal_msg": c_portal_msg, "telehealth": c_telehealth,
    "pharmacy_refill": c_pharmacy_refill, "lis_result": c_lis_result, "device_config": c_device_config,
    "agent_tool": c_agent_tool, "intake_form": c_intake_form}
TEXT_CARRIERS: dict[str, Carrier] = {
    "hl7_adt": c_hl7_adt, "hl7_oru": c_hl7_oru, "hl7_orm": c_hl7_orm, "ncpdp_script": c_ncpdp_script,
    "dicom_dump": c_dicom_dump, "x12_837": c_x12_837, "clearinghouse_835": c_clearinghouse_835,
    "mirth_log": c_mirth_log, "rhapsody_props": c_rhapsody_props, "astm_log": c_astm_log,
    "reminder_email": c_reminder_email, "sms_thread": c_sms_thread, "agent_reply": c_agent_reply,
    "ehr_note": c_ehr_note, "pump_yaml": c_pump_yaml, "fax_ocr": c_fax_ocr, "it_ticket": c_it_ticket}


# ---- the agent's languages ------------------------------------------------------------------------------------

AGENT_LANGS: list[tuple[str, str, str, str, str, str]] = [
    ("en", "Here is what is on file for you.", "Temporary portal password", "Email", "Card on file",
     "IBAN for refunds"),
    ("de", "Das ist bei uns hinterlegt:", "Vorläufiges Passwort", "E-Mail", "Hinterlegte Karte",
     "IBAN für Erstattungen"),
    ("fr", "Voici ce qui figure dans votre dossier :", "Mot de passe provisoire", "Courriel", "Carte enregistrée",
     "IBAN pour le remboursement"),
    ("es", "Esto es lo que consta en su ficha:", "Contraseña temporal", "Correo electrónico", "Tarjeta registrada",
     "IBAN para reembolsos"),
    ("it", "Ecco i dati registrati:", "Password provvisoria", "E-mail", "Carta registrata", "IBAN per i rimborsi"),
    ("pt", "Estes são os dados do seu cadastro:", "Senha provisória", "E-mail", "Cartão cadastrado",
     "IBAN para reembolso"),
    ("nl", "Dit staat in uw dossier:", "Tijdelijk wachtwoord", "E-mailadres", "Opgeslagen kaart",
     "IBAN voor terugbetaling"),
    ("pl", "Oto dane zapisane w karcie pacjenta:", "Hasło tymczasowe", "Adres e-mail", "Zapisana karta",
     "IBAN do zwrotu"),
    ("sv", "Det här finns registrerat:", "Tillfälligt lösenord", "E-post", "Sparat kort", "IBAN för återbetalning"),
    ("da", "Det her har vi registreret:", "Midlertidig adgangskode", "E-mail", "Gemt kort", "IBAN til refusion"),
    ("nb", "Dette er registrert hos oss:", "Midlertidig passord", "E-post", "Lagret kort", "IBAN for refusjon"),
    ("fi", "Tiedoissasi on seuraavaa:", "Väliaikainen salasana", "Sähköposti", "Tallennettu kortti",
     "IBAN palautusta varten"),
    ("cs", "Toto máme ve vaší kartě:", "Dočasné heslo", "E-mail", "Uložená karta", "IBAN pro vrácení platby"),
    ("tr", "Kayıtlı bilgileriniz:", "Geçici şifre", "E-posta", "Kayıtlı kart", "İade için IBAN"),
    ("ru", "Вот что указано в вашей карте:", "Временный пароль", "Эл. почта", "Сохранённая карта",
     "IBAN для возврата"),
    ("uk", "Ось що зазначено у вашій картці:", "Тимчасовий пароль", "Ел. пошта", "Збережена картка",
     "IBAN для повернення"),
    ("el", "Αυτά είναι καταχωρισμένα:", "Προσωρινός κωδικός πρόσβασης", "Email", "Αποθηκευμένη κάρτα",
     "IBAN για επιστροφή"),
    ("ar", "هذه بياناتك المسجلة:", "كلمة المرور المؤقتة", "البريد الإلكتروني", "البطاقة المسجلة",
     "رقم الآيبان للاسترداد"),
    ("he", "אלה הפרטים הרשומים אצלנו:", "סיסמה זמנית", "אימייל", "כרטיס שמור", "IBAN להחזר"),
    ("hi", "आपके रिकॉर्ड में यह दर्ज है:", "अस्थायी पासवर्ड", "ईमेल", "सहेजा गया कार्ड", "रिफ़ंड के लिए IBAN"),
    ("bn", "আপনার রেকর্ডে যা আছে:", "অস্থায়ী পাসওয়ার্ড", "ইমেল", "সংরক্ষিত কার্ড", "ফেরতের জন্য IBAN"),
    ("ta", "உங்கள் பதிவில் உள்ளவை:", "தற்காலிக கடவுச்சொல்", "மின்னஞ்சல்", "சேமித்த அட்டை",
     "பணம் திரும்பப் பெற IBAN"),
    ("ja", "登録内容は次のとおりです。", "仮パスワード", "メールアドレス", "登録済みカード", "返金用IBAN"),
    ("ko", "등록된 정보입니다.", "임시 비밀번호", "이메일", "등록된 카드", "환불용 IBAN"),
    ("zh", "您的档案信息如下：", "临时密码", "电子邮箱", "已保存的银行卡", "退款IBAN"),
    ("vi", "Thông tin trong hồ sơ của bạn:", "Mật khẩu tạm thời", "Email", "Thẻ đã lưu", "IBAN hoàn tiền"),
    ("th", "ข้อมูลที่บันทึกไว้:", "รหัสผ่านชั่วคราว", "อีเมล", "บัตรที่บันทึกไว้", "IBAN สำหรับคืนเงิน"),
    ("id", "Berikut data yang tercatat:", "Kata sandi sementara", "Email", "Kartu tersimpan",
     "IBAN untuk pengembalian dana"),
]
"""(language, intro, password label, e-mail label, card label, IBAN label): the agent's replies, labels in the
user's language."""

AGENT_FIELD = {"password": 2, "email": 3, "card": 4, "iban": 5}


def agent_say(i: int, field: str, value: str) -> tuple[str, str]:
    """(style, snippet): the agent's reply to user `i`, in that user's language, giving `value` under its label."""
    row = AGENT_LANGS[i % len(AGENT_LANGS)]
    return f"agent_{row[0]}", f"{row[1]}\n{row[AGENT_FIELD[field]]}: {value}"


# ---- the kinds ----------------------------------------------------------------------------------------

WORDS = ["Harbor", "maple", "Lantern", "orbit", "Cedar", "tundra", "Falcon", "pebble", "Meadow", "quartz", "Saffron",
         "violet", "Tidal", "ember", "Juniper", "cobalt", "Willow", "nectar", "Granite", "sparrow"]
SYMS = "!#$%+-.=?@_"
URI_SAFE = ALNUM + "-._~"


def password_value(rng: random.Random) -> str:
    """A password of one of three shapes people and admins choose: word+digits+symbol, random, passphrase."""
    shape = rng.randrange(3)
    if shape == 0:
        return rng.choice(WORDS) + rng.choice(WORDS).capitalize() + digits(rng, rng.randint(2, 4)) + rng.choice(SYMS)
    if shape == 1:
        body = pick(rng, ALNUM, rng.randint(11, 17))
        return body + rng.choice(SYMS) + pick(rng, ALNUM, 2)
    return "-".join(rng.choice(WORDS).lower() for _ in range(3)) + "-" + digits(rng, 2)


PW_TEMPLATES = [
    ("db_prop", "database.password={v}"), ("jdbc_prop", "db.password = {v}"), ("label", "Password: {v}"),
    ("portal_temp", "Your temporary portal password is {v} — please change it at first login."),
    ("pacs", "PACS admin pw: {v}"), ("vpn_de", "VPN-Kennwort: {v}"), ("konnektor", "Passwort für den Konnektor: {v}"),
    ("fr", "mot de passe du poste de soins : {v}"), ("es", "contraseña del servidor LIS: {v}"),
    ("pt", "senha do sistema de farmácia: {v}"), ("nl", "wachtwoord EPD: {v}"), ("pl", "hasło do HIS: {v}"),
    ("ja", "電子カルテのパスワード: {v}"), ("ko", "EMR 비밀번호: {v}"), ("zh", "HIS系统密码：{v}"),
    ("ru", "пароль МИС: {v}"), ("xml", "<password>{v}</password>"), ("mysql_cli", "mysql -u lisuser -p'{v}' lisdb"),
    ("cli_flag", "mirth-cli --user admin --password {v}"), ("pgpass_env", "PGPASSWORD={v}"),
    ("json_field", '"password": "{v}"'), ("wifi", "Clinical Wi-Fi (SSID CLIN-SECURE) key: {v}"),
]


def v_password(rng: random.Random, i: int) -> Value:
    value = password_value(rng)
    if i % 4 == 3:
        style, snip = agent_say(i // 4, "password", value)
        return style, value, snip, False
    style, template = PW_TEMPLATES[i % len(PW_TEMPLATES)]
    return style, value, template.format(v=value), False


def aws_id(rng: random.Random, temporary: bool = False) -> str:
    """An IAM access key id: AKIA (long-term) or ASIA (STS) and 16 base32 characters."""
    return ("ASIA" if temporary else "AKIA") + pick(rng, B32, 16)


def aws_secret_value(rng: random.Random) -> str:
    """A 40-character secret access key (base64 alphabet)."""
    return pick(rng, B64, 40)


AWS_TEMPLATES = [
    ("credentials_file", "[dicom-archive]\naws_access_key_id = {id}\naws_secret_access_key = {v}"),
    ("env", "AWS_ACCESS_KEY_ID={id} AWS_SECRET_ACCESS_KEY={v}"),
    ("console_csv", "Access key ID,Secret access key\n{id},{v}"),
    ("pacs_props", "s3.accessKey={id}\ns3.secretKey={v}"),
    ("boto3", "boto3.client('healthlake', aws_access_key_id='{id}', aws_secret_access_key='{v}')"),
    ("sts_json", '"AccessKeyId": "{tid}", "SecretAccessKey": "{v}", "Expiration": "2025-06-01T12:00:00Z"'),
    ("labelled", "secret access key for the HealthLake export job: {v}"),
    ("mirth_s3", "S3 destination — access key {id}, secret {v}"),
    ("colon", "{id}:{v}"), ("cli_configure", "AWS Secret Access Key [None]: {v}"),
]


def v_aws_secret(rng: random.Random, i: int) -> Value:
    value = aws_secret_value(rng)
    style, template = AWS_TEMPLATES[i % len(AWS_TEMPLATES)]
    return style, value, template.format(id=aws_id(rng), tid=aws_id(rng, True), v=value), False


def webhook_value(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, token, url): a webhook URL as the provider's docs print it and its token-bearing part."""
    sort = i % 8
    if sort == 0:
        token = pick(rng, ALNUM, 24)
        return "slack", token, (f"https://hooks.slack.com/services/T{pick(rng, UPPER + string.digits, 10)}/"
                                f"B{pick(rng, UPPER + string.digits, 10)}/{token}")
    if sort == 1:
        token = pick(rng, URLSAFE, 68)
        return "discord", token, f"https://discord.com/api/webhooks/{rng.randint(10**17, 10**19 - 1)}/{token}"
    if sort == 2:
        sig = pick(rng, URLSAFE, 43)
        return "power_automate", sig, (f"https://prod-{rng.randint(10, 99)}.westus.logic.azure.com:443/workflows/"
                                       f"{pick(rng, HEX, 32)}/triggers/manual/paths/invoke?api-version=2016-06-01"
                                       f"&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={sig}")
    if sort == 3:
        token = pick(rng, HEX, 32)
        return "o365_connector", token, (f"https://riversidehealth.webhook.office.com/webhookb2/{_fid(rng)}@"
                                         f"{_fid(rng)}/IncomingWebhook/{token}/{_fid(rng)}")
    if sort == 4:
        token = pick(rng, URLSAFE, 43)
        return "google_chat", token, (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages"
                                      f"?key=AIzaSy{pick(rng, URLSAFE, 33)}&token={token}")
    if sort == 5:
        token = pick(rng, LOWER + string.digits, 7)
        return "zapier", token, f"https://hooks.zapier.com/hooks/catch/{digits(rng, 8)}/{token}/"
    if sort == 6:
        token = pick(rng, LOWER + string.digits, 32)
        return "make", token, f"https://hook.{rng.choice(['us1', 'eu1', 'eu2'])}.make.com/{token}"
    token = pick(rng, LOWER + string.digits, 26)
    return "mattermost", token, f"https://chat.riverside-health.org/hooks/{token}"


WEBHOOK_LEADS = ["Alert channel for failed ADT feed: {u}", "webhook_url: {u}", "ALERT_WEBHOOK={u}",
                 "curl -X POST -H 'Content-Type: application/json' -d '{{\"text\":\"LIS down\"}}' {u}",
                 "Mirth alert action → HTTP POST {u}", "Benachrichtigung an {u} senden", "notify={u}",
                 "Le canal d'alerte pharmacie : {u}", "Pager fallback hook {u} (do not share)"]


def v_webhook(rng: random.Random, i: int) -> Value:
    style, token, url = webhook_value(rng, i)
    return style, token, WEBHOOK_LEADS[i % len(WEBHOOK_LEADS)].format(u=url), False


WHSEC_TEMPLATES = ["STRIPE_WEBHOOK_SECRET={v}", "Signing secret: {v}",
                   "event = stripe.Webhook.construct_event(payload, sig_header, '{v}')",
                   "endpoint secret for the copay portal is {v}", "whsec (billing prod) = {v}",
                   "Webhook-Signaturgeheimnis: {v}", "secret de signature du webhook : {v}",
                   "stripe:\n  webhook_secret: {v}"]


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    value = "whsec_" + (pick(rng, ALNUM, 32) if i % 3 else pick(rng, HEX, 64))
    return ("hex" if i % 3 == 0 else "b62"), value, WHSEC_TEMPLATES[i % len(WHSEC_TEMPLATES)].format(v=value), False


def _host(rng: random.Random) -> str:
    return rng.choice(["sqlprod01", "mirthdb", "lis-db.clin.local", "10.20.4.17", "pharmdb.internal",
                       "ehr-replica.riverside.local"])


def connection_value(rng: random.Random, i: int) -> tuple[str, str, str]:
    """(style, secret, string): a connection string and its password or key."""
    sort = i % 12
    pw = password_value(rng).replace(";", "") if sort in (0, 1, 2, 3) else pick(rng, URI_SAFE, rng.randint(12, 20))
    host, user = _host(rng), rng.choice(["mirth", "lis_app", "rx_svc", "pacs_ro", "interface"])
    if sort == 0:
        return "jdbc_sqlserver", pw, (f"jdbc:sqlserver://{host}:1433;databaseName=MirthDB;user={user};password={pw};"
                                      "encrypt=true;trustServerCertificate=false")
    if sort == 1:
        return "adonet", pw, (f"Server={host};Database=Pharmacy;User Id={user};Password={pw};"
                              "TrustServerCertificate=True;")
    if sort == 2:
        return "odbc", pw, f"Driver={{ODBC Driver 18 for SQL Server}};Server={host};Database=LIS;Uid={user};Pwd={pw};"
    if sort == 3:
        return "oracle_thin_props", pw, f"url=jdbc:oracle:thin:@{host}:1521/EHRPRD\nuser={user}\npassword={pw}"
    if sort == 4:
        return "postgres_uri", pw, f"postgresql://{user}:{pw}@{host}:5432/mirthdb?sslmode=require"
    if sort == 5:
        cluster = pick(rng, LOWER + string.digits, 5)
        return "mongodb_srv", pw, f"mongodb+srv://{user}:{pw}@cluster0.{cluster}.mongodb.net/portal"
    if sort == 6:
        return "redis_uri", pw, f"redis://:{pw}@{host}:6379/0"
    if sort == 7:
        return "amqps", pw, f"amqps://{user}:{pw}@mq.clin.local:5671/hl7"
    if sort == 8:
        return "sftp", pw, f"sftp://labdrop:{pw}@sftp.northlab.io:22/outbound/results"
    if sort == 9:
        key = base64.b64encode(rng.randbytes(64)).decode()
        return "azure_storage", key, (f"DefaultEndpointsProtocol=https;AccountName=dicomarch{digits(rng, 3)};"
                                      f"AccountKey={key};EndpointSuffix=core.windows.net")
    if sort == 10:
        key = base64.b64encode(rng.randbytes(32)).decode()
        return "servicebus", key, (f"Endpoint=sb://hl7-bus-{pick(rng, LOWER, 5)}.servicebus.windows.net/;"
                                   f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={key}")
    return "mysql_uri", pw, f"mysql://{user}:{pw}@{host}:3306/openemr"


CONN_LEADS = ["{c}", "connectionString: {c}", "DATABASE_URL={c}", "Channel 'LAB_RESULTS_IN' source: {c}",
              "Verbindungszeichenfolge: {c}", "<connection>{c}</connection>", "chaîne de connexion : {c}"]


def v_connection_string(rng: random.Random, i: int) -> Value:
    style, secret, conn = connection_value(rng, i)
    return style, secret, CONN_LEADS[i % len(CONN_LEADS)].format(c=conn), False


KEY_LABELS = ["API key: {v}", "x-api-key: {v}", "apikey={v}", "eRx vendor API key = {v}", "Lab interface key: {v}",
              "Ocp-Apim-Subscription-Key: {v}", "API-Schlüssel: {v}", "clé API : {v}", "clave de API: {v}",
              "chave da API: {v}", "APIキー: {v}", "API 키: {v}", "API密钥：{v}", "ключ API: {v}",
              "API-sleutel: {v}", "klucz API: {v}", "API key for the fax gateway is {v}", "client_secret: {v}"]


def labelled_key_value(rng: random.Random, i: int) -> str:
    shape = i % 4
    if shape == 0:
        return pick(rng, HEX, 32)
    if shape == 1:
        return pick(rng, ALNUM, rng.randint(32, 48))
    if shape == 2:
        return base64.b64encode(rng.randbytes(33)).decode()
    return pick(rng, URLSAFE, 40)


def v_labelled_key(rng: random.Random, i: int) -> Value:
    value = labelled_key_value(rng, i)
    return f"shape{i % 4}", value, KEY_LABELS[i % len(KEY_LABELS)].format(v=value), False


ZW = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]
DISGUISE_LABELS = [("Password: {v}", "Stripe secret key {v}", "GITHUB_TOKEN={v}", "API key: {v}"),
                   ("パスワード：{v}", "Stripe-Schlüssel: {v}", "token GitHub : {v}", "clave de API: {v}")]
"""The label for each base (password, Stripe key, GitHub token, hex API key), in two languages' sets."""


def disguise_base(rng: random.Random, i: int) -> str:
    sort = i % 4
    if sort == 0:
        return password_value(rng)
    if sort == 1:
        return "sk_live_" + pick(rng, ALNUM, 24)
    if sort == 2:
        return crc_token(rng, "ghp_")
    return pick(rng, HEX, 32)


def v_disguised(rng: random.Random, i: int) -> Value:
    base = disguise_base(rng, i)
    way = (i // 4) % 4
    if way == 0:
        at = rng.randint(2, len(base) - 2)
        value, raw = base[:at] + rng.choice(ZW) + base[at:], False
    elif way == 1:
        value, raw = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in base), False
    elif way == 2:
        value, raw = "".join(f"%{b:02X}" for b in base.encode()) if i % 2 else quote(base + "#!", safe=""), False
    else:
        value = "".join(f"\\u{ord(c):04x}" if k % 2 == 0 else c for k, c in enumerate(base))
        raw = True
    style = ["zero_width", "fullwidth", "percent", "json_u"][way]
    label = DISGUISE_LABELS[(i // 16) % 2][i % 4]
    return style, value, label.format(v=value), raw


LOCALS = ["maria.gonzalez", "j.okafor", "anil.kumar84", "sofia_r", "lukas.meier", "chloe.martin", "ahmed.h",
          "yuki.tanaka", "olga.petrova", "priya.s", "tom.obrien", "nkechi.eze", "mateus.lima", "emma+portal",
          "h.schmidt", "lena.kowalska", "d.nguyen", "fatima.zahra", "oliver.jones77", "camille.dupont"]
DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.in", "web.de", "orange.fr", "icloud.com", "hotmail.co.uk",
           "gmx.de", "proton.me", "riverside-health.org", "mail.ru", "naver.com", "uol.com.br", "libero.it"]
IDN_MAILS = ["josé.garcía@correo.es", "müller.jürgen@beispiel-praxis.de", "δοκιμή@παράδειγμα.ελ", "用户@例子.公司",
             "юзер@пример.рф", "रोगी@उदाहरण.भारत"]
MAIL_TEMPLATES = ["Email: {v}", "E-Mail des Patienten: {v}", "courriel : {v}", "correo electrónico: {v}",
                  "PID|1||E4410^^^RIVERSIDE^MR||||||||||^NET^Internet^{v}",
                  '"telecom": [{{"system": "email", "value": "{v}"}}]',
                  "please send the lab results to {v}", "メール: {v}", "이메일: {v}", "邮箱：{v}", "почта: {v}",
                  "ईमेल: {v}", "Reply-To: {v}", "portal login {v} locked after 5 attempts", "e-mailadres: {v}"]


def email_value(rng: random.Random, i: int) -> str:
    if i % 10 == 9:
        return IDN_MAILS[(i // 10) % len(IDN_MAILS)]
    return f"{rng.choice(LOCALS)}{rng.choice(['', '', str(rng.randint(1, 99))])}@{rng.choice(DOMAINS)}"


def v_email(rng: random.Random, i: int) -> Value:
    value = email_value(rng, i)
    if i % 4 == 3:
        style, snip = agent_say(i // 4, "email", value)
        return style, value, snip, False
    return f"t{i % len(MAIL_TEMPLATES)}", value, MAIL_TEMPLATES[i % len(MAIL_TEMPLATES)].format(v=value), False


# ---- phones ---------------------------------------------------------------------------------------------------

PhoneForm = tuple[str, Callable[[random.Random], str]]


def _nanp(rng: random.Random) -> tuple[str, str, str]:
    """NPA-NXX-XXXX under the NANP: N is 2-9, no N11, no 555 exchange, no toll-free or premium NPA."""
    while True:
        npa = f"{rng.randint(2, 9)}{rng.randint(0, 8)}{rng.randint(0, 9)}"
        nxx = f"{rng.randint(2, 9)}{digits(rng, 2)}"
        if npa[1:] != "11" and nxx[1:] != "11" and nxx != "555" and npa not in TOLL_FREE + ("900", "976"):
            return npa, nxx, digits(rng, 4)


TOLL_FREE = ("800", "833", "844", "855", "866", "877", "888")
US_FORMS: list[PhoneForm] = [
    ("paren", lambda r: "({}) {}-{}".format(*_nanp(r))), ("dash", lambda r: "{}-{}-{}".format(*_nanp(r))),
    ("dot", lambda r: "{}.{}.{}".format(*_nanp(r))), ("e164", lambda r: "+1{}{}{}".format(*_nanp(r))),
    ("intl_space", lambda r: "+1 {} {} {}".format(*_nanp(r))), ("one_dash", lambda r: "1-{}-{}-{}".format(*_nanp(r))),
    ("hl7_xtn", lambda r: "({}){}-{}".format(*_nanp(r)))]
US_CTX = ["Home phone", "cell", "Callback number", "Mobile", "pt's daughter can be reached at", "Tel",
          "best number to call", "téléphone (cellulaire)", "after-hours contact", "Ph"]


def _uk_mobile(r: random.Random) -> str:
    return f"07{r.choice('1234589')}{digits(r, 2)} {digits(r, 6)}"


UK_FORMS: list[PhoneForm] = [
    ("mobile", _uk_mobile), ("london", lambda r: f"020 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
    ("manchester", lambda r: f"0161 {r.randint(2, 9)}{digits(r, 2)} {digits(r, 4)}"),
    ("cambridge", lambda r: f"01223 {r.randint(2, 8)}{digits(r, 5)}"),
    ("cardiff", lambda r: f"029 20{digits(r, 2)} {digits(r, 4)}"),
    ("intl_mobile", lambda r: f"+44 7{r.choice('1234589')}{digits(r, 2)} {digits(r, 6)}"),
    ("intl_zero", lambda r: f"+44 (0)20 {r.choice('378')}{digits(r, 3)} {digits(r, 4)}"),
    ("compact", lambda r: f"07{r.choice('1234589')}{digits(r, 8)}")]
UK_CTX = ["mobile", "mob", "tel", "home phone", "NOK contact number", "daytime number", "please ring", "contact no."]


def _fr_pairs(r: random.Random, lead: str) -> list[str]:
    return ["0" + lead] + [digits(r, 2) for _ in range(4)]


FR_FORMS: list[PhoneForm] = [
    ("mobile_space", lambda r: " ".join(_fr_pairs(r, r.choice("67")))),
    ("fixe_paris", lambda r: " ".join(_fr_pairs(r, "1"))),
    ("fixe_region", lambda r: ".".join(_fr_pairs(r, r.choice("2345")))),
    ("compact", lambda r: "".join(_fr_pairs(r, "6"))),
    ("intl", lambda r: "+33 " + r.choice("67") + " " + " ".join(digits(r, 2) for _ in range(4))),
    ("intl_zero", lambda r: "+33 (0)1 " + " ".join(digits(r, 2) for _ in range(4))),
    ("voip", lambda r: " ".join(_fr_pairs(r, "9")))]
FR_CTX = ["portable", "tél.", "téléphone", "joignable au", "numéro de portable", "fixe", "rappeler au",
          "contact de la personne de confiance"]


DE_FORMS: list[PhoneForm] = [
    ("mobile", lambda r: f"01{r.choice(['51', '52', '57', '60', '62', '70', '71', '72', '76', '79'])} {digits(r, 8)}"),
    ("mobile_slash", lambda r: f"017{r.randint(0, 9)}/{digits(r, 7)}"),
    ("berlin", lambda r: f"030 {r.randint(2, 9)}{digits(r, 7)}"),
    ("muenchen", lambda r: f"089 {r.randint(2, 9)}{digits(r, 6)}"),
    ("koeln_ext", lambda r: f"0221 {r.randint(2, 9)}{digits(r, 5)}-{digits(r, 2)}"),
    ("intl", lambda r: f"+49 30 {r.randint(2, 9)}{digits(r, 7)}"),
    ("intl_mobile", lambda r: f"+49 15{r.choice('127')} {digits(r, 8)}"),
    ("intl_zero", lambda r: f"+49 (0)69 {r.randint(2, 9)}{digits(r, 6)}")]
DE_CTX = ["Tel.", "Telefon", "Handy", "Mobil", "Rückruf unter", "erreichbar unter", "Festnetz",
          "Angehörige erreichbar unter"]


IN_FORMS: list[PhoneForm] = [
    ("intl_space", lambda r: f"+91 {r.choice('6789')}{digits(r, 4)} {digits(r, 5)}"),
    ("intl_dash", lambda r: f"+91-{r.choice('6789')}{digits(r, 9)}"),
    ("ten", lambda r: f"{r.choice('6789')}{digits(r, 9)}"), ("zero", lambda r: f"0{r.choice('6789')}{digits(r, 9)}"),
    ("delhi", lambda r: f"011-{r.choice('2346')}{digits(r, 7)}"),
    ("mumbai_intl", lambda r: f"+91 22 {r.choice('2346')}{digits(r, 3)} {digits(r, 4)}"),
    ("bengaluru", lambda r: f"080 {r.choice('2346')}{digits(r, 3)} {digits(r, 4)}")]
IN_CTX = ["mobile", "mob.", "phone", "मोबाइल", "फ़ोन नंबर", "संपर्क", "WhatsApp", "கைபேசி", "attendant's number"]

PHONE_TEMPLATES = ["{c}: {n}", "{c} {n}", "{c} — {n} (after 5pm)", "Contact: {c} {n}", "{c}: {n}, ask for the nurse"]


def phone_case(rng: random.Random, i: int, forms: list[PhoneForm], ctx: list[str]) -> Value:
    """A phone number of one of the country's forms, under a context word; some as HL7 XTN or FHIR telecom."""
    style, make = forms[i % len(forms)]
    number = make(rng)
    if style == "hl7_xtn" or i % 9 == 4:
        return style + "+xtn", number, f"PID|1||E{digits(rng, 4)}^^^RIVERSIDE^MR||||||||||{number}^PRN^PH", False
    if i % 9 == 7:
        telecom = f'"telecom": [{{"system": "phone", "value": "{number}", "use": "mobile"}}]'
        return style + "+fhir", number, telecom, False
    template = PHONE_TEMPLATES[i % len(PHONE_TEMPLATES)]
    return style, number, template.format(c=rng.choice(ctx), n=number), False


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


# ---- SSNs, cards, IBANs ---------------------------------------------------------------------------------------

def ssn_parts(rng: random.Random) -> tuple[str, str, str]:
    """Area 001-899 but not 666, group 01-99, serial 0001-9999 (SSA)."""
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


SSN_TEMPLATES = ["SSN: {d}", "Social Security No. {d}", "SS#: {s}", "número de Seguro Social: {d}",
                 "guarantor SSN {p}", "SSN on the intake form: {d}", "last insurance card lists SSN {s}"]


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = ssn_parts(rng)
    dashed, spaced, compact = f"{a}-{g}-{s}", f"{a} {g} {s}", a + g + s
    sort = i % 10
    if sort == 0:
        fields = [""] * 20
        fields[1], fields[3], fields[19] = "1", f"E{digits(rng, 4)}^^^RIVERSIDE^MR", dashed
        return "hl7_pid19", dashed, "PID|" + "|".join(fields[1:]), False
    if sort == 1:
        member = pick(rng, UPPER + string.digits, 11)
        return "x12_ref_sy", compact, f"NM1*IL*1*****MI*{member}~\nREF*SY*{compact}~", False
    if sort == 2:
        return "fhir_identifier", dashed, ('"identifier": [{"system": "http://hl7.org/fhir/sid/us-ssn", '
                                           f'"value": "{dashed}"}}]'), False
    value = [dashed, spaced, compact][sort % 3]
    template = SSN_TEMPLATES[sort % len(SSN_TEMPLATES)]
    return ["dashed", "spaced", "compact"][sort % 3], value, template.format(d=value, s=value, p=value), False


CARD_BRANDS = ["visa", "mc", "mc2", "amex", "discover", "discover644", "jcb", "diners", "unionpay"]


def card_number(rng: random.Random, brand: str) -> str:
    """An IIN of the brand's range, random account digits, the Luhn check digit."""
    prefix, length = {
        "visa": ("4", 16), "mc": (str(rng.randint(51, 55)), 16), "mc2": (str(rng.randint(2221, 2720)), 16),
        "amex": (rng.choice(["34", "37"]), 15), "discover": (rng.choice(["6011", "65"]), 16),
        "discover644": (str(rng.randint(644, 649)), 16), "jcb": (str(rng.randint(3528, 3589)), 16),
        "diners": ("36", 14), "unionpay": ("62", rng.choice([16, 19]))}[brand]
    partial = prefix + digits(rng, length - len(prefix) - 1)
    return partial + luhn_digit(partial)


CARD_CTX = ["Card number", "CC#", "HSA card", "Kartennummer", "numéro de carte", "número de tarjeta",
            "cartão de crédito", "carta di credito", "creditcardnummer", "FSA debit card", "カード番号", "卡号",
            "номер карты", "copay card on file"]


def v_card(rng: random.Random, i: int) -> Value:
    brand = CARD_BRANDS[i % len(CARD_BRANDS)]
    number = card_number(rng, brand)
    value = [number, group_card(number, " "), group_card(number, "-")][i % 3]
    if i % 5 == 4:
        style, snip = agent_say(i // 5, "card", value)
        return f"{brand}+{style}", value, snip, False
    exp = f"{rng.randint(1, 12):02d}/{rng.randint(26, 31)}"
    ctx = CARD_CTX[i % len(CARD_CTX)]
    snip = [f"{ctx}: {value} exp {exp}", f"POS log: PAN={value} auth declined", f"{ctx} {value}",
            f"patient paid copay with {value} ({exp})"][i % 4]
    return brand, value, snip, False


IBAN_BBAN = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
             "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "IE": "4a6n8n",
             "PT": "4n4n11n2n", "SE": "3n16n1n", "DK": "4n9n1n", "NO": "4n6n1n", "FI": "3n11n", "LU": "3n13c",
             "SA": "2n18c", "AE": "3n16n", "TR": "5n1n16c"}
IBAN_CTX = ["IBAN", "Bankverbindung für die Erstattung", "IBAN du patient (remboursement)", "cuenta IBAN",
            "IBAN per il rimborso", "rekeningnummer (IBAN)", "numer rachunku IBAN", "Kontonummer",
            "refund to account", "IBAN (Krankenkasse)"]


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_BBAN)[i % len(IBAN_BBAN)]
    body = bban(rng, IBAN_BBAN[country])
    compact = country + iban_check(country, body) + body
    value = group(compact, 4, " ") if i % 2 == 0 else compact
    if i % 5 == 2:
        style, snip = agent_say(i // 5, "iban", value)
        return f"{country}+{style}", value, snip, False
    return country, value, f"{IBAN_CTX[i % len(IBAN_CTX)]}: {value}", False


# ---- more of the domain's secrets -----------------------------------------------------------------------------

def jwt_value(rng: random.Random) -> str:
    """A SMART on FHIR access token as a JWS compact serialization: header.payload.signature (RFC 7515)."""
    alg, sig_len = rng.choice([("RS256", 256), ("RS384", 256), ("ES256", 64), ("ES384", 96)])
    header = {"alg": alg, "typ": "JWT", "kid": pick(rng, HEX, 16)}
    now = rng.randint(1_720_000_000, 1_760_000_000)
    payload = {"iss": f"https://{rng.choice(HOSTS)}/oauth2", "sub": pick(rng, ALNUM, 20), "aud": rng.choice(HOSTS),
               "iat": now, "exp": now + 3600, "jti": _fid(rng),
               "scope": rng.choice(["patient/*.read launch/patient openid fhirUser", "system/Observation.read",
                                    "user/Patient.read offline_access"])}
    parts = [b64url(json.dumps(p, separators=(",", ":")).encode()) for p in (header, payload)]
    return ".".join(parts + [b64url(rng.randbytes(sig_len))])


JWT_TEMPLATES = ['"access_token": "{v}", "token_type": "Bearer", "expires_in": 3600',
                 "Authorization: Bearer {v}", "client_assertion={v}", "id_token: {v}",
                 "GET /R4/Patient?_id=123 with token {v}", "Token aus dem SMART-Launch: {v}"]


def v_jwt(rng: random.Random, i: int) -> Value:
    value = jwt_value(rng)
    return f"t{i % len(JWT_TEMPLATES)}", value, JWT_TEMPLATES[i % len(JWT_TEMPLATES)].format(v=value), False


def v_auth_header(rng: random.Random, i: int) -> Value:
    sort = i % 5
    if sort in (0, 1):
        cred = f"{rng.choice(['mirth', 'hl7feed', 'rxsvc', 'labrobot'])}:{password_value(rng)}"
        value = base64.b64encode(cred.encode()).decode()
        lead = "Authorization: Basic {v}" if sort == 0 else "Proxy-Authorization: Basic {v}"
        return "basic", value, lead.format(v=value), False
    if sort in (2, 3):
        value = pick(rng, URLSAFE, rng.randint(32, 64))
        lead = "curl -H 'Authorization: Bearer {v}' https://" + rng.choice(HOSTS) + "/R4/Patient" if sort == 2 \
            else "headers = {{'Authorization': 'Bearer {v}'}}"
        return "bearer", value, lead.format(v=value), False
    sig = quote(base64.b64encode(rng.randbytes(32)).decode(), safe="")
    return "sas", sig, (f"Authorization: SharedAccessSignature sr=https%3A%2F%2Fhl7-bus.servicebus.windows.net%2Fadt&"
                        f"sig={sig}&se={rng.randint(1_750_000_000, 1_790_000_000)}&skn=SendOnly"), False


def private_key_value(rng: random.Random, i: int) -> tuple[str, str]:
    """(style, PEM or OpenSSH text) for a key derived from the generator (so the corpus is deterministic)."""
    sort = i % 4
    if sort == 3:
        seed = rng.randbytes(32)
        public = ed25519.Ed25519PrivateKey.from_private_bytes(seed).public_key().public_bytes_raw()
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"mirth@sftp-gw")
        body = group(base64.b64encode(blob).decode(), 70, "\n")
        return "openssh", f"-----BEGIN OPENSSH PRIVATE KEY-----\n{body}\n-----END OPENSSH PRIVATE KEY-----"
    if sort == 2:
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        fmt, style = serialization.PrivateFormat.PKCS8, "pkcs8_ed25519"
    else:
        curve = ec.SECP256R1() if sort == 0 else ec.SECP384R1()
        key = ec.derive_private_key(rng.getrandbits(curve.key_size - 1) + 1, curve)
        fmt = serialization.PrivateFormat.PKCS8 if sort == 0 else serialization.PrivateFormat.TraditionalOpenSSL
        style = "pkcs8_p256" if sort == 0 else "sec1_p384"
    pem = key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()
    return style, pem


KEY_LEADS = ["{v}", "# SMART backend services signing key (kid=rs-prod-1)\n{v}", "sftp.identity=\n{v}",
             "Schlüssel für den TI-Konnektor:\n{v}", "ssl.key.pem =\n{v}"]


def v_private_key(rng: random.Random, i: int) -> Value:
    style, pem = private_key_value(rng, i)
    if i % 6 == 5:
        snip = '{"type": "service_account", "project_id": "clin-ai", "private_key": ' + json.dumps(pem) + "}"
        return style + "+gcp_json", pem, snip, True
    return style, pem, KEY_LEADS[i % len(KEY_LEADS)].format(v=pem), False


def cookie_value(rng: random.Random, i: int) -> tuple[str, str]:
    """(cookie name, value) as the framework issues them."""
    sort = i % 5
    if sort == 0:
        return "JSESSIONID", pick(rng, "0123456789ABCDEF", 32) + rng.choice(["", ".node1", ".epicweb02"])
    if sort == 1:
        return "ASP.NET_SessionId", pick(rng, LOWER + "012345", 24)
    if sort == 2:
        return "connect.sid", f"s%3A{pick(rng, URLSAFE, 32)}.{pick(rng, B64, 43)}"
    if sort == 3:
        return "PHPSESSID", pick(rng, "0123456789abcdefghijklmnopqrstuv", 26)
    return ".AspNetCore.Session", "CfDJ8" + pick(rng, URLSAFE, rng.randint(90, 140))


COOKIE_LEADS = ["Cookie: {n}={v}", "Set-Cookie: {n}={v}; Path=/; Secure; HttpOnly; SameSite=Lax",
                '{{"name": "{n}", "value": "{v}", "domain": "mychart.riverside-health.org"}}',
                "session cookie {n}={v} from the portal HAR", "curl -b '{n}={v}' https://portal.riverside-health.org/"]


def v_session_cookie(rng: random.Random, i: int) -> Value:
    name, value = cookie_value(rng, i)
    return name, value, COOKIE_LEADS[i % len(COOKIE_LEADS)].format(n=name, v=value), False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = base64.b32encode(rng.randbytes(rng.choice([10, 20]))).decode().rstrip("=")
    sort = i % 4
    if sort == 0:
        issuer = rng.choice(["Riverside%20EHR", "EPCS", "NorthLab"])
        return "otpauth", seed, (f"otpauth://totp/{issuer}:{rng.choice(LOCALS)}?secret={seed}&issuer={issuer}"
                                 "&algorithm=SHA1&digits=6&period=30"), False
    if sort == 1:
        value = group(seed.lower(), 4, " ")
        return "setup_key", value, f"Can't scan? Enter this setup key: {value}", False
    if sort == 2:
        return "labelled", seed, f"EPCS two-factor TOTP secret: {seed}", False
    return "de", seed, f"TOTP-Geheimnis für den Praxisausweis: {seed}", False


def recovery_value(rng: random.Random, i: int) -> tuple[str, str]:
    sort = i % 4
    if sort == 0:
        return "github", f"{pick(rng, HEX, 5)}-{pick(rng, HEX, 5)}"
    if sort == 1:
        return "google", f"{digits(rng, 4)} {digits(rng, 4)}"
    if sort == 2:
        return "alnum", "-".join(pick(rng, UPPER + string.digits, 4) for _ in range(3))
    safe = "23456789ABCDEFGHJKLMNPQRSTVWXYZ"
    head = f"A3-{pick(rng, safe, 6)}-{pick(rng, safe, 6)}-"
    return "1password", head + "-".join(pick(rng, safe, 5) for _ in range(4))


RECOVERY_LEADS = ["Recovery code: {v}", "Backup code {v} (unused)", "Wiederherstellungscode: {v}",
                  "code de récupération : {v}", "código de recuperación: {v}", "Use one of your backup codes: {v}",
                  "リカバリーコード: {v}"]


def v_recovery_code(rng: random.Random, i: int) -> Value:
    style, value = recovery_value(rng, i)
    lead = RECOVERY_LEADS[i % len(RECOVERY_LEADS)]
    if style == "1password":
        lead = "1Password Emergency Kit — Secret Key: {v}"
    return style, value, lead.format(v=value), False


TWILIO_LEADS = ["TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={v}", "client = Client('{sid}', '{v}')",
                "curl -u {sid}:{v} https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json",
                "Auth Token (reminders project): {v}", "twilio:\n  account_sid: {sid}\n  auth_token: {v}",
                "API key {ksid} secret {v}"]


def v_twilio_token(rng: random.Random, i: int) -> Value:
    sort = i % len(TWILIO_LEADS)
    value = pick(rng, ALNUM, 32) if sort == 5 else pick(rng, HEX, 32)
    text = TWILIO_LEADS[sort].format(sid="AC" + pick(rng, HEX, 32), ksid="SK" + pick(rng, HEX, 32), v=value)
    return ("api_key" if sort == 5 else "auth_token"), value, text, False


PROVIDER_LEADS = ["{e}={v}", "export {e}={v}", "key: {v}", '"api_key": "{v}"', "{v}", "Authorization: Bearer {v}",
                  "{e}: {v} (rotated last week)"]


def provider(env: str, make: Callable[[random.Random, int], str]) -> Callable[[random.Random, int], Value]:
    """A kind of provider token written under the leads people use for them."""
    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng, i)
        lead = PROVIDER_LEADS[i % len(PROVIDER_LEADS)]
        return f"lead{i % len(PROVIDER_LEADS)}", value, lead.format(e=env, v=value), False
    return gen


def sendgrid_key(rng: random.Random, _i: int) -> str:
    return f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"


def stripe_key(rng: random.Random, i: int) -> str:
    return ("sk_live_" if i % 3 else "rk_live_") + pick(rng, ALNUM, 99 if i % 4 == 0 else 24)


def slack_token(rng: random.Random, i: int) -> str:
    sort = i % 3
    if sort == 0:
        return f"xoxb-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, ALNUM, 24)}"
    if sort == 1:
        return f"xoxp-{digits(rng, 12)}-{digits(rng, 12)}-{digits(rng, 13)}-{pick(rng, HEX, 32)}"
    return f"xapp-1-A{pick(rng, UPPER + string.digits, 10)}-{digits(rng, 13)}-{pick(rng, HEX, 64)}"


def google_key(rng: random.Random, _i: int) -> str:
    return "AIza" + pick(rng, URLSAFE, 35)


def github_token(rng: random.Random, i: int) -> str:
    if i % 3 == 2:
        return f"github_pat_{pick(rng, ALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    return crc_token(rng, "ghp_")


PROVIDERS: dict[str, Callable[[random.Random, int], Value]] = {
    "sendgrid_key": provider("SENDGRID_API_KEY", sendgrid_key),
    "stripe_secret_key": provider("STRIPE_SECRET_KEY", stripe_key),
    "slack_token": provider("SLACK_BOT_TOKEN", slack_token), "google_api_key": provider("GOOGLE_API_KEY", google_key),
    "github_token": provider("GITHUB_TOKEN", github_token)}


# ---- national and health ids (outside the target) -------------------------------------------------------------

def uk_nhs(rng: random.Random) -> str:
    """NHS number: nine digits weighted 10..2, check 11 - sum mod 11 (11 -> 0, 10 never issued); 3-3-4."""
    while True:
        body = rng.choice("467") + digits(rng, 8)
        check = 11 - sum(int(d) * (10 - k) for k, d in enumerate(body)) % 11
        if check != 10:
            num = body + str(check % 11)
            return f"{num[:3]} {num[3:6]} {num[6:]}"


def fr_nir(rng: random.Random) -> str:
    """NIR: sex, year, month, departement (01-95 but 20), commune, order; key 97 - NIR mod 97."""
    dept = rng.choice([d for d in range(1, 96) if d != 20])
    parts = [str(rng.randint(1, 2)), digits(rng, 2), f"{rng.randint(1, 12):02d}", f"{dept:02d}",
             f"{rng.randint(1, 990):03d}", f"{rng.randint(1, 999):03d}"]
    key = f"{97 - int(''.join(parts)) % 97:02d}"
    return " ".join(parts + [key])


def de_kvnr(rng: random.Random) -> str:
    """KVNR: a letter (as 01-26) and eight digits, weighted 1-2 alternately, digit sums, mod 10 check digit."""
    letter, body = rng.choice(UPPER), digits(rng, 8)
    total = 0
    for k, d in enumerate(f"{ord(letter) - 64:02d}" + body):
        product = int(d) * (1 if k % 2 == 0 else 2)
        total += product - 9 if product > 9 else product
    return f"{letter}{body}{total % 10}"


def nl_bsn(rng: random.Random) -> str:
    """BSN: nine digits passing the 11-proof (weights 9..2, and -1 on the last)."""
    while True:
        body = str(rng.randint(1, 9)) + digits(rng, 7)
        last = sum(int(d) * (9 - k) for k, d in enumerate(body)) % 11
        if last < 10:
            return body + str(last)


def ca_sin(rng: random.Random) -> str:
    """SIN: first digit 1-7 or 9, Luhn check digit; printed 3-3-3."""
    partial = rng.choice("12345679") + digits(rng, 7)
    num = partial + luhn_digit(partial)
    return f"{num[:3]} {num[3:6]} {num[6:]}"


def au_medicare(rng: random.Random) -> str:
    """Medicare card number: first digit 2-6, check digit sum(d * 1,3,7,9,...) mod 10, issue number; 4-5-1."""
    body = str(rng.randint(2, 6)) + digits(rng, 7)
    check = sum(int(d) * w for d, w in zip(body, (1, 3, 7, 9, 1, 3, 7, 9), strict=True)) % 10
    num = body + str(check) + str(rng.randint(1, 9))
    return f"{num[:4]} {num[4:9]} {num[9]}"


VERHOEFF_D = ["0123456789", "1234067895", "2340178956", "3401289567", "4012395678", "5987604321", "6598710432",
              "7659821043", "8765932104", "9876543210"]
VERHOEFF_P = ["0123456789", "1576283094", "5803796142", "8916043527", "9453126870", "4286573901", "2793806415",
              "7046913258"]
VERHOEFF_INV = "0432156789"


def verhoeff_digit(num: str) -> str:
    """The Verhoeff check digit (dihedral group D5) that completes `num`."""
    c = 0
    for k, d in enumerate(reversed(num)):
        c = int(VERHOEFF_D[c][int(VERHOEFF_P[(k + 1) % 8][int(d)])])
    return VERHOEFF_INV[c]


def in_aadhaar(rng: random.Random) -> str:
    """Aadhaar: twelve digits, first 2-9, the last a Verhoeff check digit; printed 4-4-4."""
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    return group(body + verhoeff_digit(body), 4, " ")


MBI_ALPHA = "ACDEFGHJKMNPQRTUVWXY"


def us_mbi(rng: random.Random) -> str:
    """MBI (CMS): C A AN N A AN N A A N N, letters without S, L, O, I, B, Z; printed 4-3-4 on the card."""
    an = MBI_ALPHA + string.digits
    chars = [str(rng.randint(1, 9)), rng.choice(MBI_ALPHA), rng.choice(an), str(rng.randint(0, 9)),
             rng.choice(MBI_ALPHA), rng.choice(an), str(rng.randint(0, 9)), rng.choice(MBI_ALPHA),
             rng.choice(MBI_ALPHA), str(rng.randint(0, 9)), str(rng.randint(0, 9))]
    mbi = "".join(chars)
    return f"{mbi[:4]}-{mbi[4:7]}-{mbi[7:]}" if rng.random() < 0.5 else mbi


IDS: dict[str, tuple[Callable[[random.Random], str], list[str]]] = {
    "uk_nhs": (uk_nhs, ["NHS number", "NHS No.", "NHS-Nummer"]),
    "fr_nir": (fr_nir, ["N° de sécurité sociale", "NIR", "numéro de sécu (carte Vitale)"]),
    "de_kvnr": (de_kvnr, ["Versichertennummer", "KVNR", "eGK-Versichertennummer"]),
    "nl_bsn": (nl_bsn, ["BSN", "burgerservicenummer", "BSN patiënt"]),
    "ca_sin": (ca_sin, ["SIN", "NAS", "Social Insurance Number"]),
    "au_medicare": (au_medicare, ["Medicare card no.", "Medicare number", "Medicare #"]),
    "in_aadhaar": (in_aadhaar, ["Aadhaar", "आधार संख्या", "Aadhaar no."]),
    "us_mbi": (us_mbi, ["Medicare Beneficiary Identifier (MBI)", "MBI", "Medicare ID"])}
ID_TEMPLATES = ["{c}: {v}", "registration — {c} {v}", "| Field | Value |\n|---|---|\n| {c} | {v} |",
                "{c} {v} verified at check-in", "insurance: {c}={v}"]


def national_id(kind: str) -> Callable[[random.Random, int], Value]:
    """A national or health id of `kind` under one of its labels."""
    make, labels = IDS[kind]

    def gen(rng: random.Random, i: int) -> Value:
        value = make(rng)
        template = ID_TEMPLATES[i % len(ID_TEMPLATES)]
        return f"t{i % len(ID_TEMPLATES)}", value, template.format(c=labels[i % len(labels)], v=value), False
    return gen


KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "private_key": v_private_key, "session_cookie": v_session_cookie,
    "totp_seed": v_totp_seed, "recovery_code": v_recovery_code, "twilio_token": v_twilio_token, **PROVIDERS,
    **{kind: national_id(kind) for kind in IDS}}


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

LOINC = [("2345-7", "Glucose [Mass/volume] in Serum or Plasma"), ("718-7", "Hemoglobin [Mass/volume] in Blood"),
         ("4548-4", "Hemoglobin A1c/Hemoglobin.total in Blood"),
         ("2160-0", "Creatinine [Mass/volume] in Serum or Plasma"),
         ("2951-2", "Sodium [Moles/volume] in Serum or Plasma"),
         ("2823-3", "Potassium [Moles/volume] in Serum or Plasma"),
         ("6690-2", "Leukocytes [#/volume] in Blood by Automated count"), ("777-3", "Platelets [#/volume] in Blood"),
         ("1742-6", "Alanine aminotransferase [Enzymatic activity/volume] in Serum or Plasma"),
         ("2093-3", "Cholesterol [Mass/volume] in Serum or Plasma"),
         ("3016-3", "Thyrotropin [Units/volume] in Serum or Plasma"),
         ("8867-4", "Heart rate"), ("8480-6", "Systolic blood pressure"), ("29463-7", "Body weight")]
LAB_VALUES = [("Glucose", "mg/dL", 70, 99), ("Hemoglobin", "g/dL", 12, 17), ("HbA1c", "%", 4, 6),
              ("Creatinine", "mg/dL", 0.6, 1.3), ("Sodium", "mmol/L", 135, 145), ("Potassium", "mmol/L", 3.5, 5.1),
              ("WBC", "x10^3/uL", 4.0, 11.0), ("Platelets", "x10^3/uL", 150, 400), ("TSH", "mIU/L", 0.4, 4.0),
              ("LDL", "mg/dL", 0, 100)]
ICD10 = ["E11.9", "I10", "J45.909", "Z00.00", "E78.5", "M54.5", "F41.1", "K21.9", "N39.0", "R05.9", "Z23", "E03.9"]
CPT = ["99213", "99214", "99395", "80053", "85025", "83036", "36415", "93000", "71046", "G0439", "J1100", "90471"]
VERSIONS = ["HL7 v2.5.1", "FHIR R4 (4.0.1)", "US Core 6.1.0", "Mirth Connect 4.5.2", "NCPDP SCRIPT 2017071",
            "X12 005010X222A1", "X12 005010X221A1", "DICOM PS3.6 2024b", "Rhapsody 7.2", "Epic Nov 2024",
            "openEHR 1.1.0", "ASTM E1394-97", "CLSI LIS2-A2", "SMART App Launch 2.2.0", "Orthanc 1.12.4"]
SERVICE_LINES = ["Poison Help: 1-800-222-1222", "988 Suicide & Crisis Lifeline: call or text 988",
                 "Medicare: 1-800-MEDICARE (1-800-633-4227)", "NHS 111 — call 111",
                 "Ärztlicher Bereitschaftsdienst 116 117",
                 "SAMU : composez le 15", "Emergency: 911", "Notruf 112", "Samaritans: 116 123", "UK emergency 999"]


def npi(rng: random.Random) -> str:
    """An NPI: nine digits and the Luhn digit computed over the 80840 prefix (CMS)."""
    body = "1" + digits(rng, 8)
    return body + luhn_digit("80840" + body)


def _luhn_bad(rng: random.Random) -> str:
    partial = rng.choice("4536") + digits(rng, 14)
    return partial + str((int(luhn_digit(partial)) + rng.randint(1, 9)) % 10)


def nm_npi(r: random.Random) -> str:
    n = npi(r)
    fhir = f'"identifier": [{{"system": "http://hl7.org/fhir/sid/us-npi", "value": "{n}"}}]'
    return r.choice([f"NM1*85*2*RIVERSIDE CLINIC*****XX*{n}~", f"Billing provider NPI (type 2): {n}",
                     f"Pharmacy NPI {n} / NCPDP {digits(r, 7)}", fhir])


def nm_loinc(r: random.Random) -> str:
    code, name = r.choice(LOINC)
    return r.choice([f"LOINC {code} ({name})", f"OBX|1|NM|{code}^{name}^LN||", f"order code mapped to {code}"])


def nm_codes(r: random.Random) -> str:
    return (f"Dx: {', '.join(r.sample(ICD10, 2))}; CPT {r.choice(CPT)}-{r.choice(['25', '59', 'GT', '95'])}, "
            f"{r.choice(CPT)}; POS {r.choice(['11', '02', '10', '22'])}")


def nm_ndc(r: random.Random) -> str:
    shape = r.randrange(4)
    code = [f"{digits(r, 4)}-{digits(r, 4)}-{digits(r, 2)}", f"{digits(r, 5)}-{digits(r, 3)}-{digits(r, 2)}",
            f"{digits(r, 5)}-{digits(r, 4)}-{digits(r, 1)}", f"N4{digits(r, 11)}"][shape]
    return f"LIN**N4*{code[2:]}~" if shape == 3 else r.choice([f"NDC {code}", f"Dispensed NDC: {code}, qty 30"])


def nm_dicom_uid(r: random.Random) -> str:
    return r.choice([f"(0008,0016) UI =1.2.840.10008.5.1.4.1.1.{r.choice(['2', '4', '7', '1.1', '6.1'])}",
                     f"(0020,000d) UI [2.25.{r.getrandbits(122)}]  # StudyInstanceUID",
                     f"SeriesInstanceUID 1.2.840.113619.2.{r.randint(55, 450)}.{digits(r, 4)}.{digits(r, 7)}."
                     f"{digits(r, 5)}.{r.randint(1, 99)}",
                     "TransferSyntaxUID 1.2.840.10008.1.2.4.90 (JPEG 2000 lossless)"])


def nm_hl7_control(r: random.Random) -> str:
    ctrl = r.choice([digits(r, 8), f"MSG{digits(r, 6)}", pick(r, HEX, 20)])
    return r.choice([f"MSA|AA|{ctrl}", f"ACK^A04 received for MSH-10 {ctrl}", f"duplicate control id {ctrl} skipped"])


def nm_accession(r: random.Random) -> str:
    yy = r.randint(24, 25)
    return r.choice([f"Accession {yy}-CH-{digits(r, 6)}", f"Specimen ID S{yy}-{digits(r, 6)}",
                     f"Tube barcode {digits(r, 10)} (lavender top)", f"ORC-3 filler order {yy}{digits(r, 7)}"])


def nm_fhir_ref(r: random.Random) -> str:
    rid = pick(r, LOWER + string.digits + "-", 16)
    return r.choice([f"ETag: W/\"{r.randint(1, 30)}\"",
                     f"Location: https://{r.choice(HOSTS)}/R4/Observation/{rid}/_history/{r.randint(1, 9)}",
                     f'"reference": "Practitioner/{rid}"', f"meta.versionId {r.randint(1, 99)}, Encounter/{rid}"])


def nm_x12_control(r: random.Random) -> str:
    return r.choice([f"ISA13 interchange control {digits(r, 9)}", f"GS06 {r.randint(1, 9999)}, ST02 {digits(r, 4)}",
                     f"TRN*1*{digits(r, 10)}*1{digits(r, 9)}~",
                     f"CLP*{pick(r, UPPER + string.digits, 12)}*1*{r.randint(100, 999)}*{r.randint(50, 99)}**12*"
                     f"{digits(r, 14)}~"])


def nm_payer_id(r: random.Random) -> str:
    payer, pid = r.choice([("Aetna", "60054"), ("UnitedHealthcare", "87726"), ("Cigna", "62308"), ("Humana", "61101")])
    return r.choice([f"Payer ID {pid} ({payer})", f"NM1*PR*2*{payer.upper()}*****PI*{pid}~",
                     f"route claim to payer {pid}"])


def nm_service_line(r: random.Random) -> str:
    if r.random() < 0.5:
        return r.choice(SERVICE_LINES)
    npa = r.choice(["800", "833", "844", "855", "866", "877", "888"])
    desk = r.choice(["Pharmacy help desk", "Prior auth line", "Billing office (toll-free)"])
    return f"{desk}: 1-{npa}-{r.randint(200, 999)}-{digits(r, 4)}"


def nm_masked(r: random.Random) -> str:
    last = digits(r, 4)
    return r.choice([f"SSN ***-**-{last}", f"Card ending in {last}", f"•••• •••• •••• {last}", f"XXXX-XXXX-XXXX-{last}",
                     f"IBAN DE** **** **** **** **{last[:2]}", f"phone (***) ***-{last}", "Password: ********"])


def nm_placeholder(r: random.Random) -> str:
    return r.choice(["Email: you@example.com", "password: <your password>", "Phone: (XXX) XXX-XXXX", "SSN: xxx-xx-xxxx",
                     "api_key: YOUR_API_KEY_HERE", "DB_PASSWORD=${DB_PASSWORD}", "To: {{patient.email}}",
                     "Mobile: {{patient.mobile}}", "[REDACTED]", "token=<redacted>", "name@example.org"])


def nm_luhn_invalid(r: random.Random) -> str:
    return f"{r.choice(['Requisition barcode', 'Kit serial', 'Lot/serial', 'Pump asset tag'])}: {_luhn_bad(r)}"


def nm_timestamp(r: random.Random) -> str:
    return r.choice([f"MSH-7 {_hl7_ts(r)}-0{r.randint(4, 8)}00", f"(0008,0020) DA [{_hl7_ts(r)[:8]}]",
                     f"(0008,0030) TM [{_hl7_ts(r)[8:]}.{digits(r, 6)}]", f"lastUpdated {_ts(r)}",
                     f"collected {_ts(r)}"])


def nm_version(r: random.Random) -> str:
    return r.choice([f"{r.choice(VERSIONS)}", f"interface engine upgraded to {r.choice(VERSIONS)}",
                     f"CapabilityStatement fhirVersion 4.0.1, software {r.randint(1, 9)}.{r.randint(0, 30)}."
                     f"{r.randint(0, 9)}"])


def nm_trace_id(r: random.Random) -> str:
    return r.choice([f"traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01", f"X-Request-Id: {_fid(r)}",
                     f"Mirth message id {r.randint(1, 9_999_999)}", f"correlationId={_fid(r)}"])


def nm_asset_hash(r: random.Random) -> str:
    return r.choice([f"/static/js/portal.{pick(r, HEX, 8)}.js", f"styles.css?v={pick(r, HEX, 8)}",
                     f'integrity="sha384-{base64.b64encode(r.randbytes(48)).decode()}"', f"build {pick(r, HEX, 7)}"])


def nm_csrf_name(r: random.Random) -> str:
    name = r.choice(["__RequestVerificationToken", "csrfmiddlewaretoken", "authenticity_token", "_csrf", "X-CSRF-Token",
                     "X-XSRF-TOKEN"])
    return r.choice([f'form field "{name}" missing', f"add the {name} header",
                     f'<input type="hidden" name="{name}">'])


def nm_selector(r: random.Random) -> str:
    return r.choice(["#patient-search-input", "div.appt-card > button[data-testid='reschedule']",
                     "//ClinicalDocument/recordTarget/patientRole/id", "PID-3.1", "OBX-5", "$.entry[0].resource.id",
                     f"#rx-row-{r.randint(1, 50)} td.status"])


def nm_dicom_geometry(r: random.Random) -> str:
    spacing = r.choice(["0.703125", "0.488281", "0.9765625"])
    x, y, z = r.randint(100, 250), r.randint(100, 250), r.randint(-300, 100)
    return r.choice([f"(0028,0030) DS [{spacing}\\{spacing}]  # PixelSpacing",
                     f"Rows {r.choice([256, 512])} Columns {r.choice([256, 512])}",
                     f"ImagePositionPatient -{x}.5\\-{y}.0\\{z}.75",
                     f"WindowCenter {r.randint(30, 400)} WindowWidth {r.randint(80, 2000)}",
                     f"viewport {r.choice([1280, 1920])}x{r.choice([720, 1080])} px"])


def nm_lab_value(r: random.Random) -> str:
    name, unit, lo, hi = r.choice(LAB_VALUES)
    return f"{name} {round(r.uniform(lo * 0.8, hi * 1.2), 1)} {unit} (ref {lo}-{hi})"


def nm_amount(r: random.Random) -> str:
    return r.choice([f"Copay ${r.randint(5, 75)}.00",
                     f"Allowed {r.randint(40, 900)}.{digits(r, 2)}, paid {r.randint(10, 700)}.{digits(r, 2)}",
                     f"CAS*PR*1*{r.randint(10, 300)}.{digits(r, 2)}~",
                     f"BPR*I*{r.randint(1000, 99999)}.{digits(r, 2)}*C*ACH~"])


def nm_rx_order(r: random.Random) -> str:
    return r.choice([f"Rx# {digits(r, 7)}", f"Order #ORD-2025-{digits(r, 6)}",
                     f"Fill {r.randint(1, 5)} of 5, Rx {digits(r, 7)}",
                     f"Refill request {digits(r, 9)} queued"])


def nm_tracking(r: random.Random) -> str:
    return r.choice([f"UPS 1Z{pick(r, UPPER + string.digits, 6)}{digits(r, 10)}", f"FedEx {digits(r, 12)}",
                     f"USPS 9400 {digits(r, 4)} {digits(r, 4)} {digits(r, 4)} {digits(r, 4)} {digits(r, 2)}"])


def nm_aws_example(r: random.Random) -> str:
    return r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                     "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                     "docs example: AKIAIOSFODNN7EXAMPLE / wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "npi_org": nm_npi, "loinc": nm_loinc, "icd_cpt": nm_codes, "ndc": nm_ndc, "dicom_uid": nm_dicom_uid,
    "hl7_control": nm_hl7_control, "accession": nm_accession, "fhir_ref": nm_fhir_ref, "x12_control": nm_x12_control,
    "payer_id": nm_payer_id, "service_line": nm_service_line, "masked": nm_masked, "placeholder": nm_placeholder,
    "luhn_invalid": nm_luhn_invalid, "timestamp": nm_timestamp, "version": nm_version, "trace_id": nm_trace_id,
    "asset_hash": nm_asset_hash, "csrf_name": nm_csrf_name, "selector": nm_selector,
    "dicom_geometry": nm_dicom_geometry,
    "lab_value": nm_lab_value, "amount": nm_amount, "rx_order": nm_rx_order, "tracking": nm_tracking,
    "aws_example": nm_aws_example}


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
