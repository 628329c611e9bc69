"""The thirty-fifth blind redaction corpus: logistics, travel and hospitality, what an agent that moves goods and
people sees. Written from the formats' public specifications by someone who read neither the detection rules nor
the other corpora (only the twenty-first's interface).

Carriers (the `form` head). JSON (`is_json`, about a third): Oracle Hospitality OHIP reservations, Mews Connector
customers, Cloudbeds reservations, Toast order webhooks, Square `payment.updated` webhooks, Uber Eats and DoorDash
order/delivery webhooks, UPS Shipping, FedEx Ship and DHL Express request bodies, Samsara driver/route events,
Geotab DVIR logs, rental-car agreements, travel-management (TMC) trip exports and Zebra DataWedge scan intents.
Text: printed hotel folios, SiteMinder pmsXchange OTA_HotelResNotifRQ XML, X12 204/214/856 (NTE/K1 free text),
EDIFACT IFTMIN (FTX), WMS CSV exports, dispatch chat logs, airline and rail booking confirmations as e-mail text,
ride-hailing receipts, rental agreements, handheld scanner logs, the agent's messages to users in 28 languages
(labels in the user's language), curl -v traces against carrier APIs, integration .env/YAML files, kitchen/POS
tickets and TMC itineraries.

Formats and their sources: cards, ISO/IEC 7812 IIN ranges (Visa 4, Mastercard 51-55/2221-2720, Amex 34/37,
Discover 6011/65, JCB 3528-3589, Diners 36, UnionPay 62) with the Luhn digit; IBANs, ISO 13616 and the SWIFT IBAN
registry's BBAN structures (MOD 97-10); SSNs, the SSA's rules (area not 000/666/9xx, group not 00, serial not
0000); phones, the national numbering plans (NANP: NXX area and exchange, no N11, no 555; Ofcom: 07 mobiles and
01/02 geographic numbers outside the drama ranges; ARCEP: 01-05 geographic, 06/07 mobile; BNetzA: 015x/016x/017x
mobiles and area codes; TRAI/DoT: ten-digit mobiles from 6-9, STD codes) with context words in each country's
language; AWS, IAM's AKIA/ASIA ids and 40-character secrets; webhooks as their providers' docs print them (Slack
incoming and workflow, Discord, Teams webhookb2 and Power Automate `sig=`, Google Chat `token=`, Mattermost,
Rocket.Chat, Zapier, Make): the secret is the token segment or query value only; Stripe `whsec_` (dashboard 32
characters, CLI 64 hex), `sk_live_`/`rk_live_`; connection strings (URI userinfo, ADO.NET, JDBC, ODBC, Azure
Storage `AccountKey`, Service Bus `SharedAccessKey`): the secret is the password or key only; JWT (RFC 7519/7515),
HTTP Basic (RFC 7617), Bearer (RFC 6750), Digest `response=` (RFC 7616), SigV4 `Signature=`; PEM SEC1/PKCS#8 and
OpenSSH keys (also in a GCP service-account JSON); TOTP seeds (RFC 4648 base32, Google Authenticator's Key Uri
Format); provider tokens by their documented prefixes: GitHub `ghp_`/`gho_`/`ghs_` (CRC32) and `github_pat_`,
Google API keys `AIza` (39 characters), SendGrid `SG.`22.43, Shopify `shpat_`/`shpca_`/`shppa_`/`shpss_` (32 hex),
Square access tokens `EAAA` (64 characters), Twilio auth tokens (32 hex beside an `AC` SID), Mapbox secret tokens
`sk.` (base64url JSON, a dot, 22 characters), Mews Connector tokens (32 hex, a dash, 31 hex) as labelled keys.
National ids (outside the target): Spanish DNI/NIE (mod 23 letter), Brazilian CPF (two mod 11 digits), Polish
PESEL (weights 1-3-7-9), Dutch BSN (11-proof), Indian Aadhaar (Verhoeff), French NIR (key 97 - n mod 97),
Swedish personnummer (Luhn), and the ICAO Doc 9303 TD3 passport MRZ's second line (7-3-1 check digits).

Judgements: a case's `secret` is only what must not survive (a webhook's token, a connection string's password, a
header's credential, a cookie's value, the MRZ line that holds the passport number and birth date). Disguised
values are the secret as written (with its zero-width character, full-width forms, %-escapes or \\u escapes).
OTA relay addresses (guest.booking.com, guest.airbnb.com, m.expediapartnercentral.com) reach one guest and are
e-mail addresses. Near misses are what this domain holds that is neither secret nor personal: tracking numbers,
PNRs and ticket numbers, confirmation and order numbers, EDI control numbers, container numbers and SSCCs, GTINs,
VINs of fleet vehicles, coordinates, timestamps, flight and seat data, room and rate codes, label and pixel sizes,
request and trace ids, cache-busting hashes, CSRF field names, CSS selectors and XPath, version strings, HS codes
and weights, placeholders, masked values, Luhn-invalid numbers, carriers' published service numbers, the AWS docs'
EXAMPLE keys and vessel/port codes.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
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

SEED = 35
PER_KIND = 100
NEGATIVES_PER_SORT = 20
OUTSIDE_TARGET = frozenset({"es_dni", "br_cpf", "pl_pesel", "nl_bsn", "in_aadhaar", "fr_nir", "se_personnummer",
                            "passport_mrz"})
"""National ids and the passport MRZ: written and reported, not held to the recall target."""

LOWER = string.ascii_lowercase
UPPER = string.ascii_uppercase
ALNUM = string.ascii_letters + string.digits
LOWALNUM = LOWER + string.digits
UPALNUM = UPPER + string.digits
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
HEX = "0123456789abcdef"
UHEX = HEX.upper()
B32 = UPPER + "234567"
SYMBOLS = "!@#$%*-_.+=?"


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

Carrier = Callable[[random.Random, str, str], str]
"""(rng, snippet, secret) -> the carrier text holding the snippet."""


# ---- shared filler (businesses, codes, places: nothing personal) ----------------------------------------------

HOTELS = ["Harbourview Grand Lisboa", "Hotel Alpenblick Innsbruck", "The Wharf House Cape Town",
          "Ryokan Shirakawa Kyoto", "Hotel Sol Poniente Sevilla", "Kanal Boutique Amsterdam",
          "Marina Bay Suites Singapore", "Lakeside Lodge Banff", "Palazzo Verde Firenze", "Riverside Inn Pune"]
ROOM_TYPES = ["DKNG", "STDQ", "SUPK", "JRST", "TWNB", "DLXK"]
RATE_CODES = ["BAR", "BARFLEX", "AAA", "CORP01", "GOVT", "ADVPUR14", "PKGBB"]
AIRPORTS = ["FRA", "LHR", "CDG", "JFK", "ORD", "BOM", "DEL", "NRT", "SIN", "DXB", "MAD", "AMS", "YYZ", "SFO", "MUC"]
AIRLINES = [("LH", "220"), ("BA", "125"), ("AF", "057"), ("UA", "016"), ("AI", "098"), ("EK", "176"), ("KL", "074")]
LOCODES = ["DEHAM", "NLRTM", "USLAX", "CNSHA", "SGSIN", "BEANR", "GBFXT", "INNSA", "ESVLC", "USSAV"]
SCACS = ["ODFL", "SAIA", "ABFS", "RDWY", "FXFE", "ESTE", "UPSN", "CNWY"]
WAREHOUSES = ["DC-ATL-02", "FC-LEJ-1", "WH-RTM-07", "DC-ONT-04", "XD-BOM-03"]
LANGS: dict[str, tuple[str, str, str, str, str, str]] = {
    # code: (intro, password, API key, phone, e-mail, card number)
    "en": ("Here are the details for your booking:", "Password", "API key", "Phone", "Email", "Card number"),
    "de": ("Hier die Angaben zu Ihrer Buchung:", "Passwort", "API-Schlüssel", "Telefon", "E-Mail", "Kartennummer"),
    "fr": ("Voici les détails de votre réservation :", "Mot de passe", "Clé API", "Téléphone", "E-mail",
           "Numéro de carte"),
    "es": ("Estos son los datos de su reserva:", "Contraseña", "Clave de API", "Teléfono", "Correo electrónico",
           "Número de tarjeta"),
    "it": ("Ecco i dettagli della sua prenotazione:", "Password", "Chiave API", "Telefono", "E-mail",
           "Numero di carta"),
    "pt": ("Seguem os dados da sua reserva:", "Senha", "Chave de API", "Telefone", "E-mail", "Número do cartão"),
    "nl": ("Hier zijn de gegevens van uw boeking:", "Wachtwoord", "API-sleutel", "Telefoon", "E-mail",
           "Kaartnummer"),
    "pl": ("Oto szczegóły Twojej rezerwacji:", "Hasło", "Klucz API", "Telefon", "E-mail", "Numer karty"),
    "sv": ("Här är uppgifterna för din bokning:", "Lösenord", "API-nyckel", "Telefon", "E-post", "Kortnummer"),
    "da": ("Her er oplysningerne om din booking:", "Adgangskode", "API-nøgle", "Telefon", "E-mail", "Kortnummer"),
    "nb": ("Her er detaljene for bestillingen din:", "Passord", "API-nøkkel", "Telefon", "E-post", "Kortnummer"),
    "fi": ("Tässä varauksesi tiedot:", "Salasana", "API-avain", "Puhelin", "Sähköposti", "Kortin numero"),
    "cs": ("Zde jsou údaje o vaší rezervaci:", "Heslo", "Klíč API", "Telefon", "E-mail", "Číslo karty"),
    "hu": ("Íme a foglalása részletei:", "Jelszó", "API-kulcs", "Telefon", "E-mail", "Kártyaszám"),
    "ro": ("Iată detaliile rezervării dvs.:", "Parolă", "Cheie API", "Telefon", "E-mail", "Numărul cardului"),
    "tr": ("Rezervasyonunuzun ayrıntıları:", "Şifre", "API anahtarı", "Telefon", "E-posta", "Kart numarası"),
    "el": ("Ακολουθούν τα στοιχεία της κράτησής σας:", "Κωδικός πρόσβασης", "Κλειδί API", "Τηλέφωνο", "Email",
           "Αριθμός κάρτας"),
    "ru": ("Вот данные вашего бронирования:", "Пароль", "API-ключ", "Телефон", "Эл. почта", "Номер карты"),
    "uk": ("Ось дані вашого бронювання:", "Пароль", "Ключ API", "Телефон", "Ел. пошта", "Номер картки"),
    "ar": ("إليك تفاصيل حجزك:", "كلمة المرور", "مفتاح API", "الهاتف", "البريد الإلكتروني", "رقم البطاقة"),
    "he": ("הנה פרטי ההזמנה שלך:", "סיסמה", "מפתח API", "טלפון", "אימייל", "מספר כרטיס"),
    "hi": ("आपकी बुकिंग का विवरण:", "पासवर्ड", "API कुंजी", "फ़ोन", "ईमेल", "कार्ड नंबर"),
    "ja": ("ご予約の詳細は以下のとおりです：", "パスワード", "APIキー", "電話番号", "メールアドレス", "カード番号"),
    "zh": ("以下是您的预订详情：", "密码", "API 密钥", "电话", "电子邮件", "卡号"),
    "ko": ("예약 세부 정보는 다음과 같습니다:", "비밀번호", "API 키", "전화번호", "이메일", "카드 번호"),
    "th": ("รายละเอียดการจองของคุณมีดังนี้:", "รหัสผ่าน", "คีย์ API", "โทรศัพท์", "อีเมล", "หมายเลขบัตร"),
    "vi": ("Đây là thông tin đặt chỗ của bạn:", "Mật khẩu", "Khóa API", "Điện thoại", "Email", "Số thẻ"),
    "id": ("Berikut detail pemesanan Anda:", "Kata sandi", "Kunci API", "Telepon", "Email", "Nomor kartu"),
}
"""The agent's messages to users: one intro and the labels, in each user's language."""


def _dump(obj: object) -> str:
    return json.dumps(obj, ensure_ascii=False)


def _uuid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def _date(rng: random.Random) -> str:
    return f"2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _ts(rng: random.Random) -> str:
    return f"{_date(rng)}T{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}Z"


def _money(rng: random.Random, low: int = 5, high: int = 900) -> str:
    return f"{rng.randint(low, high)}.{rng.randint(0, 99):02d}"


def _say(rng: random.Random, label_index: int, value: str) -> tuple[str, str]:
    """(language, a short agent message that gives `value` under the user's-language label `label_index`)."""
    lang = rng.choice(list(LANGS))
    colon = "：" if lang in ("ja", "zh") else ": "
    return lang, f"{LANGS[lang][0]}\n{LANGS[lang][label_index]}{colon}{value}"


# ---- JSON carriers ----------------------------------------------------------------------------------------------

def j_opera(rng: random.Random, snip: str, secret: str) -> str:
    """Oracle Hospitality OHIP `GET /rsv/v1/hotels/{hotelId}/reservations` item with a front-desk comment."""
    return _dump({"reservations": {"reservationInfo": [{
        "reservationIdList": [{"id": str(rng.randint(10 ** 6, 10 ** 7)), "type": "Reservation"},
                              {"id": str(rng.randint(10 ** 7, 10 ** 8)), "type": "Confirmation"}],
        "hotelId": pick(rng, UPPER, 6), "reservationStatus": "Reserved",
        "roomStay": {"arrivalDate": _date(rng), "departureDate": _date(rng), "roomType": rng.choice(ROOM_TYPES),
                     "ratePlanCode": rng.choice(RATE_CODES), "adultCount": rng.randint(1, 3)},
        "comments": [{"comment": {"text": {"value": snip}, "type": "GEN", "internal": True}}]}]}})


def j_mews(rng: random.Random, snip: str, secret: str) -> str:
    """Mews Connector API `customers/getAll` result with a customer note."""
    return _dump({"Customers": [{"Id": _uuid(rng), "Number": str(rng.randint(1000, 99999)),
                                 "Classifications": [rng.choice(["Returning", "Corporate", "Airline"])],
                                 "Notes": snip, "UpdatedUtc": _ts(rng)}], "Cursor": _uuid(rng)})


def j_cloudbeds(rng: random.Random, snip: str, secret: str) -> str:
    """Cloudbeds `getReservation` response with the guest's special requests."""
    return _dump({"success": True, "data": {
        "propertyID": str(rng.randint(100000, 999999)), "reservationID": str(rng.randint(10 ** 11, 10 ** 12)),
        "status": "confirmed", "source": rng.choice(["Booking.com", "Expedia", "Website/Booking Engine"]),
        "startDate": _date(rng), "endDate": _date(rng), "balance": float(_money(rng)),
        "assigned": [{"roomTypeName": rng.choice(ROOM_TYPES), "roomName": str(rng.randint(101, 820))}],
        "specialRequests": snip}})


def j_toast(rng: random.Random, snip: str, secret: str) -> str:
    """Toast orders webhook (`ORDER_UPDATED`) with the check's special instructions."""
    return _dump({"eventCategory": "orders", "eventType": "ORDER_UPDATED", "guid": _uuid(rng),
                  "details": {"order": {"guid": _uuid(rng), "displayNumber": str(rng.randint(1, 999)),
                                        "diningOption": {"guid": _uuid(rng)}, "source": "Online",
                                        "checks": [{"guid": _uuid(rng), "totalAmount": float(_money(rng)),
                                                    "specialRequest": snip}]}},
                  "timestamp": _ts(rng)})


def j_square(rng: random.Random, snip: str, secret: str) -> str:
    """Square `payment.updated` webhook with the payment note."""
    return _dump({"merchant_id": pick(rng, UPALNUM, 13), "type": "payment.updated", "event_id": _uuid(rng),
                  "created_at": _ts(rng), "data": {"type": "payment", "id": pick(rng, ALNUM, 22), "object": {
                      "payment": {"amount_money": {"amount": rng.randint(100, 90000), "currency": "USD"},
                                  "status": "COMPLETED", "source_type": "CARD", "note": snip,
                                  "location_id": pick(rng, UPALNUM, 13)}}}})


def j_ubereats(rng: random.Random, snip: str, secret: str) -> str:
    """Uber Eats `orders.notification` order detail with the customer's delivery note."""
    return _dump({"id": _uuid(rng), "display_id": pick(rng, UPALNUM, 5), "current_state": "ACCEPTED",
                  "store": {"id": _uuid(rng), "name": rng.choice(["Bun & Bao", "Taqueria 19", "Green Bowl"])},
                  "cart": {"items": [{"title": rng.choice(["Pad Thai", "Falafel Wrap"]), "quantity": 1}],
                           "special_instructions": snip},
                  "placed_at": _ts(rng)})


def j_doordash(rng: random.Random, snip: str, secret: str) -> str:
    """DoorDash Drive delivery status webhook with dropoff instructions."""
    return _dump({"event_name": "DASHER_CONFIRMED", "external_delivery_id": f"D-{rng.randint(10 ** 6, 10 ** 7)}",
                  "delivery_status": "enroute_to_pickup", "fee": rng.randint(500, 1500), "currency": "USD",
                  "dropoff_instructions": snip, "pickup_time_estimated": _ts(rng)})


def j_ups(rng: random.Random, snip: str, secret: str) -> str:
    """UPS Shipping API `ShipmentRequest` with a shipment description."""
    return _dump({"ShipmentRequest": {"Request": {"RequestOption": "nonvalidate",
                                                  "TransactionReference": {"CustomerContext": snip}},
                                      "Shipment": {"Description": "Spare parts",
                                                   "Shipper": {"ShipperNumber": pick(rng, UPALNUM, 6)},
                                                   "Service": {"Code": rng.choice(["01", "02", "03", "65"])},
                                                   "Package": {"PackageWeight": {"UnitOfMeasurement": {"Code": "LBS"},
                                                                                 "Weight": str(rng.randint(1, 70))}}}}})


def j_fedex(rng: random.Random, snip: str, secret: str) -> str:
    """FedEx Ship API `/ship/v1/shipments` body with customer references."""
    return _dump({"labelResponseOptions": "URL_ONLY", "accountNumber": {"value": "XXXXX" + digits(rng, 4)},
                  "requestedShipment": {"serviceType": rng.choice(["FEDEX_GROUND", "PRIORITY_OVERNIGHT"]),
                                        "packagingType": "YOUR_PACKAGING", "pickupType": "USE_SCHEDULED_PICKUP",
                                        "shipDatestamp": _date(rng),
                                        "requestedPackageLineItems": [{
                                            "weight": {"units": "KG", "value": rng.randint(1, 30)},
                                            "customerReferences": [{"customerReferenceType": "CUSTOMER_REFERENCE",
                                                                    "value": snip}]}]}})


def j_dhl(rng: random.Random, snip: str, secret: str) -> str:
    """DHL Express MyDHL API `/shipments` body with delivery instructions."""
    return _dump({"plannedShippingDateAndTime": _ts(rng), "productCode": rng.choice(["P", "D", "N"]),
                  "pickup": {"isRequested": False}, "content": {
                      "isCustomsDeclarable": True, "declaredValue": float(_money(rng, 50, 5000)),
                      "declaredValueCurrency": "EUR", "incoterm": rng.choice(["DAP", "DDP"]),
                      "description": "Electronic components",
                      "packages": [{"weight": rng.randint(1, 40), "dimensions": {"length": 40, "width": 30,
                                                                                  "height": 20}}]},
                  "deliveryInstructions": snip})


def j_samsara(rng: random.Random, snip: str, secret: str) -> str:
    """Samsara webhook (`RouteStopArrival`-like event) with the dispatcher's stop notes."""
    return _dump({"eventId": _uuid(rng), "eventTime": _ts(rng), "eventType": "RouteStopArrival",
                  "data": {"vehicle": {"id": str(rng.randint(10 ** 14, 10 ** 15)),
                                       "name": f"Truck {rng.randint(1, 90)}"},
                           "route": {"id": str(rng.randint(10 ** 6, 10 ** 7))},
                           "stop": {"name": rng.choice(WAREHOUSES), "notes": snip,
                                    "location": {"latitude": round(rng.uniform(25, 50), 6),
                                                 "longitude": round(rng.uniform(-120, -70), 6)}}}})


def j_geotab(rng: random.Random, snip: str, secret: str) -> str:
    """Geotab `Get<DVIRLog>` result with the driver's remark."""
    return _dump({"result": [{"id": "b" + pick(rng, HEX, 6).upper(), "dateTime": _ts(rng),
                              "device": {"id": "b" + pick(rng, UHEX, 3)}, "logType": "PreTrip",
                              "driverRemark": snip, "isSafeToOperate": True,
                              "defectList": {"id": "aX" + pick(rng, ALNUM, 20)}}], "jsonrpc": "2.0"})


def j_rental(rng: random.Random, snip: str, secret: str) -> str:
    """A rental-car agreement record as a counter system exports it."""
    return _dump({"agreementNo": f"RA{rng.randint(10 ** 8, 10 ** 9)}", "branch": rng.choice(AIRPORTS) + "T01",
                  "vehicle": {"class": rng.choice(["CDMR", "IFAR", "SFAR", "FVMR"]),
                              "unit": str(rng.randint(100000, 999999)), "fuelOut": "8/8"},
                  "pickup": _ts(rng), "return": _ts(rng), "counterNotes": snip})


def j_tmc(rng: random.Random, snip: str, secret: str) -> str:
    """A travel-management tool's trip export (Navan/TravelPerk-like) with the traveller's note."""
    origin, dest = rng.sample(AIRPORTS, 2)
    airline = rng.choice(AIRLINES)[0]
    return _dump({"tripId": pick(rng, UPALNUM, 10), "policy": "Standard", "status": "TICKETED",
                  "segments": [{"type": "FLIGHT", "carrier": airline, "flight": f"{airline}{rng.randint(10, 999)}",
                                "from": origin, "to": dest, "departure": _ts(rng), "cabin": "ECONOMY"}],
                  "costCenter": f"CC-{rng.randint(100, 999)}", "travellerNote": snip})


def j_scan_intent(rng: random.Random, snip: str, secret: str) -> str:
    """A Zebra DataWedge scan intent as a WMS app logs it: decoded data and label type."""
    return _dump({"action": "com.wms.app.SCAN", "com.symbol.datawedge.source": "scanner",
                  "com.symbol.datawedge.label_type": rng.choice(["LABEL-TYPE-QRCODE", "LABEL-TYPE-PDF417"]),
                  "com.symbol.datawedge.data_string": snip, "device": f"TC52-{pick(rng, UPALNUM, 8)}",
                  "site": rng.choice(WAREHOUSES)})


JSON_CARRIERS: dict[str, Carrier] = {
    "opera_ohip": j_opera, "mews_customer": j_mews, "cloudbeds_reservation": j_cloudbeds, "toast_webhook": j_toast,
    "square_webhook": j_square, "ubereats_order": j_ubereats, "doordash_delivery": j_doordash,
    "ups_shipment": j_ups, "fedex_ship": j_fedex, "dhl_express": j_dhl, "samsara_event": j_samsara,
    "geotab_dvir": j_geotab, "rental_record": j_rental, "tmc_trip": j_tmc, "datawedge_scan": j_scan_intent}


# ---- text carriers ----------------------------------------------------------------------------------------------

def t_folio(rng: random.Random, snip: str, secret: str) -> str:
    """A printed hotel guest folio with a remarks line."""
    return (f"{rng.choice(HOTELS)}\nGUEST FOLIO\nRoom {rng.randint(101, 1899)}   Arrival {_date(rng)}   "
            f"Departure {_date(rng)}\nFolio No. {rng.randint(10 ** 5, 10 ** 6)}   Rate {rng.choice(RATE_CODES)}\n"
            f"{_date(rng)}  Accommodation                  {_money(rng, 90, 480)}\n"
            f"{_date(rng)}  Restaurant outlet {rng.randint(1, 9)}            {_money(rng, 10, 150)}\n"
            f"Remarks: {snip}\nBalance due 0.00")


def t_siteminder(rng: random.Random, snip: str, secret: str) -> str:
    """SiteMinder pmsXchange OTA_HotelResNotifRQ (OpenTravel 2014B) with a comment; the comment is escaped, or a
    CDATA section where escaping would change the value (an MRZ's `<`, an `&` in a URL)."""
    text = escape(snip) if escape(secret) == secret else f"<![CDATA[{snip}]]>"
    return (f'<OTA_HotelResNotifRQ xmlns="http://www.opentravel.org/OTA/2003/05" EchoToken="{_uuid(rng)}" '
            f'TimeStamp="{_ts(rng)}" Version="1.0"><HotelReservations><HotelReservation CreateDateTime="{_ts(rng)}" '
            f'ResStatus="Book"><UniqueID Type="14" ID="{rng.randint(10 ** 8, 10 ** 9)}"/><RoomStays><RoomStay>'
            f'<RoomTypes><RoomType RoomTypeCode="{rng.choice(ROOM_TYPES)}"/></RoomTypes><RatePlans><RatePlan '
            f'RatePlanCode="{rng.choice(RATE_CODES)}"/></RatePlans></RoomStay></RoomStays><ResGlobalInfo><Comments>'
            f'<Comment><Text>{text}</Text></Comment></Comments></ResGlobalInfo></HotelReservation>'
            f"</HotelReservations></OTA_HotelResNotifRQ>")


def _isa(rng: random.Random, kind: str) -> str:
    control = f"{rng.randint(1, 999999999):09d}"
    return (f"ISA*00*          *00*          *02*{rng.choice(SCACS)}           *ZZ*{pick(rng, UPPER, 8)}       "
            f"*260314*1200*U*00401*{control}*0*P*>~GS*{kind}*{pick(rng, UPPER, 6)}*{pick(rng, UPPER, 6)}*20260314*"
            f"1200*{rng.randint(1, 9999)}*X*004010~")


def t_x12_204(rng: random.Random, snip: str, secret: str) -> str:
    """X12 204 motor carrier load tender; the note rides in an NTE segment."""
    return (f"{_isa(rng, 'SM')}\nST*204*0001~B2**{rng.choice(SCACS)}**{rng.randint(10 ** 6, 10 ** 7)}**PP~"
            f"B2A*00~L11*{rng.randint(10 ** 7, 10 ** 8)}*BM~NTE*ADD*{snip}~S5*1*LD~G62*10*20260315~SE*8*0001~")


def t_x12_214(rng: random.Random, snip: str, secret: str) -> str:
    """X12 214 shipment status; a K1 remark holds the note."""
    return (f"{_isa(rng, 'QM')}\nST*214*0001~B10*{rng.randint(10 ** 6, 10 ** 7)}*{rng.randint(10 ** 6, 10 ** 7)}*"
            f"{rng.choice(SCACS)}~AT7*X6*NS***20260315*{rng.randint(0, 2359):04d}*LT~"
            f"MS1*{rng.choice(['ATLANTA', 'MEMPHIS', 'ONTARIO'])}*{rng.choice(['GA', 'TN', 'CA'])}~K1*{snip}~"
            f"SE*6*0001~")


def t_x12_856(rng: random.Random, snip: str, secret: str) -> str:
    """X12 856 advance ship notice, the note in a shipment-level NTE."""
    return (f"{_isa(rng, 'SH')}\nST*856*0001~BSN*00*{rng.randint(10 ** 6, 10 ** 7)}*20260314*1200~HL*1**S~"
            f"TD1*CTN25*{rng.randint(1, 40)}****G*{rng.randint(10, 900)}*LB~NTE*GEN*{snip}~HL*2*1*O~"
            f"PRF*PO{rng.randint(10 ** 5, 10 ** 6)}~SE*8*0001~")


def t_iftmin(rng: random.Random, snip: str, secret: str) -> str:
    """EDIFACT IFTMIN D.04A instruction; FTX+AAI carries the free text."""
    return (f"UNB+UNOC:3+{pick(rng, UPPER, 8)}:ZZZ+{pick(rng, UPPER, 8)}:ZZZ+260314:1200+{rng.randint(1, 99999)}'\n"
            f"UNH+1+IFTMIN:D:04A:UN'\nBGM+340+{rng.randint(10 ** 6, 10 ** 7)}+9'\nDTM+137:202603141200:203'\n"
            f"TSR+30+2'\nFTX+AAI+++{snip}'\nLOC+5+{rng.choice(LOCODES)}'\nLOC+8+{rng.choice(LOCODES)}'\n"
            f"UNT+8+1'\nUNZ+1+{rng.randint(1, 99999)}'")


def t_wms_csv(rng: random.Random, snip: str, secret: str) -> str:
    """A WMS order export in CSV; the notes column is quoted."""
    notes = snip.replace('"', '""')
    return ("order_id,site,wave,lines,status,notes\n"
            f"SO-{rng.randint(10 ** 5, 10 ** 6)},{rng.choice(WAREHOUSES)},W{rng.randint(1, 80)},{rng.randint(1, 40)},"
            f'RELEASED,"{notes}"\nSO-{rng.randint(10 ** 5, 10 ** 6)},{rng.choice(WAREHOUSES)},W{rng.randint(1, 80)},'
            f"{rng.randint(1, 40)},PICKED,")


def t_dispatch(rng: random.Random, snip: str, secret: str) -> str:
    """A dispatch chat log between dispatcher and driver app."""
    load = rng.randint(10 ** 5, 10 ** 6)
    return (f"[{_ts(rng)}] dispatch: Load {load} assigned, pickup {rng.choice(WAREHOUSES)} dock {rng.randint(1, 40)}\n"
            f"[{_ts(rng)}] driver: copy, en route\n[{_ts(rng)}] dispatch: {snip}\n[{_ts(rng)}] driver: 👍")


def t_airline_mail(rng: random.Random, snip: str, secret: str) -> str:
    """An airline booking confirmation as e-mail text."""
    airline, _prefix = rng.choice(AIRLINES)
    origin, dest = rng.sample(AIRPORTS, 2)
    return (f"Subject: Your booking confirmation {pick(rng, UPALNUM, 6)}\n\nThank you for booking with us.\n"
            f"Flight {airline} {rng.randint(10, 999)}  {origin} -> {dest}  {_date(rng)} {rng.randint(5, 22):02d}:"
            f"{rng.choice(['05', '25', '40', '55'])}\nFare: {rng.choice(['Economy Light', 'Economy Classic'])}\n\n"
            f"{snip}\n\nManage your booking online. Check-in opens 24 hours before departure.")


def t_rail_mail(rng: random.Random, snip: str, secret: str) -> str:
    """A rail booking confirmation as e-mail text."""
    return (f"Your ticket - order {rng.randint(10 ** 8, 10 ** 9)}\n"
            f"{rng.choice(['ICE 577', 'TGV INOUI 6211', 'Eurostar 9014', 'Acela 2151', 'Frecciarossa 9527'])}  "
            f"{_date(rng)}  coach {rng.randint(1, 14)}, seat {rng.randint(11, 98)}\n{snip}\n"
            "Please show the ticket on your phone when asked.")


def t_ride_receipt(rng: random.Random, snip: str, secret: str) -> str:
    """A ride-hailing trip receipt."""
    return (f"Trip receipt {_date(rng)}\nTotal {_money(rng, 8, 90)} EUR\nDistance {rng.randint(1, 40)}."
            f"{rng.randint(0, 9)} km · {rng.randint(5, 70)} min\n"
            f"Vehicle class: {rng.choice(['Comfort', 'Black', 'Green'])}\n{snip}\n"
            "Rate your trip in the app.")


def t_rental_agreement(rng: random.Random, snip: str, secret: str) -> str:
    """A rental-car agreement's printed text."""
    return (f"RENTAL AGREEMENT RA{rng.randint(10 ** 8, 10 ** 9)}\nPick-up: {rng.choice(AIRPORTS)} {_ts(rng)}\n"
            f"Car group: {rng.choice(['CDMR', 'IFAR', 'SFAR'])}  Mileage out: {rng.randint(1000, 90000)} km\n"
            f"Additional information: {snip}\nFuel policy: full to full.")


def t_scanner_log(rng: random.Random, snip: str, secret: str) -> str:
    """A handheld scanner's app log lines."""
    dev = f"TC52-{pick(rng, UPALNUM, 6)}"
    return (f"{_ts(rng)} I/ScanService({rng.randint(1000, 9999)}): {dev} decode ok symbology=CODE128 len="
            f"{rng.randint(8, 30)}\n{_ts(rng)} D/WmsSync: POST /api/tasks/{rng.randint(10 ** 5, 10 ** 6)}/confirm\n"
            f"{_ts(rng)} W/WmsSync: payload {snip}\n{_ts(rng)} I/WmsSync: 200 OK in {rng.randint(40, 900)} ms")


def t_agent(rng: random.Random, snip: str, secret: str) -> str:
    """The agent's message to a user, introduced in the user's language (a snippet already in one keeps it)."""
    lang = rng.choice(list(LANGS))
    own = next((code for code, row in LANGS.items() if snip.startswith(row[0])), None)
    return f"assistant ({own}): {snip}" if own else f"assistant ({lang}): {LANGS[lang][0]}\n{snip}"


def t_http_log(rng: random.Random, snip: str, secret: str) -> str:
    """A curl -v trace against a carrier or PMS API, the snippet in the request."""
    host = rng.choice(["onlinetools.ups.com", "apis.fedex.com", "express.api.dhl.com", "api.cloudbeds.com",
                       "api.mews.com", "ws.toasttab.com"])
    return (f"* Connected to {host} port 443\n> POST /api/v1/{rng.choice(['rating', 'ship', 'track'])} HTTP/2\n"
            f"> Host: {host}\n> User-Agent: tracegym-agent/1.4\n> Content-Type: application/json\n{snip}\n"
            f"< HTTP/2 {rng.choice([200, 201, 401])}\n< x-request-id: {_uuid(rng)}")


def t_env_config(rng: random.Random, snip: str, secret: str) -> str:
    """An integration's .env/YAML configuration."""
    return (f"# channel-manager sync - {rng.choice(HOTELS)}\nSYNC_INTERVAL_SECONDS={rng.choice([60, 300, 900])}\n"
            f"PROPERTY_ID={rng.randint(100000, 999999)}\n{snip}\nLOG_LEVEL=info")


def t_pos_ticket(rng: random.Random, snip: str, secret: str) -> str:
    """A restaurant kitchen/POS ticket."""
    return (f"*** {rng.choice(['DELIVERY', 'TAKEOUT', 'DINE IN'])} ***\nCheck #{rng.randint(1, 999)}  "
            f"Server {rng.randint(1, 40)}  {_date(rng)} {rng.randint(11, 22)}:{rng.randint(10, 59)}\n"
            f"1 x {rng.choice(['Margherita', 'Ramen', 'Burger'])}\n  NOTE: {snip}\nSubtotal {_money(rng, 10, 90)}")


def t_tmc_itinerary(rng: random.Random, snip: str, secret: str) -> str:
    """A travel-management tool's itinerary export as text."""
    origin, dest = rng.sample(AIRPORTS, 2)
    return (f"ITINERARY  Trip {pick(rng, UPALNUM, 8)}\nAIR  {origin}-{dest}  {_date(rng)}\nHOTEL  {rng.choice(HOTELS)}"
            f"  {rng.randint(1, 6)} nights\nREMARKS  {snip}\nPolicy: in policy")


TEXT_CARRIERS: dict[str, Carrier] = {
    "hotel_folio": t_folio, "siteminder_xml": t_siteminder, "x12_204": t_x12_204, "x12_214": t_x12_214,
    "x12_856": t_x12_856, "edifact_iftmin": t_iftmin, "wms_csv": t_wms_csv, "dispatch_chat": t_dispatch,
    "airline_email": t_airline_mail, "rail_email": t_rail_mail, "ride_receipt": t_ride_receipt,
    "rental_agreement": t_rental_agreement, "scanner_log": t_scanner_log, "agent_message": t_agent,
    "http_trace": t_http_log, "env_config": t_env_config, "pos_ticket": t_pos_ticket,
    "tmc_itinerary": t_tmc_itinerary}


# ---- values: credentials ------------------------------------------------------------------------------------------

WORDS = ["Harbour", "Kestrel", "Lisboa", "Pallet", "Forklift", "Sunrise", "Tundra", "Marigold", "Cargo", "Anchor",
         "Voyage", "Cobalt", "Juniper", "Saffron", "Glacier"]


def _human_password(rng: random.Random) -> str:
    return (rng.choice(WORDS) + rng.choice(["!", "#", "@", "$", "%", "*", "?", "."]) + digits(rng, rng.randint(2, 4))
            + rng.choice(["", "!", "x", "Q", "_"]))


def _random_password(rng: random.Random, n: int) -> str:
    return pick(rng, ALNUM, n - 3) + rng.choice(SYMBOLS) + digits(rng, 1) + rng.choice(UPPER)


def _password(rng: random.Random) -> str:
    return _human_password(rng) if rng.random() < 0.5 else _random_password(rng, rng.randint(12, 24))


def v_password(rng: random.Random, i: int) -> Value:
    pw = _password(rng)
    user = f"{rng.choice(['fo', 'na', 'rev', 'disp', 'wms'])}.{pick(rng, LOWER, 5)}"
    forms = [
        ("pms_login", f"Opera Cloud login for the night audit: user {user} / password {pw}"),
        ("extranet", f"Booking.com extranet password: {pw}"),
        ("yaml", f"siteminder:\n  username: pmsx_{pick(rng, LOWER, 6)}\n  password: '{pw}'"),
        ("env", f"CLOUDBEDS_PASSWORD={pw}"),
        ("cli", f"$ edi-sftp push --user edi_{pick(rng, LOWER, 4)} --password '{pw}' outbound/*.x12"),
        ("user_lang", _say(rng, 1, pw)[1]),
        ("driver_app", f"Driver app account reset for {user}; new password {pw} (change at first login)"),
        ("json_field", f'{{"username": "{user}", "password": "{pw}"}}'),
        ("wsse", f"<wsse:UsernameToken><wsse:Username>{user}</wsse:Username><wsse:Password>{pw}</wsse:Password>"
                 "</wsse:UsernameToken>"),
        ("temp_mail", f"Your temporary password is {pw} - it expires in 24 hours."),
        ("kv", f"pwd={pw}; site={rng.choice(WAREHOUSES)}"),
    ]
    style, snip = forms[i % len(forms)]
    return style, pw, snip, False


def _akid(rng: random.Random, prefix: str = "AKIA") -> str:
    return prefix + pick(rng, B32, 16)


def v_aws_secret(rng: random.Random, i: int) -> Value:
    secret, akid = pick(rng, B64, 40), _akid(rng, rng.choice(["AKIA", "AKIA", "ASIA"]))
    forms = [
        ("credentials_file", f"[label-printer]\naws_access_key_id = {akid}\naws_secret_access_key = {secret}"),
        ("env", f"export AWS_ACCESS_KEY_ID={akid}\nexport AWS_SECRET_ACCESS_KEY={secret}"),
        ("sts_json", f'"Credentials": {{"AccessKeyId": "{akid}", "SecretAccessKey": "{secret}", '
                     f'"Expiration": "{_ts(rng)}"}}'),
        ("boto3", f"s3 = boto3.client('s3', aws_access_key_id='{akid}', aws_secret_access_key='{secret}')"),
        ("labelled", f"AWS secret access key: {secret}"),
        ("console_csv", f"Access key ID,Secret access key\n{akid},{secret}"),
        ("docker", f"docker run -e AWS_ACCESS_KEY_ID={akid} -e AWS_SECRET_ACCESS_KEY={secret} pod-uploader:2.1"),
        ("pair", f"key {akid} secret {secret} (bucket pod-images-{rng.choice(LOCODES).lower()})"),
    ]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def v_webhook(rng: random.Random, i: int) -> Value:
    styles = ["slack", "slack_workflow", "discord", "teams", "power_automate", "google_chat", "mattermost",
              "rocketchat", "zapier", "make"]
    style = styles[i % len(styles)]
    if style == "slack":
        token = pick(rng, ALNUM, 24)
        url = f"https://hooks.slack.com/services/T{pick(rng, UPALNUM, 10)}/B{pick(rng, UPALNUM, 10)}/{token}"
    elif style == "slack_workflow":
        token = pick(rng, HEX, 32)
        url = f"https://hooks.slack.com/triggers/T{pick(rng, UPALNUM, 10)}/{rng.randint(10 ** 12, 10 ** 13)}/{token}"
    elif style == "discord":
        token = pick(rng, URLSAFE, 68)
        url = f"https://discord.com/api/webhooks/{rng.randint(10 ** 17, 10 ** 18)}/{token}"
    elif style == "teams":
        token = pick(rng, HEX, 32)
        url = (f"https://{rng.choice(['contosofreight', 'northwindtravel'])}.webhook.office.com/webhookb2/"
               f"{_uuid(rng)}@{_uuid(rng)}/IncomingWebhook/{token}/{_uuid(rng)}")
    elif style == "power_automate":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://prod-{rng.randint(10, 99)}.westeurope.logic.azure.com:443/workflows/{pick(rng, HEX, 32)}"
               f"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig={token}")
    elif style == "google_chat":
        token = pick(rng, URLSAFE, 43)
        url = (f"https://chat.googleapis.com/v1/spaces/AAAA{pick(rng, URLSAFE, 7)}/messages?"
               f"key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={token}")
    elif style == "mattermost":
        token = pick(rng, LOWALNUM, 26)
        url = f"https://chat.{rng.choice(['fleetops', 'hotelgroup'])}.io/hooks/{token}"
    elif style == "rocketchat":
        token = pick(rng, ALNUM, 48)
        url = f"https://rocket.depot-ops.net/hooks/{pick(rng, ALNUM, 17)}/{token}"
    elif style == "zapier":
        token = pick(rng, LOWALNUM, 7)
        url = f"https://hooks.zapier.com/hooks/catch/{rng.randint(10 ** 6, 10 ** 8)}/{token}/"
    else:
        token = pick(rng, LOWALNUM, 32)
        url = f"https://hook.{rng.choice(['eu1', 'eu2', 'us1'])}.make.com/{token}"
    ctx = rng.choice(["Post delivery exceptions to {}", "WEBHOOK_URL={}", "notify: {}",
                      "Night-audit alerts channel: {}", "curl -X POST -H 'Content-Type: application/json' "
                      "-d '{{\"text\":\"Dock 4 late\"}}' {}"])
    return style, token, ctx.format(url), False


