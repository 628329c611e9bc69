"""Secrets as media, gaming and creator platforms hold them (the thirty-eighth corpus's causes): stream keys in RTMP
ingest URLs and by their providers' formats, a stream key after its label and a space, Discord bot tokens with no
label, Google's "backup verification codes", Agora's App Certificate, obs-websocket URLs and SteamCMD's login.
Values written for these tests."""

from __future__ import annotations

import pytest

from tracegym.redact.detect import Detector

DETECTOR = Detector()


def _values(text: str) -> list[str]:
    return [f.value for f in DETECTOR.find(text)]


def _covered(text: str, value: str) -> bool:
    """Whether one finding holds `value` whole (a longer token rule may take the port and path before it too)."""
    return len(_values(text)) == 1 and value in _values(text)[0]


@pytest.mark.parametrize(("text", "value"), [
    ("rtmp://live-fra.twitch.tv/app/live_502113874_Qm3XbT8kLpV0wZr5JcN2hYd7GfE1sA",
     "live_502113874_Qm3XbT8kLpV0wZr5JcN2hYd7GfE1sA"),
    ("server: rtmps://b.rtmp.youtube.com/live2/k7wq-2m9d-zx4r-p0ta-81jh", "k7wq-2m9d-zx4r-p0ta-81jh"),
    ('ffmpeg -i in.mp4 -f flv "rtmps://a1b2c3.global-contribute.live-video.net:443/app/'
     'sk_eu-west-1_Rw4TqZ8yNc2LmV7pXk0JbH3sDf6GaE9uYo1i"', "sk_eu-west-1_Rw4TqZ8yNc2LmV7pXk0JbH3sDf6GaE9uYo1i"),
    ("ingest rtmp://10.0.4.17:1935/live/studio/9fQ2wLz7TbX4kR8p", "9fQ2wLz7TbX4kR8p")])
def test_a_stream_key_in_an_rtmp_ingest_url(text: str, value: str) -> None:
    assert _covered(text, value)


@pytest.mark.parametrize("text", [
    "rtmp://localhost:1935/live/test",
    "Connecting to RTMP URL rtmps://ingest.example.net/app...",
    "rtmp://a.rtmp.youtube.com/live2",
    "rtmp://media.example.org/live/lobby-camera-north-1080p",
    "rtmp://media.example.org/vod/archive/recording_20250311.flv"])
def test_no_stream_key_in_an_rtmp_url_without_one(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize("value", [
    "live_77310429_aZ4kR9mPq2Lw7XnT0bY5cV8dJ3hF6s",
    "sk_ap-northeast-2_P0oI9uY8tR7eW6qA5sD4fG3hJ2kL1zXcVbNm"])
def test_a_stream_key_by_its_format_with_no_url(value: str) -> None:
    assert _values(f"paste this into OBS: {value} then start") == [value]


@pytest.mark.parametrize("text", ["live_2025_release_notes_for_the_winter_season", "sk_us-east-1_short"])
def test_no_stream_key_in_names_of_that_shape(text: str) -> None:
    assert _values(f"see {text} for details") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Mux live stream ready: stream_key 3f9c2e1a-7b4d-4e8f-a6c5-0d2b9e7f1a34",
     "3f9c2e1a-7b4d-4e8f-a6c5-0d2b9e7f1a34"),
    ("Stream key: Gk2P9xQz7LmT4wRb", "Gk2P9xQz7LmT4wRb")])
def test_a_stream_key_after_its_label(text: str, value: str) -> None:
    assert _values(text) == [value]


@pytest.mark.parametrize("text", [
    "the stream key settings were updated yesterday", "upstream key rotation is scheduled for Friday",
    "stream_key d3adb33f"])
def test_no_stream_key_after_the_label_without_one(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ('client.run("MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.Gx7pQa.k3Jd8sLq0ZmW2vYc5RtN1bXe4HfUo9AiPgTy6K")',
     "MTIzNDU2Nzg5MDEyMzQ1Njc4OQ.Gx7pQa.k3Jd8sLq0ZmW2vYc5RtN1bXe4HfUo9AiPgTy6K"),
    ("the old bot still used NjA5ODc2NTQzMjEwOTg3NjU0.X1y2Z3.q8Wm3Rk0Tz5Lp2Xv7Nc4Jb9Hd1Fa6",
     "NjA5ODc2NTQzMjEwOTg3NjU0.X1y2Z3.q8Wm3Rk0Tz5Lp2Xv7Nc4Jb9Hd1Fa6")])
def test_a_discord_bot_token_with_no_label(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_discord_token_without_a_user_id_or_a_random_last_part() -> None:
    assert _values("build NjExMjIzMzQ0NTU2Njc3ODg.aBcDeF.zzzzzzzzzzzzzzzzzzzzzzzzzzzzzz done") == []
    assert _values("MGFiY2RlZmdoaWprbG1ub3BxcnN0.Qw3rTy.Zx8Cv7Bn6Mm5Ll4Kk3Jj2Hh1Gg0Ff") == []


@pytest.mark.parametrize(("text", "value"), [
    ("Backup verification code 5830 1947 (kept by the channel owner)", "5830 1947"),
    ("backup verification codes: 2718 2818, 3141 5926", "2718 2818, 3141 5926")])
def test_googles_backup_verification_codes(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_backup_verification_code_in_prose() -> None:
    assert _values("the backup verification code was sent by SMS and expired") == []


@pytest.mark.parametrize("text", [
    "App Certificate: 5b0e7d1c9a2f48e6b3d0c7a1e4f9b2d8", "AGORA_APP_CERTIFICATE=5b0e7d1c9a2f48e6b3d0c7a1e4f9b2d8",
    '{"appCertificate": "5b0e7d1c9a2f48e6b3d0c7a1e4f9b2d8"}'])
def test_agoras_app_certificate(text: str) -> None:
    assert _values(text) == ["5b0e7d1c9a2f48e6b3d0c7a1e4f9b2d8"]


def test_no_app_certificate_in_prose() -> None:
    assert _values("the app certificate is expiring soon") == []
    assert _values("App certificate: Apple Distribution: Example Studio Ltd") == []


@pytest.mark.parametrize(("text", "value"), [
    ("obsws://127.0.0.1:4455/Vt8rKw2Zp.Nx_q4", "Vt8rKw2Zp.Nx_q4"),
    ("connect obswss://obs.studio.example:4455/m4Ple-Tr33s! now", "m4Ple-Tr33s!")])
def test_the_password_of_an_obs_websocket_url(text: str, value: str) -> None:
    assert _covered(text, value)


@pytest.mark.parametrize("text", [
    "obsws://localhost:4455", "obsws://localhost:4455/${OBS_PASSWORD}", "obsws://localhost:4455/<password>"])
def test_no_password_in_an_obs_websocket_url_without_one(text: str) -> None:
    assert _values(text) == []


@pytest.mark.parametrize(("text", "value"), [
    ("$ steamcmd +login deploybot Wq7!zTr0pe +app_update 740 +quit", "Wq7!zTr0pe"),
    ("./steamcmd.sh +force_install_dir /srv/cs +login gamesvc Hunter22X +quit", "Hunter22X")])
def test_the_password_of_steamcmds_login(text: str, value: str) -> None:
    assert _values(text) == [value]


def test_no_password_in_an_anonymous_steamcmd_login() -> None:
    assert _values("steamcmd +login anonymous +app_update 740 validate +quit") == []
