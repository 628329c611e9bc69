"""Label words by meaning, one translation table: the words for password, secret, key and phone, and the verb
"is" that prose puts between a label and its value, in the languages people label values in.

The rules' own lists (tracegym/redact/rules.py) hold the forms that need a pattern (`has[lł]o`, `pass[_-]?phrase`,
short forms like `pw`, identifier spellings like `mat_khau`); this table holds plain words, and a language is
added here, once for every rule that reads its meaning. A space inside a word matches a space, `_` or `-`
(`kata laluan`, `KATA_LALUAN`). Words of ASCII letters match in any case; the others as written, capitalised or
in upper case (RE2 folding the cases of every script's letters outgrows its automaton's budget).
"""

from __future__ import annotations

import re

PASSWORD: dict[str, tuple[str, ...]] = {
    "ca": ("contrasenya",), "tl": ("kontrasenya",), "gl": ("contrasinal",), "eu": ("pasahitza",), "ro": ("parolă",),
    "pt": ("palavra-passe",), "da": ("kodeord",), "is": ("lykilorð",), "et": ("salasõna", "parool"),
    "lt": ("slaptažodis",), "lv": ("parole",), "sl": ("geslo",), "hr": ("lozinka",), "sq": ("fjalëkalim",),
    "ga": ("pasfhocal",), "cy": ("cyfrinair",), "af": ("wagwoord",), "sw": ("nenosiri", "neno la siri"),
    "ms": ("kata laluan",), "az": ("şifrə",), "bg": ("парола",), "mk": ("лозинка",),
    "el": ("συνθηματικό", "κωδικός πρόσβασης", "κωδικός"),
    "ru": ("пароль",), "ka": ("პაროლი",), "hy": ("գաղտնաբառ",), "bn": ("পাসওয়ার্ড",), "ta": ("கடவுச்சொல்",),
    "fa": ("رمز عبور", "گذرواژه", "کلمه عبور", "پسورد"), "ar": ("باسورد",), "ur": ("پاس ورڈ",), "sr": ("лозинка",),
    "mt": ("kelma sigrieta",),
    "uk": ("пароль",), "kk": ("құпия сөз",), "uz": ("maxfiy so'z",), "am": ("የይለፍ ቃል", "የይለፍ ቃልዎ"), "pa": ("ਪਾਸਵਰਡ",),
    "te": ("పాస్‌వర్డ్", "సంకేతపదం"), "gu": ("પાસવર્ડ",), "kn": ("ಪಾಸ್‌ವರ್ಡ್",), "ml": ("പാസ്‌വേഡ്",),
    "si": ("මුරපදය",), "my": ("စကားဝှက်",), "km": ("ពាក្យសម្ងាត់",), "ha": ("kalmar sirri",), "jv": ("tembung sandhi",),
    "yo": ("ọrọ igbaniwọle",), "ne": ("पासवर्ड",), "mr": ("संकेतशब्द",),
    "ps": ("پټنوم",), "so": ("furaha sirta", "erayga sirta"), "zu": ("iphasiwedi",), "ig": ("okwuntughe",),
    "wo": ("baatu jàll",),
    "qu": ("yaykuna simi",), "gn": ("ñe'ẽñemi", "ñeʼẽñemi", "ñe’ẽñemi"),
    "hu": ("jelszava", "jelszavad", "jelszavát"), "mn": ("нууц үг",), "se": ("beassansátni",),
    "ht": ("modpas",), "pap": ("kontraseña",), "bi": ("paswod",),
}
"""Password, in languages beyond the rules' own list (English, German, French, Spanish, Portuguese, Dutch, Italian,
the Nordic and Slavic languages, Turkish, Indonesian, Arabic, Vietnamese, Korean, Hebrew, Greek, Hindi, Thai,
Japanese, Chinese): with this table the 24 official languages of the EU and the ~40 most written (CLDR);
Hungarian's possessive forms (`jelszava`: your password, as a site's message writes it), which its `jelszó` misses;
and the English word as Arabic and Farsi speakers borrow it (`الباسورد`, `پسورد`)."""