def v_stripe_whsec(rng: random.Random, i: int) -> Value:
    secret = "whsec_" + (pick(rng, HEX, 64) if i % 3 == 2 else pick(rng, ALNUM, 32))
    forms = [("env", f"STRIPE_WEBHOOK_SECRET={secret}"),
             ("dashboard", f"Signing secret for endpoint https://api.{rng.choice(['staybook', 'shipfast'])}.com/"
                           f"stripe/webhook: {secret}"),
             ("cli", f"> Ready! Your webhook signing secret is {secret} (^C to quit)"),
             ("code", f"event = stripe.Webhook.construct_event(payload, sig_header, '{secret}')"),
             ("yaml", f"stripe:\n  endpoint_secret: {secret}")]
    style, snip = forms[i % len(forms)]
    return style, secret, snip, False


def _uri_password(rng: random.Random) -> str:
    return pick(rng, ALNUM, rng.randint(14, 28)) + rng.choice(["-", "_", ".", "~", ""]) + digits(rng, 2)


def v_connection_string(rng: random.Random, i: int) -> Value:
    pw = _uri_password(rng)
    styles = ["postgres", "mysql", "mongodb", "redis", "amqp", "adonet", "jdbc", "odbc", "azure_storage",
              "service_bus", "sftp"]
    style = styles[i % len(styles)]
    if style == "azure_storage":
        pw = base64.b64encode(rng.randbytes(64)).decode()
        text = (f"DefaultEndpointsProtocol=https;AccountName=labels{pick(rng, LOWALNUM, 6)};AccountKey={pw};"
                "EndpointSuffix=core.windows.net")
    elif style == "service_bus":
        pw = base64.b64encode(rng.randbytes(32)).decode()
        text = (f"Endpoint=sb://tracking-{pick(rng, LOWER, 5)}.servicebus.windows.net/;"
                f"SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey={pw}")
    else:
        host = f"{pick(rng, LOWER, 6)}.{rng.choice(['eu-west-1', 'us-east-2'])}.rds.amazonaws.com"
        text = {
            "postgres": f"postgresql://wms_app:{pw}@{host}:5432/wms",
            "mysql": f"mysql://pos_sync:{pw}@10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.7:3306/toast_mirror",
            "mongodb": f"mongodb+srv://dispatch:{pw}@cluster0.{pick(rng, LOWALNUM, 5)}.mongodb.net/fleet?"
                       "retryWrites=true&w=majority",
            "redis": f"rediss://default:{pw}@redis-{rng.randint(10000, 19999)}.c{rng.randint(1, 300)}.eu-west-1-2."
                     f"ec2.cloud.redislabs.com:{rng.randint(10000, 19999)}",
            "amqp": f"amqps://edi:{pw}@b-{_uuid(rng)}.mq.us-east-1.amazonaws.com:5671",
            "adonet": f"Server=tcp:opera-rpt.database.windows.net,1433;Initial Catalog=folio;User ID=rpt_reader;"
                      f"Password={pw};Encrypt=True;",
            "jdbc": f"jdbc:sqlserver://wms-db.internal:1433;databaseName=WMS;user=wms;password={pw};encrypt=true",
            "odbc": f"Driver={{ODBC Driver 18 for SQL Server}};Server=tms-sql01;Database=TMS;Uid=tms_etl;Pwd={pw};",
            "sftp": f"sftp://edi_partner:{pw}@sftp.{rng.choice(['van', 'edi'])}-{pick(rng, LOWER, 4)}.com:22/inbound",
        }[style]
    ctx = rng.choice(["DATABASE_URL={}", "ConnectionStrings__Default: {}", "conn = {}", "Connection string: {}",
                      "dsn: \"{}\""])
    return style, pw, ctx.format(text), False


