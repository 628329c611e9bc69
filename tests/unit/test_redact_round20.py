"""Mobile apps' configs and payloads: DSL passwords, login bodies, spaced JSON keys, forms' labels, more words."""

import pytest

from tracegym.redact.detect import Detector

FCM = ("AAAArQuGv-n:APA91bKJmIwTJFVOTQJqOuIpsAeHzj-X1qfFgBXkfOeVyOX3AiZ6KpmTzGlZlokZo-k-F8gbAqapp3L0diauGsZ1bL9m9vz"
       "YlE6Y6GDwv8ffjJIvBQSdsZCWm6MQYN_yiXt20Ze1UG6i")


@pytest.fixture(scope="module")
def detector() -> Detector:
    return Detector()


@pytest.mark.parametrize(("text", "value"), [
    ('signingConfigs {\n    release {\n        storePassword "vauuy-dbksa-hadei85"\n    }\n}', "vauuy-dbksa-hadei85"),
    ('keyPassword "w4T!#pM1nV8G!cs*"', "w4T!#pM1nV8G!cs*"),
    ('D OkHttp  : {"login":"ops_android","pass":"pH77hAxKE5nTQ2si"}', "pH77hAxKE5nTQ2si"),
    ('{"users":[{"user":"admin","pass":"ukdog-aqoeg-xxhtv12"}]}', "ukdog-aqoeg-xxhtv12"),
    ("DATABASE_URL=postgres://app_rw:wIMsEX7ID9lZ!l9v@cluster0.x8kq2.mongodb.net:6543/app", "wIMsEX7ID9lZ!l9v"),
    ('{"fields":{"Client Secret":{"stringValue":"a922b44bdb22cd3a3ae57a7c1cb8fb10"}}}',
     "a922b44bdb22cd3a3ae57a7c1cb8fb10"),
    ("Employee's social security number\n428682041\nWages, tips, other compensation 48210.55", "428682041"),
    ("[10:42] Karim Benali: vous pouvez me rappeler au 0236154384", "0236154384"),
    ("pode me chamar no zap 21-98485-7362", "21-98485-7362"),
    ("proszę zadzwonić pod 666-961-237", "666-961-237"),
    ("kontakt telefoniczny: 721-066-346", "721-066-346"),
    (f"ok pushed it, use {FCM}", FCM),
])
def test_found(detector, text, value):
    assert value in [f.value for f in detector.find(text)]


@pytest.mark.parametrize("text", [
    '{"PASS": "tests/test_io.py::test_read", "FAIL": "tests/test_io.py::test_write"}',
    '{"pass": "12", "fail": "0"}',
    '{"pass": "skipped"}',
    'getPassword "prompt"',
    '{"fields":{"display name":{"stringValue":"Ana Ruiz"}}}',
    "o zap do cliente caiu às 10",
])
def test_left(detector, text):
    assert detector.find(text) == [], text