SECRET: dict[str, tuple[str, ...]] = {
    "fr": ("clé secrète", "clef secrète"), "pt": ("segredo", "chave secreta"), "es": ("secreto", "clave secreta"),
    "it": ("segreto",),
    "ca": ("clau secreta",), "ro": ("cheie secretă",), "hu": ("titok", "titkos kulcs"),
    "fi": ("salaisuus", "salainen avain"), "da": ("hemmelighed",), "no": ("hemmelighet",), "sv": ("hemlighet",),
    "nl": ("geheim",), "de": ("geheimnis",), "pl": ("sekret", "tajny klucz"), "cs": ("tajemství",),
    "uk": ("секрет", "секретний ключ"), "ru": ("секретный ключ",), "tr": ("gizli anahtar",), "el": ("μυστικό",),
    "ms": ("rahsia",), "id": ("rahasia",), "sw": ("siri",), "tl": ("lihim", "sikreto"), "vi": ("bí mật",),
    "th": ("ความลับ",), "bn": ("গোপন",), "fa": ("مخفی", "راز"), "he": ("סוד",), "hi": ("गुप्त",),
    "ko": ("비밀",), "ja": ("秘密",), "zh": ("密钥", "秘钥", "秘密"), "hr": ("tajna", "tajni ključ"),
    "sr": ("тајна", "тајни кључ"), "sl": ("skrivnost",), "sk": ("tajomstvo",), "bg": ("тайна",), "et": ("saladus",),
    "lv": ("noslēpums",), "lt": ("paslaptis",), "is": ("leyndarmál",), "ga": ("rún",), "mt": ("sigriet",),
    "sq": ("sekret",), "ar": ("سر",), "ur": ("خفیہ",), "eu": ("sekretua", "gako sekretua"), "gl": ("chave secreta",),
    "yo": ("kọkọrọ aṣírí", "kokoro asiri", "aṣírí"), "rw": ("urufunguzo rw'ibanga", "ibanga"),
    "ht": ("kle sekrè", "kòd sekrè"),
}
"""Secret and secret key, beyond English's."""

KEY: dict[str, tuple[str, ...]] = {
    "ro": ("cheie",), "hu": ("kulcs",), "fi": ("avain",), "da": ("nøgle",), "ca": ("clau",), "es": ("llave",),
    "tl": ("susi",), "ms": ("kunci",), "sw": ("ufunguo",), "uk": ("ключ",), "cs": ("klíč",), "sk": ("kľúč",),
    "lt": ("raktas",),
    "el": ("κλειδί",), "th": ("กุญแจ", "คีย์"), "bn": ("চাবি", "কী"), "fa": ("کلید",), "he": ("מפתח",), "hi": ("कुंजी",),
    "hr": ("ključ",), "sr": ("кључ",), "bg": ("ключ",), "mk": ("клуч",), "et": ("võti", "võtme"), "lv": ("atslēga",),
    "is": ("lykill",), "ga": ("eochair",), "mt": ("ċavetta",), "sq": ("çelës", "çelësi"), "cy": ("allwedd",),
    "eu": ("gakoa", "gako"), "az": ("açar",), "uz": ("kalit",), "kk": ("кілт", "кілті"), "ka": ("გასაღები",),
    "hy": ("բանալի",),
    "ta": ("சாவி", "விசை"), "te": ("కీ",), "mr": ("किल्ली",), "ne": ("कुञ्जी",), "si": ("යතුර",), "am": ("ቁልፍ",),
    "my": ("သော့", "ကီး"), "km": ("កូនសោ",), "ha": ("maɓalli",), "zh": ("金鑰", "密鑰", "秘鑰", "金钥"),
    "mi": ("kī",), "lo": ("ກະແຈ", "ລະຫັດ API"), "tpi": ("ki bilong",), "dv": ("ކީ",),
    "mn": ("түлхүүр",), "se": ("čoavdda",), "rm": ("clav",),
}
"""Key, beyond the rules' own list (key, clé, clave, chiave, Schlüssel, sleutel, nyckel, klucz, chave, nøkkel,
anahtar, jeton, khóa, مفتاح, 키, キー); Spanish says llave as often as clave; Romansh (Rumantsch Grischun) clav
(`Clav API`)."""