def v_labelled_key(rng: random.Random, i: int) -> Value:
    styles = ["ups_client_secret", "fedex_secret", "x_api_key", "apim", "dhl_header", "amadeus", "mews_token",
              "query_param", "yaml", "user_lang", "samsara"]
    style = styles[i % len(styles)]
    if style == "ups_client_secret":
        key = pick(rng, ALNUM, 64)
        snip = f"UPS OAuth client ID: {pick(rng, ALNUM, 48)}\nClient Secret: {key}"
    elif style == "fedex_secret":
        key = pick(rng, HEX, 32)
        snip = f"FedEx project keys - API Key: l7{pick(rng, HEX, 32)}, Secret Key: {key}"
    elif style == "x_api_key":
        key = pick(rng, HEX, 32)
        snip = f"-H 'X-API-Key: {key}'"
    elif style == "apim":
        key = pick(rng, HEX, 32)
        snip = f"Ocp-Apim-Subscription-Key: {key}"
    elif style == "dhl_header":
        key = pick(rng, ALNUM, 32)
        snip = f"DHL-API-Key: {key}"
    elif style == "amadeus":
        key = pick(rng, ALNUM, 16)
        snip = f"Amadeus for Developers - API Key {pick(rng, ALNUM, 32)} / API Secret: {key}"
    elif style == "mews_token":
        key = f"{pick(rng, UHEX, 32)}-{pick(rng, UHEX, 31)}"
        snip = f'"ClientToken": "{pick(rng, UHEX, 32)}-{pick(rng, UHEX, 31)}", "AccessToken": "{key}"'
    elif style == "query_param":
        key = pick(rng, HEX, 32)
        snip = f"GET https://api.flightstatus-data.com/v1/flights?access_key={key}&flight_iata=LH441"
    elif style == "yaml":
        key = pick(rng, ALNUM, 40)
        snip = f"geotab:\n  database: fleet_{pick(rng, LOWER, 4)}\n  api_key: {key}"
    elif style == "user_lang":
        key = pick(rng, ALNUM, 36)
        snip = _say(rng, 2, key)[1]
    else:
        key = pick(rng, ALNUM, 30)
        snip = f"Samsara API token: {key}"
    return style, key, snip, False


