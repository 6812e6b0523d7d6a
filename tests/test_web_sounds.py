"""The web table's sounds: the committed files are what scripts/make_sounds.py makes, small, and
served as audio with the page's security headers; a pip install carries them (package data)."""

from __future__ import annotations

import importlib.util
import tomllib
import wave
from pathlib import Path

from fastapi.testclient import TestClient

from stammtisch.server.app import create_app

ROOT = Path(__file__).resolve().parent.parent
SOUNDS = ROOT / "stammtisch" / "server" / "static" / "sounds"
NAMES = ("card.wav", "trick.wav", "turn.wav")


def make_sounds():
    spec = importlib.util.spec_from_file_location("make_sounds", ROOT / "scripts" / "make_sounds.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_sounds_are_what_the_script_makes():
    script = make_sounds()
    made = script.make()
    assert sorted(made) == sorted(NAMES)
    for name, data in made.items():
        assert script.same_sound((SOUNDS / name).read_bytes(), data), \
            f"{name} is out of date: run python scripts/make_sounds.py"
    # and the comparison sees a changed sample
    changed = bytearray(made["turn.wav"])
    changed[1000] ^= 0x40
    assert not script.same_sound(bytes(changed), made["turn.wav"])


def test_each_sound_is_short_small_and_mono():
    for name in NAMES:
        with wave.open(str(SOUNDS / name)) as w:
            assert (w.getnchannels(), w.getsampwidth()) == (1, 2)
            assert 0.05 < w.getnframes() / w.getframerate() < 0.5
        assert (SOUNDS / name).stat().st_size < 12_000


def test_the_sounds_are_served_as_audio_with_the_security_headers(tmp_path):
    with TestClient(create_app(f"sqlite:///{tmp_path / 'st.sqlite'}")) as client:
        for name in NAMES:
            r = client.get(f"/static/sounds/{name}")
            assert r.status_code == 200 and r.content == (SOUNDS / name).read_bytes()
            assert r.headers["content-type"] == "audio/wav"
            # media from this server: default-src 'self' covers it, and no media-src narrows it
            policy = r.headers["content-security-policy"]
            assert "default-src 'self'" in policy
            assert "media-src" not in policy or "media-src 'self'" in policy


def test_a_pip_install_carries_the_sounds():
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["stammtisch"]
    package = ROOT / "stammtisch"
    carried = {f for p in patterns for f in package.glob(p)}  # setuptools reads them as globs
    for name in NAMES:
        assert SOUNDS / name in carried, name