TOKEN: dict[str, tuple[str, ...]] = {
    "el": ("διακριτικό",), "he": ("אסימון",), "tr": ("belirteç", "belirteci"), "zh": ("令牌", "權杖"),
    "vi": ("mã truy cập", "mã thông báo"), "ru": ("токен",), "fa": ("توکن",), "hi": ("टोकन",), "th": ("โทเค็น",),
    "sw": ("tokeni",),
}
"""Token (an access token), beyond the words English, Korean and Japanese share with it (token, 토큰, トークン)."""

PHONE: dict[str, tuple[str, ...]] = {
    "pt": ("telemóvel", "telemovel", "me liga", "ligue para", "me chamar no", "me chama no", "chamar no zap", "zap"),
    "ca": ("telèfon", "mòbil", "truca'm al", "truqueu-me al"), "gl": ("móbil", "mobil"),
    "es": ("cel", "celu", "contacto", "llamar al"), "ht": ("rele m nan", "rele m sou"),
    "ay": ("jawsañataki",), "eu": ("mugikorra", "telefonoa", "telefono zenbakia"), "gn": ("pumbyry",),
    "hu": ("telefonszám", "mobilszám", "hívjon", "hívj"),
    "fi": ("puhelin", "puhelinnumero", "matkapuhelin", "soita"),
    "ro": ("sunați", "sunati", "telefon mobil", "sunați-mă la"), "no": ("ring meg",), "da": ("ring til mig",),
    "ms": ("nombor telefon", "hubungi saya di", "telefon bimbit"),
    "id": ("nomor telepon", "ponsel", "telpon", "telp", "hubungi", "nomor WA"),
    "sw": ("namba ya simu", "simu", "nipigie kwa", "nipigie simu"),
    "tl": ("telepono", "tawagan mo ako sa", "tawagan ako sa", "tawagan sa", "cellphone"),
    "ceb": ("tawagi ko sa", "tawagi sa"),
    "lt": ("mobilusis", "mobilaus", "skambinkite", "paskambinkite"),
    "lv": ("mobilais", "zvaniet man", "tālrunis", "tālruņa", "tālruņa numurs", "tālr"),
    "hr": ("mobitel", "broj telefona", "nazovite me na"), "sl": ("telefonska številka", "pokličite me na", "mobitel"),
    "cs": ("telefonní číslo", "zavolejte mi", "mobil"),
    "el": ("τηλέφωνο", "κινητό", "καλέστε με", "τηλεφωνήστε μου", "τηλ"),
    "uk": ("телефон", "мобільний", "номер телефону"), "ru": ("мобильный", "моб", "звоните", "позвоните", "по номеру"),
    "bg": ("телефонен номер", "мобилен", "тел", "обадете ми се на"),
    "he": ("טלפון", "נייד", "להתקשר אליי", "התקשרו אליי"),
    "fa": ("شماره تلفن", "تلفن", "موبایل", "شماره تماس", "واتساپ"),
    "ar": ("اتصل بي", "موبايل", "نقال", "واتساب", "واتس اب", "رقم الواتس", "رقم التواصل", "نومرو", "jawal", "jawwal"),
    "ur": ("فون نمبر", "فون", "موبائل"),
    "bn": ("ফোন নম্বর", "ফোন", "মোবাইল", "আমাকে কল করুন"),
    "ta": ("தொலைபேசி", "கைபேசி", "மொபைல்", "அழைக்கவும்", "அழையுங்கள்"),
    "hi": ("कॉल करें", "कॉल करो", "संपर्क करें", "संपर्क"), "th": ("โทร", "มือถือ"),
    "zh": ("电话", "手机", "電話"), "et": ("mobiil", "telefoninumber", "helista mulle", "helistage mulle"),
    "se": ("telefovdna", "mobiila", "mátketelefovdna"),
    "is": ("sími", "símanúmer", "farsími", "hringdu í", "hringið í"),
    "sk": ("telefón", "zavolajte mi na", "zavolaj mi na"),
    "sr": ("мобилни", "телефон", "позовите ме на", "mobilni", "pozovite me na"),
    "tr": ("cep", "cep telefonu", "arayın", "beni ara", "iletişim numarası", "İletişim numarası"),
    "mt": ("mowbajl", "ċempel", "numru tat-telefon"),
    "ga": ("fón", "guthán", "uimhir fóin", "gutháin", "ghutháin", "uimhir ghutháin", "fón póca"),
    "pl": ("zadzwoń do mnie", "zadzwonić pod", "zadzwonić na", "dzwońcie na", "dzwoń na", "dzwonić na",
           "kontakt telefoniczny", "telefon komórkowy"), "cy": ("ffôn", "rhif ffôn", "ffôn symudol", "ffoniwch fi"),
    "af": ("selfoon", "foon", "bel my"),
    "ha": ("waya", "wayar", "wayata", "lambar waya", "lambar wayata", "kira ni"),
    "yo": ("fóònù", "foonu", "nọ́mbà fóònù", "pè mí"), "zu": ("ucingo", "yocingo", "iselula", "ifoni", "ngishayele"),
    "xh": ("ifowuni", "yefowuni", "umnxeba"), "lg": ("essimu", "ssimu"),
    "am": ("ስልክ", "ሞባይል"), "ka": ("ტელეფონ", "მობილურ"), "hy": ("հեռախոս", "բջջային"),
    "mn": ("утас", "утсаар"), "kk": ("ұялы",), "si": ("දුරකථන", "ජංගම"), "km": ("ទូរស័ព្ទ",), "my": ("ဖုန်း",),
    "ps": ("تلیفون", "ټیلیفون", "ګرځنده"),
    "te": ("ఫోన్ నంబర్", "ఫోన్", "మొబైల్"), "gu": ("ફોન નંબર", "ફોન", "મોબાઇલ"), "kn": ("ಫೋನ್ ಸಂಖ್ಯೆ", "ಫೋನ್", "ಮೊಬೈಲ್", "ಕರೆ ಮಾಡಿ"),
    "ml": ("ഫോൺ നമ്പർ", "ഫോൺ", "മൊബൈൽ"), "pa": ("ਫ਼ੋਨ ਨੰਬਰ", "ਫ਼ੋਨ", "ਮੋਬਾਈਲ"), "mr": ("फोन नंबर", "मोबाईल", "भ्रमणध्वनी"),
    "ne": ("फोन नम्बर",), "ig": ("ekwentị", "nọmba ekwentị"),
    "tpi": ("namba bilong fon", "fon namba"), "bi": ("namba blong fon",), "fj": ("naba ni talevoni", "talevoni"),
    "dz": ("ཁ་པར",), "dv": ("ފޯނު",), "en": ("give us a bell on", "give me a bell on"),
    "gsw": ("natel",),
}
"""Phone, beyond the rules' own list (English, French, German, Spanish, Portuguese, Italian, Dutch, the Nordic
languages, Polish, Turkish, Vietnamese, Japanese, Korean, Arabic, Thai, Hindi); "call me" as people write it before a
number (`hívjon`, `soita`, `звоните по номеру`, `ring meg på`, `me liga no`). Words of scripts without spaces
between a word's stem and its endings or articles are stems (`ტელეფონ` for `ტელეფონის`, `հեռախոս` for
`հեռախոսահամարն`); inflected Latin forms are listed (`wayata`, `ghutháin`). Arabic as the Gulf, Egypt and the
Maghreb write it: `نقال` and `موبايل` (mobile), `واتساب` (WhatsApp), `رقم التواصل` (contact number), darija's
`نومرو` (numéro), and Saudi `جوال` in Latin letters as forms and APIs name a field (`jawal`); Farsi's `شماره تماس`
(contact number); Turkish `iletişim numarası`, its dotted capital written too (Python's `upper` gives `I`). Greek's
abbreviation `τηλ.` (`Τηλ.:`, as `Tel.` in a letterhead or signature), a stem like the other scripts' before an
ending; Swiss German's `Natel`, a mobile phone in Switzerland and Liechtenstein (Swisscom's name, then everyone's)."""

