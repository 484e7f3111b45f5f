"""Every registered secret is redacted whatever its length, and URL userinfo is
removed from every printed URL (the embedder's error printed ``http://svc:Pw-...@host``)."""

from __future__ import annotations

import pytest

from implicit_bench._util.redact import MASK, redact, register_secret_env, strip_userinfo


@pytest.mark.parametrize("secret", ["k", "abcd", "Ab3$x"])
def test_a_registered_short_secret_is_redacted(monkeypatch, secret):
    monkeypatch.setenv("IB27_SHORT", secret)
    register_secret_env("IB27_SHORT")
    assert secret not in redact(f"HTTP 401: key {secret} rejected")


def test_an_unregistered_short_value_of_an_innocent_name_is_kept(monkeypatch):
    monkeypatch.setenv("IB27_TOKEN_COUNT", "42")  # a guess by name needs 6+ characters
    assert redact("42 tokens") == "42 tokens"


@pytest.mark.parametrize(
    "url",
    [
        "http://svc:Pw-secret-1@host:8000/v1",
        "https://user@example.org/x",
        "HTTP://a:b@h",
    ],
)
def test_url_userinfo_is_removed(url):
    out = redact(f"{url}/embeddings failed: ConnectError")
    assert "@" in out and MASK in out
    userinfo = url.split("://", 1)[1].split("@", 1)[0]
    assert userinfo not in out


def test_plain_urls_and_emails_are_untouched():
    assert (
        strip_userinfo("http://host:8000/v1 and ann@example.org")
        == "http://host:8000/v1 and ann@example.org"
    )


def test_embedder_error_printed_by_a_command_has_no_userinfo(monkeypatch):
    import socket

    from click.testing import CliRunner

    from implicit_bench._util.friendly_errors import FriendlyCommand
    from implicit_bench.backends.embedders import EMBEDDERS, EmbedderParams

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://svc:Pw-very-secret@127.0.0.1:{port}/v1"

    import click

    @click.command(cls=FriendlyCommand)
    def embed() -> None:
        EMBEDDERS.create(
            "openai", EmbedderParams(backend="openai", model="m", base_url=url, api_key_env=None)
        ).embed(["x"])

    monkeypatch.delenv("IMPLICIT_BENCH_DEBUG", raising=False)
    result = CliRunner().invoke(embed, [])
    assert (
        result.exit_code == 1
        and "Pw-very-secret" not in result.output
        and "svc:" not in result.output
    )


def test_llm_description_for_metrics_has_no_userinfo():
    """A ``user:password@`` in ``base_url`` is refused when params are read (one line, no
    password); a client built past that check still describes itself without it."""
    from implicit_bench.backends.llm import build_llm
    from implicit_bench.backends.llm.openai import OpenAIClient, OpenAIParams
    from implicit_bench.errors import ConfigError

    block = {"backend": "openai", "model": "m", "base_url": "http://u:pw-123@h/v1"}
    with pytest.raises(ConfigError, match="user name or password") as info:
        build_llm({**block, "api_key_env": None, "cache": None})
    assert "pw-123" not in str(info.value)
    fields = OpenAIParams(model="m", api_key_env=None).model_dump()
    client = OpenAIClient(OpenAIParams.model_construct(**{**fields, **block}))
    assert client.describe()["base_url"] == f"http://{MASK}@h/v1"