ZERO_WIDTH = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"]


def _disguise_base(rng: random.Random, i: int) -> tuple[str, str]:
    """(label, secret) to disguise: a password, a Stripe key, an AWS secret, a signing secret or a hex key."""
    j = i // 4 % 5
    if j == 0:
        return "password", _random_password(rng, 16)
    if j == 1:
        return "STRIPE_SECRET_KEY", "sk_live_" + pick(rng, ALNUM, 24)
    if j == 2:
        return "aws_secret_access_key", pick(rng, B64, 40)
    if j == 3:
        return "webhook secret", "whsec_" + pick(rng, ALNUM, 32)
    return "api_key", pick(rng, HEX, 32)


def v_disguised(rng: random.Random, i: int) -> Value:
    label, base = _disguise_base(rng, i)
    style = ["zero_width", "fullwidth", "percent", "json_escape"][i % 4]
    if style == "zero_width":
        cut = sorted(rng.sample(range(2, len(base) - 1), rng.randint(1, 2)))
        secret = base[:cut[0]] + rng.choice(ZERO_WIDTH) + base[cut[0]:]
        if len(cut) > 1:
            secret = secret[:cut[1] + 1] + rng.choice(ZERO_WIDTH) + secret[cut[1] + 1:]
        return style, secret, f"{label}: {secret}", False
    if style == "fullwidth":
        secret = "".join(chr(ord(c) + 0xFEE0) if 0x21 <= ord(c) <= 0x7E else c for c in base)
        return style, secret, f"{label}：{secret}", False
    if style == "percent":
        secret = "".join(f"%{b:02X}" for b in base.encode()) if rng.random() < 0.5 else "".join(
            f"%{ord(c):02X}" if k % 2 else c for k, c in enumerate(base))
        return style, secret, f"POST /login body: user=ops&{quote(label.replace(' ', '_'))}={secret}", False
    forced = rng.randrange(len(base))
    secret = "".join(f"\\u{ord(c):04x}" if k == forced or rng.random() < 0.4 else c for k, c in enumerate(base))
    return style, secret, f'{{"{label}": "{secret}", "site": "{rng.choice(WAREHOUSES)}"}}', True