IS: dict[str, tuple[str, ...]] = {
    "fi": ("on",), "ms": ("ialah", "adalah"), "sw": ("ni",), "ro": ("este",), "ca": ("és",), "tl": ("ay",),
    "uk": ("це",), "th": ("คือ",), "cs": ("je",), "sk": ("je",), "sl": ("je",), "hr": ("je",),
    "el": ("είναι",), "he": ("היא", "הוא"), "et": ("on",), "lv": ("ir",), "lt": ("yra",), "is": ("er",),
    "sq": ("është",), "bg": ("е",), "sr": ("је",), "ru": ("это",), "mt": ("hu", "hija"),
}
""""Is" between a label and its value ("salasana on …", "rahsia saya ialah …"), beyond the rules' own list."""


RECOVERY: dict[str, tuple[str, ...]] = {
    "vi": ("mã khôi phục", "mã dự phòng"), "th": ("รหัสกู้คืน", "รหัสสำรอง"), "id": ("kode pemulihan", "kode cadangan"),
    "ms": ("kod pemulihan", "kod sandaran"), "ru": ("код восстановления", "резервный код"),
    "uk": ("коди відновлення", "код відновлення", "резервні коди", "резервний код"),
    "el": ("κωδικοί ανάκτησης", "κωδικός ανάκτησης", "εφεδρικοί κωδικοί", "εφεδρικός κωδικός"),
    "hu": ("helyreállítási kód", "helyreállítási kódok", "tartalék kód", "tartalékkód"),
    "ro": ("coduri de recuperare", "cod de recuperare", "coduri de rezervă", "cod de rezervă"),
    "cs": ("kódy pro obnovení", "obnovovací kód", "záložní kód"), "sk": ("záložné kódy", "kódy na obnovenie"),
    "fi": ("palautuskoodi", "palautuskoodit", "varakoodi"), "tr": ("kurtarma kodu", "yedek kod"),
    "he": ("קודי שחזור", "קוד שחזור", "קודי גיבוי", "קוד גיבוי"),
    "ar": ("رموز الاسترداد", "رمز الاسترداد", "رموز احتياطية", "رمز احتياطي"),
    "fa": ("کدهای بازیابی", "کد بازیابی", "کد پشتیبان"), "hi": ("रिकवरी कोड", "बैकअप कोड", "पुनर्प्राप्ति कोड"),
    "bn": ("রিকভারি কোড", "ব্যাকআপ কোড"), "ja": ("復旧コード", "回復コード"),
    "zh": ("恢复代码", "备份代码", "復原碼", "备用验证码", "備用驗證碼", "恢復代碼"),
    "pl": ("kod odzyskiwania", "kod zapasowy"), "it": ("codice di recupero", "codice di backup"),
    "de": ("notfallcodes", "notfallcode", "ersatzcodes"),
    "nl": ("back-upcodes", "back-upcode", "reservecodes", "reservecode", "herstelcode"),
    "da": ("backupkoder", "backupkode", "reservekoder", "reservekode"),
    "no": ("gjenopprettingskoder", "reservekoder", "reservekode"), "sv": ("reservkod",),
    "bg": ("резервен код", "резервни кодове", "код за възстановяване"),
    "lv": ("rezerves kods", "rezerves kodi", "atkopšanas kods"),
    "lt": ("atsarginis kodas", "atsarginiai kodai", "atkūrimo kodas"),
    "et": ("varukood", "varukoodid", "taastekood"),
    "ka": ("სარეზერვო კოდი", "სარეზერვო კოდები", "აღდგენის კოდი"),
    "hy": ("պահուստային կոդ", "վերականգնման կոդ"),
}
"""Recovery or backup codes of a two-factor sign-in, beyond the rules' own list (English, German, French, Spanish,
Portuguese, Italian, Dutch, Polish, the Nordic languages, Turkish, Russian, Czech, Japanese, Chinese, Korean); the
Baltic, Bulgarian, Georgian and Armenian words as Google's and GitHub's localised pages print them; one
code in the singular too, as a message that hands a user one writes it (`Reservkod`, `קוד גיבוי`, Google's
Chinese `备用验证码`)."""

