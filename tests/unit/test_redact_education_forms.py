"""Secrets and personal data as schools and e-learning platforms hold them (the forty-sixth corpus's causes):
East Asian identity numbers after their labels, CJK labels included. Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


@pytest.mark.parametrize(("text", "value"), [
    ("學生資料：身分證字號 D120345675，請確認", "D120345675"),
    ("【身分證統一編號】M288004132", "M288004132"),
    ("マイナンバー（個人番号）：3041 7729 5816", "3041 7729 5816"),
    ("個人番号 820061433772 を提出しました", "820061433772"),
    ("香港身份證號碼「K540213(1)」", "K540213(1)"),
    ("HKID: XA120447(2)", "XA120447(2)"),
    ("Hi, NRIC: S8812034E — please check", "S8812034E"),
    ('{"nric": "T0451177D"}', "T0451177D"),
    ("FIN: M4401297Q", "M4401297Q")])
def test_east_asian_identity_numbers_after_their_labels(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "身分證字號 D120345676",  # check digit off
    "マイナンバー（個人番号）：3041 7729 5817",
    "香港身份證號碼 K540213(2)",
    "NRIC: S8812034F",
    "Order T0451177D shipped",  # no label
    "call my number 304177295816"])  # English prose, not the label
def test_east_asian_identity_numbers_need_label_and_check(text: str) -> None:
    assert _values(text) == []


def test_an_identity_number_in_a_table_under_its_label() -> None:
    text = "| 姓名 | 身分證字號 |\n|---|---|\n| 王 | P198765437 |"
    assert "P198765437" in _values(text)


@pytest.mark.parametrize(("text", "value"), [
    ("Conversation body: 備用驗證碼「3141 5926」", "3141 5926"),
    ("保護者より：【バックアップ コード】2718 2818 よろしく", "2718 2818"),
    ("Registrar: recovery code → b7c91-04e2d", "b7c91-04e2d"),
    ("복구 코드은(는) 5e1f0-a93c2입니다", "5e1f0-a93c2"),
    ("【教务处通知】【恢复代码】0c4d2-77e1a", "0c4d2-77e1a"),
    ("先生、リカバリーコードは4412 9087です", "4412 9087"),
    ("恢复代码是d3e81-20b9f", "d3e81-20b9f"),
    ("[학사팀] [복구 코드] 9f0e2-41c7d", "9f0e2-41c7d"),
    ("復原碼〔6603 1298〕", "6603 1298")])
def test_recovery_codes_after_cjk_labels_and_arrows(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "バックアップコードは設定画面から再発行できます",
    "recovery code → see the settings page",
    "恢复代码是什么？"])
def test_recovery_code_labels_without_a_code(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("Moodle Webservice-Token为：e41b7c09d2a83f5601bc9e74a2d6f318", "e41b7c09d2a83f5601bc9e74a2d6f318"),
    ("Kaltura admin secret「93ad0c4e71b2f58a6d0e3c91b7a4f265」", "93ad0c4e71b2f58a6d0e3c91b7a4f265"),
    ("【LINE Channel secret】5c0e8a2f71d94b36e8a1c7f0d2b945e3", "5c0e8a2f71d94b36e8a1c7f0d2b945e3"),
    ("[API 키] 0f6b2d8e4a91c37d5e0b8f2a6c4d1e97", "0f6b2d8e4a91c37d5e0b8f2a6c4d1e97"),
    ("Agora App Certificateは「b17e4c2a90d35f68e1c0a7b4d2f96e38」", "b17e4c2a90d35f68e1c0a7b4d2f96e38"),
    ("Agora App Certificate〔c28f5d3b01e46a79f2d1b8c5e3a07f49〕", "c28f5d3b01e46a79f2d1b8c5e3a07f49"),
    ("LTI 1.1 shared secret『Wq3nZ7rT5yKd9LmB2xVc8PhS』", "Wq3nZ7rT5yKd9LmB2xVc8PhS"),
    ("【AccessKey Secret】Hr6tY2uN9bM4kQ8wE3sD7fG5jL1zXc", "Hr6tY2uN9bM4kQ8wE3sD7fG5jL1zXc")])
def test_keys_after_labels_joined_the_cjk_way(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "密钥「请向管理员申请」",
    "【API Key】申请中，请稍候",
    "訂單編號「4f1c2e8a9b7d3c5e6f0a1b2c3d4e5f60」"])  # no key word
def test_cjk_joined_labels_without_a_key(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("config.php: $CFG->dbpass    = 'Kx9#mTq2Lw4!'; ok", "Kx9#mTq2Lw4!"),
    ("登录密码「mei2007^」 谢谢老师", "mei2007^"),
    ("密碼「Zq4%Rt^Ww8nB」", "Zq4%Rt^Ww8nB"),
    ("仮パスワード『hana553!』 よろしく", "hana553!"),
    ("登入密碼是Otter-sun-tea，再麻煩您確認。", "Otter-sun-tea"),
    ("【登入密碼】jiho771!，再麻煩您確認。", "jiho771!")])
def test_passwords_after_cjk_joins_and_a_php_config(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "密码（至少8位）",
    "パスワードは「お忘れの方はこちら」",
    "$CFG->dbpass = $secret;"])
def test_password_labels_without_a_password(text: str) -> None:
    assert _values(text) == []


def test_a_zoom_team_chat_incoming_webhook() -> None:
    url = "https://integrations.zoom.us/chat/webhooks/incomingwebhook/Tz4kQw8NvR2mLp6XbY0cJd?format=full"
    assert _values(f"GRADE_HOOK={url}") == ["Tz4kQw8NvR2mLp6XbY0cJd"]
    assert _values("https://integrations.zoom.us/chat/webhooks/incomingwebhook/documentation-page") == []


@pytest.mark.parametrize(("text", "value"), [
    ("老師您好，卡號: 621483 5502917364025，再麻煩您確認。", "621483 5502917364025"),
    ("신용카드 번호: 625911-0384726159032", "625911-0384726159032"),
    ("カード番号 622841 7730916258437です", "622841 7730916258437")])
def test_a_card_after_a_cjk_card_word_in_any_grouping(text: str, value: str) -> None:
    assert _values(text) == [value]
    assert _values(text.replace(value, value[:-1] + str((int(value[-1]) + 1) % 10))) == []  # Luhn fails