def v_jwt(rng: random.Random, i: int) -> Value:
    alg = ["HS256", "RS256", "ES256"][i % 3]
    header = {"alg": alg, "typ": "JWT"} if alg == "HS256" else {"alg": alg, "kid": pick(rng, URLSAFE, 16)}
    iat = rng.randint(1_760_000_000, 1_790_000_000)
    claims = {"sub": rng.choice([_uuid(rng), f"driver|{rng.randint(10 ** 5, 10 ** 6)}"]),
              "iss": rng.choice(["https://identity.mews.com", "https://auth.fleetapp.io/", "https://sso.tmc.travel"]),
              "aud": rng.choice(["pms-api", "driver-app", "booking"]), "iat": iat, "exp": iat + 3600,
              "scope": rng.choice(["reservations:read", "routes:write", "trips:read profile"])}
    signing = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(
        json.dumps(claims, separators=(",", ":")).encode())
    if alg == "HS256":
        sig = b64url(hmac.new(rng.randbytes(32), signing.encode(), hashlib.sha256).digest())
    else:
        sig = b64url(rng.randbytes(256 if alg == "RS256" else 64))
    token = f"{signing}.{sig}"
    forms = [("bearer", f"Authorization: Bearer {token}"), ("cookie", f"Cookie: id_token={token}; lang=en"),
             ("oauth_json", f'{{"access_token": "{token}", "token_type": "Bearer", "expires_in": 3600}}'),
             ("fragment", f"https://app.tmc.travel/callback#access_token={token}&token_type=bearer"),
             ("labelled", f"driver session JWT: {token}")]
    style, snip = forms[i % len(forms)]
    return style, token, snip, False


def v_auth_header(rng: random.Random, i: int) -> Value:
    style = ["basic", "bearer", "proxy_basic", "sigv4", "digest", "token"][i % 6]
    if style in ("basic", "proxy_basic"):
        cred = base64.b64encode(f"{pick(rng, ALNUM, 24)}:{pick(rng, ALNUM, 40)}".encode()).decode()
        head = "Authorization" if style == "basic" else "Proxy-Authorization"
        return style, cred, f"> {head}: Basic {cred}", False
    if style == "bearer":
        cred = pick(rng, URLSAFE, rng.randint(40, 64))
        return style, cred, f"> Authorization: Bearer {cred}", False
    if style == "sigv4":
        cred = pick(rng, HEX, 64)
        return style, cred, (f"Authorization: AWS4-HMAC-SHA256 Credential={_akid(rng)}/20260314/eu-west-1/s3/"
                             "aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, "
                             f"Signature={cred}"), False
    if style == "digest":
        cred = pick(rng, HEX, 32)
        return style, cred, (f'Authorization: Digest username="scanner{rng.randint(1, 60)}", realm="wms", '
                             f'nonce="{pick(rng, HEX, 32)}", uri="/api/putaway", qop=auth, nc=00000001, '
                             f'cnonce="{pick(rng, HEX, 8)}", response="{cred}"'), False
    cred = pick(rng, HEX, 40)
    return style, cred, f'Authorization: Token token="{cred}"', False


def _ec_pem(rng: random.Random, fmt: serialization.PrivateFormat) -> str:
    key = ec.derive_private_key(rng.getrandbits(250) + 1, ec.SECP256R1())
    return key.private_bytes(serialization.Encoding.PEM, fmt, serialization.NoEncryption()).decode().strip()


def v_private_key(rng: random.Random, i: int) -> Value:
    style = ["sec1", "pkcs8_ec", "pkcs8_ed25519", "openssh", "gcp_json"][i % 5]
    if style == "sec1":
        pem = _ec_pem(rng, serialization.PrivateFormat.TraditionalOpenSSL)
    elif style in ("pkcs8_ec", "gcp_json"):
        pem = _ec_pem(rng, serialization.PrivateFormat.PKCS8)
    elif style == "pkcs8_ed25519":
        pem = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)).private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
        pem = pem.strip()
    else:
        key = ed25519.Ed25519PrivateKey.from_private_bytes(rng.randbytes(32))
        seed = key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption())
        public = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
        blob = openssh_ed25519_blob(seed, public, rng.randbytes(4), b"edi@van-gateway")
        body = base64.b64encode(blob).decode()
        pem = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{group(body, 70, chr(10))}\n-----END OPENSSH PRIVATE KEY-----"
    if style == "gcp_json":
        secret = json.dumps(pem + "\n")[1:-1]
        snip = (f'{{"type": "service_account", "project_id": "route-opt-{rng.randint(100, 999)}", '
                f'"private_key_id": "{pick(rng, HEX, 40)}", "private_key": "{secret}", '
                f'"client_email": "optimizer@route-opt.iam.gserviceaccount.com"}}')
        return style, secret, snip, False
    ctx = rng.choice(["AS2 signing key for the carrier VAN:\n{}", "{}", "# ~/.ssh/id_edi\n{}",
                      "Apple Wallet pass signing key (boarding passes):\n{}"])
    return style, pem, ctx.format(pem), False