SETUP_KEY: dict[str, tuple[str, ...]] = {
    "el": ("κλειδί ρύθμισης", "μυστικό κλειδί"),
    "uk": ("ключ налаштування", "секретний ключ", "секрет 2FA", "ключ 2FA", "секрет TOTP"),
    "ru": ("ключ настройки", "секретный ключ", "секрет 2FA", "ключ 2FA", "секрет TOTP"),
    "nl": ("instellingssleutel", "geheime sleutel"),
    "pl": ("klucz konfiguracji", "klucz konfiguracyjny", "tajny klucz", "klucz 2FA", "klucz TOTP"),
    "tr": ("kurulum anahtarı", "gizli anahtar", "doğrulama anahtarı"),
    "vi": ("khóa thiết lập", "khóa bí mật", "mã bí mật 2FA", "mã bí mật TOTP"),
    "id": ("kunci penyiapan", "kunci rahasia"), "ms": ("kunci persediaan",),
    "th": ("คีย์การตั้งค่า", "คีย์ลับ", "รหัสลับ 2FA", "รหัสลับ TOTP"), "ja": ("セットアップキー", "設定キー", "シークレットキー"),
    "zh": ("设置密钥", "設定金鑰"),
    "ko": ("설정 키", "비밀 키"), "cs": ("klíč pro nastavení", "tajný klíč", "klíč 2FA", "klíč TOTP"),
    "hu": ("beállítási kulcs", "titkos kulcs"),
    "ro": ("cheie de configurare", "cheie secretă"), "he": ("מפתח הגדרה",), "ar": ("مفتاح الإعداد",),
    "fa": ("کلید احراز هویت",),
    "hi": ("सेटअप कुंजी",), "sv": ("inställningsnyckel",), "da": ("opsætningsnøgle",), "no": ("oppsettsnøkkel",),
    "fi": ("asetusavain",),
    "sk": ("kľúč 2FA", "kľúč TOTP"), "bg": ("ключ 2FA", "тайна 2FA"),
    "sw": ("ufunguo wa 2FA", "ufunguo wa TOTP", "siri ya 2FA"),
    "ht": ("kòd sekrè 2FA", "kle sekrè 2FA", "kòd sekrè TOTP"),
}
"""An authenticator's setup key (the secret an app is given by hand), beyond the rules' English, German, French,
Spanish, Portuguese and Italian; and the word for key or secret before the second factor's name (`Klíč 2FA`,
`Секрет 2FA`), as the Slavic languages put it; the authentication or verification key of a two-step sign-in
(Farsi `کلید احراز هویت دومرحله‌ای`, Turkish `iki adımlı doğrulama anahtarı`)."""

