"""Forms a trust & safety desk holds: recovery codes a victim reports handing over, Persona's API keys, e-mail
addresses spelt out to slip past a chat filter, and passport numbers after French and Turkish labels. Values written
for these tests."""

from __future__ import annotations

import json

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("he said he was from support and wanted my backup code, so I sent 4821 0937", "4821 0937"),
    ("they asked for the recovery codes and I gave them 7a3c1-e90f2", "7a3c1-e90f2"),
    ("pidió mi código de recuperación, I typed k8w2-zq5m into his form", "k8w2-zq5m"),
    (json.dumps({"body": "the caller wanted my Wiederherstellungscode, I shared p4v9tq2xm7hd"}), "p4v9tq2xm7hd"),
    ("someone DMed me for my backup code and I read out WQ4T-7ZK2-M9PD", "WQ4T-7ZK2-M9PD")])
def test_a_recovery_code_handed_over(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "I set up backup codes and sent the report on 2024-05-01",
    "the recovery codes were sent to ticket INC-40213",
    "backup code requests: I sent them to the queue"])
def test_no_recovery_code_where_nothing_handed_over_is_one(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("key", ["persona_production_3f2b8c1e-9a4d-4e7f-b1c2-5d6e7f8a9b0c",
                                 "persona_sandbox_0c9b8a7f-6e5d-4c3b-a2f1-e0d9c8b7a6f5"])
def test_a_persona_key_anywhere(key: str) -> None:
    assert _values(f"persona key = {key}") == [key]
    assert _values(f"rotated {key} after the leak") == [key]


def test_no_persona_key_in_a_name_without_its_uuid() -> None:
    assert _values("see persona_production_inquiries and persona_sandbox_setup docs") == []


@pytest.mark.parametrize(("text", "value"), [
    ("can't post it here so: dana.k7 at gmail dot com", "dana.k7 at gmail dot com"),
    ("hit me up → rosa_m at yahoo dot co dot uk", "rosa_m at yahoo dot co dot uk"),
    ("piotrek at wp dot pl, bo filtr blokuje", "piotrek at wp dot pl"),
    ("write to h.weber at web dot de instead", "h.weber at web dot de")])
def test_an_address_spelt_past_a_filter(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "message me at gmail dot com or whatever",
    "look at this dot com bubble all over again",
    "we stayed at home dot then left",
    "the tooltip sits at outlook's toolbar dot icon"])
def test_no_address_in_prose_with_at_and_dot(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("N° de passeport QK4058213 (vérifié)", "QK4058213"),
    ("nº de pasaporte XD7731902", "XD7731902"),
    ("pasaport no U48120937, kimlik doğrulandı", "U48120937"),
    ("Pasaport numarası: TR5093317", "TR5093317")])
def test_a_passport_number_after_french_spanish_and_turkish_labels(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "pasaport notes REVIEWED by the desk",
    "N° de passeport manquant"])
def test_no_passport_number_after_the_label_alone(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("text", [
    "Si necesitas hablar: Teléfono de la Esperanza 717 903 717",
    "TELEFONO AZZURRO 02 5550 1234 (24h)",
    "Telefon Zaufania: 22 484 88 01"])
def test_no_phone_national_for_a_helpline_named_after_the_phone(text: str) -> None:
    assert [f.rule.name for f in DETECTOR.find(text)].count("phone_national") == 0


def test_a_person_s_phone_after_a_helpline_s_name() -> None:
    assert _values("contacted Telefon Zaufania, my Telefon: 512 340 876") == ["512 340 876"]


@pytest.mark.parametrize(("text", "value"), [
    ("key: Sonnenblümchen48$", "Sonnenblümchen48$"),
    ("mi clave es Añoranza#2031", "Añoranza#2031"),
    ("ｋｅｙ： Ｆｒüｈｌｉｎｇ５５？", "Ｆｒüｈｌｉｎｇ５５？")])
def test_a_generated_password_with_latin_1_letters(text: str, value: str) -> None:
    assert value in _values(text)


@pytest.mark.parametrize("text", ["Größe 10$ pro Stück", "Ärger#1 im Büro", "café-crème à 4€"])
def test_no_generated_password_in_accented_prose(text: str) -> None:
    assert [f.rule.name for f in DETECTOR.find(text)].count("generated_password") == 0


@pytest.mark.parametrize(("text", "value"), [
    ("連絡先はkenji.sato7@example.jpです", "kenji.sato7@example.jp"),
    ("이메일은hana+work@example.kr입니다", "hana+work@example.kr"),
    ("请发到 wang.lei@example.cn。谢谢", "wang.lei@example.cn")])
def test_an_address_cjk_text_runs_on_into(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_address_for_an_image_density_before_cjk_text() -> None:
    assert _values("ロゴはicon@2x.pngです") == []


def test_an_authenticator_secret_after_the_japanese_setup_key() -> None:
    assert _values("設定キー: m4xq 7rtd kw2p zn5c") == ["m4xq 7rtd kw2p zn5c"]
    assert _values("設定キーを入力してください") == []


@pytest.mark.parametrize(("text", "value"), [
    ("clave secreta de AWS: /Qm7vT2kLp9Rx4Wz8Nb3Hc6Jd1Fg5Ys0Ue+Ka2Mi", "/Qm7vT2kLp9Rx4Wz8Nb3Hc6Jd1Fg5Ys0Ue+Ka2Mi"),
    ("chave de acesso secreta = Zk3/9QvLm+Rt8pWx2Yb7Nc4Hd6Fj1Gs5Ka0Ue/Ti", "Zk3/9QvLm+Rt8pWx2Yb7Nc4Hd6Fj1Gs5Ka0Ue/Ti"),
    ("clé d'accès secrète : Hy8/Vt3Qp6Lm2Rw9Xz4Kb7Nc1Dj5Fg0Sa+Ue3Wi8O", "Hy8/Vt3Qp6Lm2Rw9Xz4Kb7Nc1Dj5Fg0Sa+Ue3Wi8O")])
def test_an_aws_secret_after_a_romance_label(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_aws_secret_after_a_romance_label_on_prose() -> None:
    assert _values("la clave secreta de AWS: guárdala en un gestor de secretos") == []


def test_a_key_after_the_swahili_key_of_the_api() -> None:
    assert _values("Ufunguo wa API: 9c4e1a7b3f82d605") == ["9c4e1a7b3f82d605"]
    assert _values("Ufunguo wa API unapatikana kwenye dashibodi") == []


@pytest.mark.parametrize(("text", "value"), [
    ("# Tq8$wLmz3Pk\nLOG_LEVEL=info", "Tq8$wLmz3Pk"),
    ("- Rv5@nJc2Xe9", "Rv5@nJc2Xe9"),
    ("#1 Hw4?bKs7Dq", "Hw4?bKs7Dq")])
def test_a_generated_password_after_a_lone_symbol(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_generated_password_in_a_hashtag_or_heading() -> None:
    assert _values("## Release v2.1 #Tag1 notes") == []