def v_session_cookie(rng: random.Random, i: int) -> Value:
    styles = [("connect.sid", lambda: "s%3A" + pick(rng, URLSAFE, 32) + "." + pick(rng, ALNUM, 43)),
              ("PHPSESSID", lambda: pick(rng, LOWALNUM, 26)), ("JSESSIONID", lambda: pick(rng, UHEX, 32)),
              ("ASP.NET_SessionId", lambda: pick(rng, "abcdefghijklmnopqrstuvwxyz012345", 24)),
              ("laravel_session", lambda: b64url(rng.randbytes(180))),
              ("_session_id", lambda: pick(rng, HEX, 32)), ("sessionid", lambda: pick(rng, LOWALNUM, 32))]
    name, make = styles[i % len(styles)]
    value = make()
    forms = [f"Cookie: {name}={value}; locale=en-GB", f"Set-Cookie: {name}={value}; Path=/; HttpOnly; Secure",
             f"requests.get(url, cookies={{'{name}': '{value}'}})", f"session cookie {name}={value}"]
    return name, value, forms[i // len(styles) % len(forms)], False


def v_totp_seed(rng: random.Random, i: int) -> Value:
    seed = base64.b32encode(rng.randbytes(20 if i % 2 else 10)).decode().rstrip("=")
    issuer = rng.choice(["Opera Cloud", "SiteMinder", "Samsara", "Booking.com Extranet", "SAP Concur"])
    account = f"{rng.choice(['ops', 'frontdesk', 'dispatch'])}-{rng.randint(1, 40)}"
    forms = [("otpauth", f"otpauth://totp/{quote(issuer)}:{account}?secret={seed}&issuer={quote(issuer)}&digits=6"),
             ("setup_key", None), ("labelled", f"2FA secret for {issuer}: {seed}"),
             ("json", f'{{"mfa": {{"type": "totp", "secret": "{seed}", "period": 30}}}}')]
    style, snip = forms[i % len(forms)]
    if snip is None:
        seed = group(seed.lower(), 4, " ")
        snip = f"Can't scan the QR code? Enter this key in your authenticator app: {seed}"
    return style, seed, snip, False


def v_github_token(rng: random.Random, i: int) -> Value:
    style = ["ghp", "gho", "ghs", "fine_grained"][i % 4]
    if style == "fine_grained":
        token = f"github_pat_{pick(rng, UPALNUM, 22)}_{pick(rng, ALNUM, 59)}"
    else:
        token = crc_token(rng, style + "_")
    forms = [f"GITHUB_TOKEN={token}", f"git remote set-url origin https://x-access-token:{token}@github.com/"
             f"{rng.choice(['freightco', 'staybook'])}/edi-maps.git", f"gh auth login --with-token <<< {token}",
             f"token: {token}"]
    return style, token, forms[i // 4 % len(forms)], False


def v_stripe_secret_key(rng: random.Random, i: int) -> Value:
    style = ["sk_live_short", "sk_live_long", "rk_live"][i % 3]
    token = {"sk_live_short": "sk_live_" + pick(rng, ALNUM, 24), "sk_live_long": "sk_live_51" + pick(rng, ALNUM, 97),
             "rk_live": "rk_live_51" + pick(rng, ALNUM, 97)}[style]
    forms = [f"STRIPE_SECRET_KEY={token}", f"stripe.api_key = \"{token}\"", f"curl https://api.stripe.com/v1/refunds "
             f"-u {token}: -d payment_intent=pi_{pick(rng, ALNUM, 24)}", f"Stripe key (deposits): {token}"]
    return style, token, forms[i // 3 % len(forms)], False


def v_google_api_key(rng: random.Random, i: int) -> Value:
    key = "AIzaSy" + pick(rng, URLSAFE, 33)
    forms = [("maps_js", f'<script src="https://maps.googleapis.com/maps/api/js?key={key}&callback=initMap" async>'
                         "</script>"),
             ("distance_matrix", f"GET https://maps.googleapis.com/maps/api/distancematrix/json?origins="
                                 f"{rng.choice(LOCODES)}&destinations={rng.choice(LOCODES)}&key={key}"),
             ("env", f"GOOGLE_MAPS_API_KEY={key}"),
             ("manifest", f'<meta-data android:name="com.google.android.geo.API_KEY" android:value="{key}"/>')]
    style, snip = forms[i % len(forms)]
    return style, key, snip, False


def v_sendgrid_key(rng: random.Random, i: int) -> Value:
    key = f"SG.{pick(rng, URLSAFE, 22)}.{pick(rng, URLSAFE, 43)}"
    forms = [("env", f"SENDGRID_API_KEY={key}"), ("bearer", f"Authorization: Bearer {key}"),
             ("code", f"sg = SendGridAPIClient('{key}')  # booking confirmations"),
             ("labelled", f"SendGrid key for guest e-mails: {key}")]
    style, snip = forms[i % len(forms)]
    return style, key, snip, False


def v_shopify_token(rng: random.Random, i: int) -> Value:
    prefix = ["shpat_", "shpca_", "shppa_", "shpss_"][i % 4]
    token = prefix + pick(rng, HEX, 32)
    shop = f"{rng.choice(['harbour-goods', 'alpenblick-shop', 'dock7-supply'])}.myshopify.com"
    forms = [f"X-Shopify-Access-Token: {token}", f"SHOPIFY_ACCESS_TOKEN={token}",
             f"shopify.Session('{shop}', '2024-07', '{token}')", f"Fulfilment app for {shop}: token {token}"]
    return prefix.rstrip("_"), token, forms[i // 4 % len(forms)], False


def v_square_token(rng: random.Random, i: int) -> Value:
    token = "EAAA" + pick(rng, URLSAFE, 60)
    forms = [("bearer", f"Authorization: Bearer {token}\nSquare-Version: 2024-{rng.randint(1, 12):02d}-17"),
             ("env", f"SQUARE_ACCESS_TOKEN={token}"),
             ("sdk", f"client = Client(access_token='{token}', environment='production')"),
             ("labelled", f"Square production access token: {token}")]
    style, snip = forms[i % len(forms)]
    return style, token, snip, False


def v_twilio_auth_token(rng: random.Random, i: int) -> Value:
    sid, token = "AC" + pick(rng, HEX, 32), pick(rng, HEX, 32)
    forms = [("env", f"TWILIO_ACCOUNT_SID={sid}\nTWILIO_AUTH_TOKEN={token}"),
             ("curl", f"curl -X POST https://api.twilio.com/2010-04-01/Accounts/{sid}/Messages.json -u {sid}:{token}"),
             ("sdk", f"client = Client('{sid}', '{token}')  # guest SMS"),
             ("labelled", f"Twilio Account SID {sid}, Auth Token: {token}")]
    style, snip = forms[i % len(forms)]
    return style, token, snip, False


def v_mapbox_secret(rng: random.Random, i: int) -> Value:
    payload = _dump({"u": rng.choice(["fleetmaps", "dockroute", "staybook"]) + str(rng.randint(1, 99)),
                     "a": pick(rng, LOWALNUM, 25)}).replace(" ", "")
    token = f"sk.{b64url(payload.encode())}.{pick(rng, URLSAFE, 22)}"
    forms = [("netrc", f"machine api.mapbox.com\n  login mapbox\n  password {token}"),
             ("gradle", f"MAPBOX_DOWNLOADS_TOKEN={token}"), ("env", f"MAPBOX_SECRET_TOKEN={token}"),
             ("labelled", f"Mapbox secret token (Navigation SDK downloads): {token}")]
    style, snip = forms[i % len(forms)]
    return style, token, snip, False


# ---- values: personal data ----------------------------------------------------------------------------------------

FIRST = ["anna", "lukas", "mei", "rahul", "sofia", "kenji", "olu", "fatima", "mateo", "ingrid", "thanh", "aylin",
         "priya", "jonas", "chloe", "diego", "yuki", "amara", "piotr", "leila"]
LAST = ["schneider", "dubois", "tanaka", "sharma", "okafor", "garcia", "nowak", "jensen", "rossi", "nguyen",
        "yilmaz", "kowalski", "silva", "haddad", "lindqvist", "patel", "moreau", "kim", "fischer", "costa"]
DOMAINS = ["gmail.com", "outlook.com", "yahoo.co.uk", "web.de", "orange.fr", "icloud.com", "gmx.de", "hotmail.fr",
           "rediffmail.com", "proton.me", "libero.it", "yandex.ru", "naver.com", "qq.com", "t-online.de", "free.fr",
           "northwind-freight.com", "contoso-travel.co.uk"]


def v_email(rng: random.Random, i: int) -> Value:
    first, last, dom = rng.choice(FIRST), rng.choice(LAST), rng.choice(DOMAINS)
    styles = ["plain", "digits", "plus_tag", "booking_relay", "airbnb_relay", "expedia_relay", "mailto",
              "display_name", "upper", "user_lang", "from_header"]
    style = styles[i % len(styles)]
    addr = {"plain": f"{first}.{last}@{dom}", "digits": f"{first}{last}{rng.randint(1, 99)}@{dom}",
            "plus_tag": f"{first[0]}.{last}+{rng.choice(['travel', 'booking', 'rail'])}@{dom}",
            "booking_relay": f"{first[0]}{last}.{rng.randint(100000, 999999)}@guest.booking.com",
            "airbnb_relay": f"{first}-{pick(rng, LOWALNUM, 12)}@guest.airbnb.com",
            "expedia_relay": f"{pick(rng, LOWALNUM, 10)}@m.expediapartnercentral.com",
            "upper": f"{first.capitalize()}.{last.capitalize()}@{dom.capitalize()}"}.get(style, f"{first}_{last}@{dom}")
    snip = {"mailto": f"<a href=\"mailto:{addr}\">Contact guest</a>",
            "display_name": f"Guest: {first.capitalize()} {last.capitalize()} <{addr}>",
            "from_header": f"From: {first.capitalize()} {last.capitalize()} <{addr}>\nSubject: Late arrival",
            "user_lang": _say(rng, 4, addr)[1]}.get(style) or rng.choice(
        ["Guest e-mail: {}", "Send the invoice to {}", "consignee contact {}", "Traveller email {}",
         "Notify {} when the driver is 15 min away"]).format(addr)
    return style, addr, snip, False


def _phone(style_forms: list[tuple[str, str]], contexts: list[str], rng: random.Random, i: int) -> Value:
    style, number = style_forms[i % len(style_forms)]
    return style, number, rng.choice(contexts).format(number), False


US_AREAS = ["212", "312", "415", "617", "702", "713", "305", "404", "206", "303", "512", "646", "786", "832", "917"]
CA_AREAS = ["416", "604", "514", "403", "613", "902", "647", "778"]


def v_phone_us_ca(rng: random.Random, i: int) -> Value:
    area = rng.choice(US_AREAS + CA_AREAS)
    ex = str(rng.randint(2, 9)) + digits(rng, 2)
    while ex[1:] == "11" or ex == "555":
        ex = str(rng.randint(2, 9)) + digits(rng, 2)
    line = digits(rng, 4)
    forms = [("paren", f"({area}) {ex}-{line}"), ("dash", f"{area}-{ex}-{line}"), ("dot", f"{area}.{ex}.{line}"),
             ("plus_space", f"+1 {area} {ex} {line}"), ("plus_dash", f"+1-{area}-{ex}-{line}"),
             ("e164", f"+1{area}{ex}{line}"), ("one_paren", f"1 ({area}) {ex}-{line}")]
    return _phone(forms, ["Guest cell: {}", "Call the driver at {} when 10 min out", "Mobile {} (text OK)",
                          "Contact phone: {}", "Customer callback number {}", "Consignee tel. {}",
                          "Appel au {} (client, Montréal)"], rng, i)


def v_phone_uk(rng: random.Random, i: int) -> Value:
    mobile = "7" + str(rng.choice([4, 5, 7, 8, 9])) + digits(rng, 8)
    geo_area, geo_len = rng.choice([("20", 8), ("161", 7), ("131", 7), ("113", 7), ("117", 7), ("121", 7)])
    local = str(rng.choice([2, 3, 5, 6, 7, 8])) + digits(rng, geo_len - 1)
    while mobile.startswith("7700900") or local.startswith("7946"):  # Ofcom's ranges for drama
        mobile, local = "7" + str(rng.choice([4, 5, 7, 8, 9])) + digits(rng, 8), "8" + digits(rng, geo_len - 1)
    forms = [("mobile", f"0{mobile[:4]} {mobile[4:]}"), ("mobile_plus", f"+44 {mobile[:4]} {mobile[4:]}"),
             ("mobile_plus0", f"+44 (0){mobile[:4]} {mobile[4:]}"), ("mobile_compact", f"0{mobile}"),
             ("geo", f"0{geo_area} {local[:len(local) - 4]} {local[-4:]}"),
             ("geo_plus", f"+44 {geo_area} {local[:len(local) - 4]} {local[-4:]}")]
    return _phone(forms, ["Mobile: {}", "Ring the guest on {}", "Tel {} (delivery contact)", "Contact no. {}",
                          "Please text the driver on {}", "Landline {} - reception"], rng, i)


def v_phone_fr(rng: random.Random, i: int) -> Value:
    first = rng.choice(["6", "6", "7", "1", "4"])
    rest = (rng.choice("3456789") if first == "7" else str(rng.randint(1, 9))) + digits(rng, 7)
    pairs = " ".join(rest[k:k + 2] for k in range(0, 8, 2))
    forms = [("spaced", f"0{first} {pairs}"), ("plus", f"+33 {first} {pairs}"), ("plus0", f"+33 (0){first} {pairs}"),
             ("compact", f"0{first}{rest}"), ("dotted", f"0{first}.{pairs.replace(' ', '.')}")]
    return _phone(forms, ["Tél. : {}", "Portable du client : {}", "Joignable au {} pour la livraison",
                          "Contact sur place : {}", "Numéro de téléphone : {}", "Rappeler le voyageur au {}"], rng, i)


def v_phone_de(rng: random.Random, i: int) -> Value:
    prefix, n = rng.choice([("151", 8), ("160", 7), ("170", 7), ("171", 7), ("172", 7), ("176", 8), ("157", 8)])
    sub = str(rng.randint(1, 9)) + digits(rng, n - 1)
    area, geo = rng.choice([("30", 8), ("89", 7), ("40", 7), ("69", 6), ("221", 6)])
    local = str(rng.randint(2, 9)) + digits(rng, geo - 1)
    forms = [("mobile", f"0{prefix} {sub}"), ("slash", f"0{prefix}/{sub}"), ("plus", f"+49 {prefix} {sub}"),
             ("plus0", f"+49 (0){prefix} {sub}"), ("geo", f"0{area} {local}"), ("geo_plus", f"+49 {area} {local}"),
             ("dash", f"0{prefix}-{sub}")]
    return _phone(forms, ["Tel.: {}", "Handy: {}", "Fahrer erreichbar unter {}", "Rückruf an {} erbeten",
                          "Mobil: {}", "Rufnummer des Empfängers: {}"], rng, i)


def v_phone_in(rng: random.Random, i: int) -> Value:
    mobile = str(rng.randint(6, 9)) + digits(rng, 9)
    std, sub_len = rng.choice([("11", 8), ("22", 8), ("80", 8), ("44", 8), ("20", 8)])
    local = str(rng.randint(2, 6)) + digits(rng, sub_len - 1)
    forms = [("plus", f"+91 {mobile[:5]} {mobile[5:]}"), ("spaced", f"{mobile[:5]} {mobile[5:]}"),
             ("zero", f"0{mobile}"), ("plus_dash", f"+91-{mobile}"), ("landline", f"0{std}-{local}"),
             ("landline_spaced", f"0{std} {local[:4]} {local[4:]}")]
    return _phone(forms, ["Mob: {}", "Mobile No.: {}", "Ph: {}", "Contact the consignee on {}", "मोबाइल: {}",
                          "Guest contact {} (WhatsApp)"], rng, i)


def _ssn(rng: random.Random) -> tuple[str, str, str]:
    area = rng.randint(1, 899)
    while area == 666:
        area = rng.randint(1, 899)
    return f"{area:03d}", f"{rng.randint(1, 99):02d}", f"{rng.randint(1, 9999):04d}"


def v_ssn(rng: random.Random, i: int) -> Value:
    a, g, s = _ssn(rng)
    style, ssn = [("dashed", f"{a}-{g}-{s}"), ("spaced", f"{a} {g} {s}"), ("compact", f"{a}{g}{s}")][i % 3]
    ctx = rng.choice(["SSN: {}", "Social Security Number {}", "Driver onboarding - SSN {} (for the MVR check)",
                      "W-9 TIN (SSN): {}", "ssn={}", "Renter's SS# {}"])
    return style, ssn, ctx.format(ssn), False


CARD_BRANDS: list[tuple[str, Callable[[random.Random], str], int]] = [
    ("VI", lambda r: "4", 16), ("MC", lambda r: str(r.randint(51, 55)), 16),
    ("MC", lambda r: str(r.randint(2221, 2720)), 16), ("AX", lambda r: r.choice(["34", "37"]), 15),
    ("DS", lambda r: r.choice(["6011", "65"]), 16), ("JC", lambda r: str(r.randint(3528, 3589)), 16),
    ("DC", lambda r: "36", 14), ("CU", lambda r: "62", 16)]


def v_card(rng: random.Random, i: int) -> Value:
    brand, iin, length = CARD_BRANDS[i % len(CARD_BRANDS)]
    body = iin(rng)
    body += digits(rng, length - 1 - len(body))
    number = body + luhn_digit(body)
    style = ["spaced", "dashed", "compact", "user_lang"][i // len(CARD_BRANDS) % 4]
    shown = {"spaced": group_card(number, " "), "dashed": group_card(number, "-")}.get(style, number)
    exp = f"{rng.randint(1, 12):02d}/{rng.randint(27, 31)}"
    if style == "user_lang":
        return style, shown, _say(rng, 5, shown)[1], False
    ctx = rng.choice(["Card on file: {} exp " + exp, "Guarantee: " + brand + " {} " + exp, "CC# {}",
                      "cardNumber={}", "Pay at property - card {} (CVV not stored)"])
    return style, shown, ctx.format(shown), False


IBAN_STRUCTURES = {"DE": "8n10n", "FR": "5n5n11c2n", "GB": "4a6n8n", "ES": "4n4n1n1n10n", "IT": "1a5n5n12c",
                   "NL": "4a10n", "BE": "3n7n2n", "AT": "5n11n", "CH": "5n12c", "PL": "8n16n", "PT": "4n4n11n2n",
                   "SE": "3n17n", "DK": "4n9n1n", "NO": "4n6n1n", "FI": "3n11n", "IE": "4a6n8n", "LU": "3n13c",
                   "CZ": "4n6n10n", "HU": "3n4n1n15n1n", "RO": "4a16c", "GR": "3n4n16c", "TR": "5n1n16c",
                   "AE": "3n16n", "SA": "2n18c"}


def v_iban(rng: random.Random, i: int) -> Value:
    country = list(IBAN_STRUCTURES)[i % len(IBAN_STRUCTURES)]
    b = bban(rng, IBAN_STRUCTURES[country])
    compact = country + iban_check(country, b) + b
    style = ["print", "compact", "labelled_de", "refund"][i // len(IBAN_STRUCTURES) % 4]
    shown = compact if style == "compact" else group(compact, 4, " ")
    ctx = {"print": "IBAN: {}", "compact": "iban={}", "labelled_de": "Bankverbindung des Fahrers - IBAN {}",
           "refund": "Refund of the cancelled booking's deposit to account {}"}[style]
    return style, shown, ctx.format(shown), False


# ---- values: national ids (outside the target) ------------------------------------------------------------------

def v_es_dni(rng: random.Random, i: int) -> Value:
    letters = "TRWAGMYFPDXBNJZSQVHLCKE"
    if i % 3 == 2:
        head = rng.choice("XYZ")
        num = digits(rng, 7)
        value = head + num + letters[int(str("XYZ".index(head)) + num) % 23]
        style = "nie"
    else:
        num = digits(rng, 8)
        value, style = num + letters[int(num) % 23], "dni"
    ctx = rng.choice(["DNI: {}", "Parte de viajeros - documento {} (SES.HOSPEDAJES)", "NIE del huésped: {}",
                      "Documento de identidad {}"])
    return style, value, ctx.format(value), False


def v_br_cpf(rng: random.Random, i: int) -> Value:
    base = [rng.randint(0, 9) for _ in range(9)]
    for size in (9, 10):
        total = sum(d * w for d, w in zip(base, range(size + 1, 1, -1), strict=True))
        base.append(total * 10 % 11 % 10)
    raw = "".join(map(str, base))
    style, value = [("dotted", f"{raw[:3]}.{raw[3:6]}.{raw[6:9]}-{raw[9:]}"), ("compact", raw)][i % 2]
    return style, value, rng.choice(["CPF: {}", "CPF do hóspede {}", "Motorista CPF {}"]).format(value), False


def v_pl_pesel(rng: random.Random, i: int) -> Value:
    year, month, day = rng.randint(1950, 2005), rng.randint(1, 12), rng.randint(1, 28)
    mm = month + (20 if year >= 2000 else 0)
    body = f"{year % 100:02d}{mm:02d}{day:02d}{digits(rng, 4)}"
    check = (10 - sum(int(d) * w for d, w in zip(body, [1, 3, 7, 9, 1, 3, 7, 9, 1, 3], strict=True)) % 10) % 10
    value = body + str(check)
    return "plain", value, rng.choice(["PESEL: {}", "Numer PESEL kierowcy {}", "PESEL gościa {}"]).format(value), False


def v_nl_bsn(rng: random.Random, i: int) -> Value:
    while True:
        head = str(rng.randint(1, 9)) + digits(rng, 7)
        rest = sum(int(d) * w for d, w in zip(head, range(9, 1, -1), strict=True)) % 11
        if rest < 10:
            value = head + str(rest)
            break
    return "plain", value, rng.choice(["BSN: {}", "Burgerservicenummer {}", "BSN chauffeur {}"]).format(value), False


VERHOEFF_D = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 2, 3, 4, 0, 6, 7, 8, 9, 5], [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
              [3, 4, 0, 1, 2, 8, 9, 5, 6, 7], [4, 0, 1, 2, 3, 9, 5, 6, 7, 8], [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
              [6, 5, 9, 8, 7, 1, 0, 4, 3, 2], [7, 6, 5, 9, 8, 2, 1, 0, 4, 3], [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
              [9, 8, 7, 6, 5, 4, 3, 2, 1, 0]]
VERHOEFF_P = [[0, 1, 2, 3, 4, 5, 6, 7, 8, 9], [1, 5, 7, 6, 2, 8, 3, 0, 9, 4], [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
              [8, 9, 1, 6, 0, 4, 3, 5, 2, 7], [9, 4, 5, 3, 1, 2, 6, 8, 7, 0], [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
              [2, 7, 9, 3, 8, 0, 6, 4, 1, 5], [7, 0, 4, 6, 9, 1, 3, 2, 5, 8]]
VERHOEFF_INV = [0, 4, 3, 2, 1, 5, 6, 7, 8, 9]


def verhoeff_digit(partial: str) -> str:
    """The Verhoeff check digit (dihedral group D5) that completes `partial`, as Aadhaar numbers carry it."""
    c = 0
    for k, ch in enumerate(reversed(partial)):
        c = VERHOEFF_D[c][VERHOEFF_P[(k + 1) % 8][int(ch)]]
    return str(VERHOEFF_INV[c])


def v_in_aadhaar(rng: random.Random, i: int) -> Value:
    body = str(rng.randint(2, 9)) + digits(rng, 10)
    raw = body + verhoeff_digit(body)
    style, value = [("spaced", group(raw, 4, " ")), ("compact", raw), ("dashed", group(raw, 4, "-"))][i % 3]
    ctx = rng.choice(["Aadhaar No.: {}", "Guest ID proof - Aadhaar {}", "आधार संख्या: {}", "UID {} (C-form)"])
    return style, value, ctx.format(value), False


def v_fr_nir(rng: random.Random, i: int) -> Value:
    body = (f"{rng.randint(1, 2)}{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 95):02d}"
            f"{rng.randint(1, 990):03d}{rng.randint(1, 999):03d}")
    key = f"{97 - int(body) % 97:02d}"
    style, value = [("spaced", f"{body[0]} {body[1:3]} {body[3:5]} {body[5:7]} {body[7:10]} {body[10:]} {key}"),
                    ("compact", body + key)][i % 2]
    ctx = rng.choice(["N° de sécurité sociale : {}", "NIR du chauffeur {}", "Numéro INSEE : {}"])
    return style, value, ctx.format(value), False


def v_se_personnummer(rng: random.Random, i: int) -> Value:
    body = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}{digits(rng, 3)}"
    raw = body + luhn_digit(body)
    style, value = [("dash", f"{raw[:6]}-{raw[6:]}"), ("century", f"19{raw[:6]}-{raw[6:]}"), ("compact", raw)][i % 3]
    return style, value, rng.choice(["Personnummer: {}", "Förarens personnummer {}", "Pnr {}"]).format(value), False


def mrz_digit(text: str) -> str:
    """The ICAO Doc 9303 check digit: weights 7, 3, 1 over digits, A-Z as 10-35 and `<` as 0, mod 10."""
    values = [0 if c == "<" else int(c, 36) for c in text]
    return str(sum(v * (7, 3, 1)[k % 3] for k, v in enumerate(values)) % 10)


def v_passport_mrz(rng: random.Random, i: int) -> Value:
    number = pick(rng, UPPER, 2) + digits(rng, 7)
    nat = rng.choice(["DEU", "FRA", "GBR", "IND", "USA", "ESP", "BRA", "JPN"])
    dob = f"{rng.randint(50, 99):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    exp = f"{rng.randint(27, 35):02d}{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}"
    personal = "<" * 14
    head = number + mrz_digit(number) + nat + dob + mrz_digit(dob) + rng.choice("MF")
    tail = exp + mrz_digit(exp) + personal + mrz_digit(personal)
    composite = head[:10] + head[13:20] + tail[:7] + tail[7:22]
    line2 = head + tail + mrz_digit(composite)
    line1 = f"P<{nat}{rng.choice(LAST).upper()}<<{rng.choice(FIRST).upper()}".ljust(44, "<")
    ctx = rng.choice(["OCR passport scan at check-in:\n{}\n{}", "APIS document data\n{}\n{}", "MRZ:\n{}\n{}"])
    return "td3", line2, ctx.format(line1, line2), False


PROVIDERS: dict[str, Callable[[random.Random, int], Value]] = {
    "github_token": v_github_token, "stripe_secret_key": v_stripe_secret_key, "google_api_key": v_google_api_key,
    "sendgrid_key": v_sendgrid_key, "shopify_token": v_shopify_token, "square_token": v_square_token,
    "twilio_auth_token": v_twilio_auth_token, "mapbox_secret": v_mapbox_secret}
IDS: dict[str, Callable[[random.Random, int], Value]] = {
    "es_dni": v_es_dni, "br_cpf": v_br_cpf, "pl_pesel": v_pl_pesel, "nl_bsn": v_nl_bsn, "in_aadhaar": v_in_aadhaar,
    "fr_nir": v_fr_nir, "se_personnummer": v_se_personnummer, "passport_mrz": v_passport_mrz}
KINDS: dict[str, Callable[[random.Random, int], Value]] = {
    "password": v_password, "aws_secret": v_aws_secret, "webhook": v_webhook, "stripe_whsec": v_stripe_whsec,
    "connection_string": v_connection_string, "labelled_key": v_labelled_key, "disguised": v_disguised,
    "email": v_email, "phone_us_ca": v_phone_us_ca, "phone_uk": v_phone_uk, "phone_fr": v_phone_fr,
    "phone_de": v_phone_de, "phone_in": v_phone_in, "ssn": v_ssn, "card": v_card, "iban": v_iban,
    "jwt": v_jwt, "auth_header": v_auth_header, "private_key": v_private_key, "session_cookie": v_session_cookie,
    "totp_seed": v_totp_seed, **PROVIDERS, **IDS}


def carry(rng: random.Random, i: int, value: Value) -> tuple[str, str, bool]:
    """The carrier for case `i`: every third one JSON (unless the value must stay raw), cycling both lists; the
    text index counts text cases so every text carrier comes round."""
    style, secret, snip, raw_only = value
    if i % 3 == 0 and not raw_only:
        name = list(JSON_CARRIERS)[i // 3 % len(JSON_CARRIERS)]
        return name, JSON_CARRIERS[name](rng, snip, secret), True
    name = list(TEXT_CARRIERS)[2 * i // 3 % len(TEXT_CARRIERS)]
    return name, TEXT_CARRIERS[name](rng, snip, secret), False


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
    prefix = rng.choice(["4", "51", "52", "2221"])
    body = prefix + digits(rng, 15 - len(prefix))
    return group(body + str((int(luhn_digit(body)) + rng.randint(1, 9)) % 10), 4, " ")


def _gs1_digit(body: str) -> str:
    """GS1 mod 10 check digit (weights 3 and 1 from the right), as GTINs and SSCCs carry it."""
    total = sum(int(d) * (3 if k % 2 == 0 else 1) for k, d in enumerate(reversed(body)))
    return str((10 - total % 10) % 10)


def _container(rng: random.Random) -> str:
    """An ISO 6346 container number: owner code, U, six digits and the check digit."""
    owner = rng.choice(["MSC", "MAE", "CMA", "HLX", "ONE", "EGH"]) + "U" + digits(rng, 6)
    values = {c: v for c, v in zip(UPPER, [10, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 23, 24, 25, 26, 27, 28, 29,
                                                30, 31, 32, 34, 35, 36, 37, 38], strict=True)}
    total = sum((values[c] if c.isalpha() else int(c)) * 2 ** k for k, c in enumerate(owner))
    return owner + str(total % 11 % 10)


VIN_VALUES = dict(zip("ABCDEFGHJKLMNPRSTUVWXYZ", [1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 7, 9, 2, 3, 4, 5, 6, 7, 8, 9],
                      strict=True))
VIN_WEIGHTS = [8, 7, 6, 5, 4, 3, 2, 10, 0, 9, 8, 7, 6, 5, 4, 3, 2]


def _vin(rng: random.Random) -> str:
    """A VIN (ISO 3779) with the North American check digit in position 9 (49 CFR 565)."""
    chars = "ABCDEFGHJKLMNPRSTUVWXYZ0123456789"
    vin = rng.choice(["1FU", "3AK", "1XK", "WDB", "YV2"]) + pick(rng, chars, 5) + "0" + pick(rng, chars, 8)
    total = sum((VIN_VALUES[c] if c.isalpha() else int(c)) * w for c, w in zip(vin, VIN_WEIGHTS, strict=True))
    check = "X" if total % 11 == 10 else str(total % 11)
    return vin[:8] + check + vin[9:]


def _tracking(rng: random.Random) -> str:
    return rng.choice([f"UPS 1Z{pick(rng, UPALNUM, 6)}{rng.choice(['01', '02', '03'])}{digits(rng, 8)}",
                       f"FedEx tracking {rng.randint(10 ** 11, 10 ** 12 - 1)}",
                       f"USPS 9400 1{digits(rng, 3)} {digits(rng, 4)} {digits(rng, 4)} {digits(rng, 4)} "
                       f"{digits(rng, 2)}",
                       f"DHL waybill {digits(rng, 10)}"])


NEAR_MISSES: dict[str, Callable[[random.Random], str]] = {
    "tracking_number": lambda r: f"Shipped: {_tracking(r)} - out for delivery {_date(r)}",
    "pnr_ticket": lambda r: (lambda a: f"PNR {pick(r, UPPER, 6)}, e-ticket {a[1]}-{digits(r, 10)}, flight {a[0]} "
                                       f"{r.randint(10, 999)}")(r.choice(AIRLINES)),
    "confirmation_no": lambda r: f"Confirmation no. {r.randint(10 ** 7, 10 ** 8)} / OHIP resv "
                                 f"{r.randint(10 ** 6, 10 ** 7)} / Cloudbeds {r.randint(10 ** 11, 10 ** 12)}",
    "order_number": lambda r: f"Uber Eats order #{pick(r, UPALNUM, 5)}, Toast check {r.randint(1, 999)}, "
                              f"DoorDash D-{r.randint(10 ** 6, 10 ** 7)}, order guid {_uuid(r)}",
    "edi_control": lambda r: f"ISA13 {r.randint(1, 10 ** 9 - 1):09d} GS06 {r.randint(1, 9999)} ST02 0001 SCAC "
                             f"{r.choice(SCACS)} BOL {r.randint(10 ** 9, 10 ** 10)} PRO {r.randint(10 ** 8, 10 ** 9)}",
    "container_sscc": lambda r: (lambda body: f"Container {_container(r)}, SSCC (00){body}{_gs1_digit(body)}")(
        "0" + "0614141" + digits(r, 9)),
    "gtin": lambda r: (lambda body: f"GTIN (01){body}{_gs1_digit(body)} qty {r.randint(1, 400)} lot "
                                    f"L{r.randint(1000, 9999)}")("1" + "0614141" + digits(r, 5)),
    "vin": lambda r: f"Unit {r.randint(100, 999)} VIN {_vin(r)} odometer {r.randint(10000, 900000)} km",
    "coordinates": lambda r: f"lat {r.uniform(-60, 60):.6f}, lon {r.uniform(-170, 170):.6f}, geofence radius "
                             f"{r.choice([100, 250, 500])} m, heading {r.randint(0, 359)}°",
    "timestamp": lambda r: f"On duty {r.randint(0, 11):02d}:{r.randint(0, 59):02d}Z - off duty "
                           f"{r.randint(12, 23):02d}:{r.randint(0, 59):02d}Z, ETA {_ts(r)}, dwell "
                           f"{r.randint(5, 240)} min",
    "flight_seat": lambda r: f"{r.choice(AIRLINES)[0]} {r.randint(10, 999)} {r.choice(AIRPORTS)}-{r.choice(AIRPORTS)} "
                             f"seat {r.randint(1, 45)}{r.choice('ABCDEF')} gate {r.choice('ABCK')}{r.randint(1, 60)} "
                             f"group {r.randint(1, 6)}",
    "room_rate": lambda r: f"Room {r.randint(101, 1899)} {r.choice(ROOM_TYPES)} rate {r.choice(RATE_CODES)} "
                           f"{r.randint(1, 4)} adults {r.randint(1, 14)} nights market code {pick(r, UPPER, 3)}",
    "placeholder": lambda r: r.choice(["Password: ********", "Email: you@example.com", "API key: <YOUR_API_KEY>",
                                       "STRIPE_WEBHOOK_SECRET=whsec_...", "password: ${PMS_PASSWORD}",
                                       "Passwort: (siehe Tresor)", "token: {{ secrets.SAMSARA_TOKEN }}",
                                       "Mot de passe : ••••••••", "DATABASE_URL=postgresql://user:<password>@host/db"]),
    "masked": lambda r: r.choice([f"Visa •••• {digits(r, 4)}", f"card ending {digits(r, 4)}",
                                  f"+49 151 *** **{digits(r, 2)}", f"j***@{r.choice(DOMAINS)}",
                                  f"IBAN DE** **** **** **** **{digits(r, 2)}", f"SSN ***-**-{digits(r, 4)}"]),
    "luhn_invalid": lambda r: f"Folio reference {_luhn_bad(r)} (not a card)",
    "service_number": lambda r: r.choice(["UPS customer service 1-800-742-5877", "FedEx 1-800-463-3339",
                                          "USPS 1-800-275-8777", "DHL Express 1-800-225-5345",
                                          f"Reservations (toll-free) 1-800-{r.randint(200, 999)}-{digits(r, 4)}",
                                          f"Freephone 0800 {digits(r, 3)} {digits(r, 4)}",
                                          f"Kundenservice (kostenlos): 0800 {digits(r, 7)}"]),
    "request_id": lambda r: f"x-request-id: {_uuid(r)}; X-Amzn-Trace-Id: Root=1-{pick(r, HEX, 8)}-{pick(r, HEX, 24)}"
                            f"; traceparent: 00-{pick(r, HEX, 32)}-{pick(r, HEX, 16)}-01",
    "css_xpath": lambda r: r.choice(["#checkout-card-number", "input[name='password']",
                                     "//div[@id='guest-email']/input", '[data-testid="api-key-field"]',
                                     "form#login > input.secret-token", "//span[@class='iban-mask']"])
                           + f" (step {r.randint(1, 30)})",
    "label_pixels": lambda r: f"^XA^PW812^LL1218 203 dpi 4x6 in label, viewport {r.choice([1280, 1440, 1920])}x"
                              f"{r.choice([720, 900, 1080])}, thumbnail {r.randint(100, 400)}px",
    "cache_hash": lambda r: f"/static/js/main.{pick(r, HEX, 8)}.chunk.js?v={pick(r, HEX, 10)} ETag: "
                            f"W/\"{pick(r, HEX, 16)}\" commit {pick(r, HEX, 40)}",
    "csrf_name": lambda r: r.choice(["authenticity_token", "__RequestVerificationToken", "csrfmiddlewaretoken",
                                     "X-CSRF-Token", "_csrf"]) + " field present (value elided)",
    "version_string": lambda r: f"Opera Cloud {r.randint(22, 25)}.{r.randint(1, 4)}.0.{r.randint(0, 9)}, Samsara VG54 "
                                f"fw {r.randint(1, 3)}.{r.randint(0, 9)}.{r.randint(0, 99)}, Android build "
                                f"{r.randint(10, 13)}-{r.randint(10, 99)}-{r.randint(0, 20):02d}.00-RG-U00-STD",
    "hs_weight": lambda r: f"HS {r.randint(1000, 9999)}.{r.randint(10, 99)}.{r.randint(1000, 9999)}, "
                           f"{r.randint(1, 900)}.{r.randint(0, 9)} kg, {r.randint(10, 120)}x{r.randint(10, 80)}x"
                           f"{r.randint(5, 60)} cm, Incoterms {r.choice(['DAP', 'DDP', 'FCA', 'EXW'])}",
    "doc_example": lambda r: r.choice(["aws_access_key_id = AKIAIOSFODNN7EXAMPLE",
                                       "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                                       "export SENDGRID_API_KEY='SG.your-key'",
                                       "whsec_... (copy it from the dashboard)"]),
    "vessel_port": lambda r: f"Vessel IMO {r.choice(['9321483', '9811000', '9776171'])}, voyage "
                             f"{r.randint(100, 999)}W, POL {r.choice(LOCODES)} POD {r.choice(LOCODES)}",
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