PAIRING: dict[str, tuple[str, ...]] = {
    "de": ("Kopplungscode", "Einrichtungscode"), "fr": ("code d'appairage", "code de couplage"),
    "es": ("código de emparejamiento", "código de vinculación"), "pt": ("código de emparelhamento",
                                                                      "código de pareamento"),
    "it": ("codice di abbinamento", "codice di associazione"), "nl": ("koppelcode", "koppelingscode"),
    "sv": ("parkopplingskod",), "da": ("parringskode",), "no": ("paringskode",), "fi": ("pariliitoskoodi",),
    "pl": ("kod parowania",), "cs": ("párovací kód",), "hu": ("párosítási kód",), "ro": ("cod de asociere",),
    "tr": ("eşleştirme kodu", "kurulum kodu"), "ru": ("код сопряжения",), "uk": ("код сполучення",),
    "el": ("κωδικός σύζευξης",), "ja": ("ペアリングコード", "セットアップコード"), "zh": ("配对码", "配對碼"),
    "ko": ("페어링 코드", "설정 코드"), "vi": ("mã ghép nối",), "id": ("kode pemasangan", "kode penyandingan"),
    "th": ("รหัสจับคู่",), "ar": ("رمز الإقران",), "he": ("קוד צימוד",), "hi": ("पेयरिंग कोड",),
}
"""A device's pairing or setup code (Matter, HomeKit), beyond the rules' English."""

PIN: dict[str, tuple[str, ...]] = {
    "fr": ("code secret", "code confidentiel"), "de": ("Geheimzahl",), "es": ("número secreto",),
    "sw": ("namba ya siri", "nambari ya siri"), "ha": ("lambar sirri",), "am": ("የሚስጥር ቁጥር", "ሚስጥራዊ ቁጥር"),
    "hi": ("पिन", "एमपिन", "पिन नंबर"), "bn": ("পিন", "পিন নম্বর"), "ur": ("پن کوڈ", "پن نمبر"),
    "ar": ("الرقم السري", "الرمز السري", "رقم سري"),
    "fa": ("رمز اول", "رمز کارت"), "he": ("קוד סודי",),
}
"""A card's or a mobile-money wallet's PIN: the word itself in other scripts, and the "secret number/code" that
banks and wallets (M-Pesa, telebirr, bKash, Iranian cards' first PIN) print for it, beyond the rules' `PIN`."""

SOCIAL_SECURITY: dict[str, tuple[str, ...]] = {
    "th": ("หมายเลขประกันสังคม", "เลขประกันสังคม"), "vi": ("số an sinh xã hội",), "id": ("nomor jaminan sosial",),
    "ms": ("nombor keselamatan sosial",), "ru": ("номер социального страхования",),
    "uk": ("номер соціального страхування",), "el": ("αριθμός κοινωνικής ασφάλισης",),
    "hu": ("társadalombiztosítási szám",), "ro": ("număr de securitate socială", "numărul de securitate socială"),
    "pl": ("numer ubezpieczenia społecznego",), "cs": ("číslo sociálního pojištění",),
    "tr": ("sosyal güvenlik numarası",), "he": ("מספר ביטוח לאומי",), "ar": ("رقم الضمان الاجتماعي",),
    "fa": ("شماره تامین اجتماعی",), "hi": ("सामाजिक सुरक्षा संख्या",), "bn": ("সামাজিক নিরাপত্তা নম্বর",),
    "ko": ("사회보장번호",), "nl": ("socialezekerheidsnummer",), "fi": ("sosiaaliturvatunnus",),
    "sv": ("socialförsäkringsnummer",),
}
"""A social security number, beyond the rules' English, German, French, Spanish, Italian, Portuguese, Japanese and
Chinese."""

ID_NUMBER: dict[str, tuple[str, ...]] = {
    "ru": ("номер документа", "идентификационный номер"), "uk": ("номер документа", "ідентифікаційний номер"),
    "hu": ("azonosítószám", "személyi azonosító", "személyi szám"), "de": ("ausweisnummer", "identifikationsnummer"),
    "fr": ("numéro d'identification", "numéro de pièce d'identité", "numéro de document"),
    "es": ("número de documento", "número de identificación", "número de identidad"),
    "pt": ("número de identificação", "número do documento"), "it": ("numero di documento", "numero identificativo"),
    "nl": ("identificatienummer", "documentnummer"), "pl": ("numer dokumentu", "numer identyfikacyjny"),
    "tr": ("belge numarası", "kimlik numarası"), "ja": ("身分証番号", "身分証明書番号"), "zh": ("证件号码", "證件號碼"),
    "ko": ("신분증 번호",), "vi": ("số giấy tờ", "số định danh", "số căn cước"),
    "id": ("nomor identitas", "nomor dokumen"), "th": ("เลขประจำตัว", "หมายเลขเอกสาร"),
    "el": ("αριθμός ταυτότητας", "αριθμός εγγράφου"), "ro": ("număr de identificare", "numărul documentului"),
    "cs": ("číslo dokladu",), "sv": ("identitetsnummer",), "fi": ("tunnistenumero",), "he": ("מספר זהות",),
    "ar": ("رقم الهوية", "هوية"), "hi": ("पहचान संख्या",),
}
"""An identity or document number that says no country (read by every id's check), beyond English."""


def alternation(*tables: dict[str, tuple[str, ...]], latin: bool | None = None) -> str:
    """The tables' words as one regular expression (RE2 and Python syntax alike): longest first, ASCII words in
    any case (the others as written, capitalised or in upper case), a space matching a space, `_` or `-`. `latin`:
    only the words that open and end with an ASCII letter (True; ASCII word boundaries can stand around them) or
    only the others (False: `fóònù`, whose last letter no ASCII `\\b` follows)."""
    words = sorted({w for table in tables for ws in table.values() for w in ws
                    if latin is None or _bounded(w) == latin}, key=lambda w: (-len(w), w))
    return "(?:" + "|".join(_pattern(w) for w in words) + ")"


def _bounded(word: str) -> bool:
    return word[0].isascii() and word[-1].isascii()


def _pattern(word: str) -> str:
    if word.isascii():
        return "(?i:" + "[ _-]".join(re.escape(part) for part in word.split(" ")) + ")"
    # Case folding beyond ASCII swells RE2's automaton: the forms a label takes instead (as written, capitalised,
    # upper case: `телефон`, `Телефон`, `ТЕЛЕФОН`).
    forms = dict.fromkeys((word, word[0].upper() + word[1:], word.upper()))
    return "(?:" + "|".join("[ _-]".join(re.escape(p) for p in form.split(" ")) for form in forms) + ")"
