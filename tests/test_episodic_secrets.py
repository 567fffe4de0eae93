"""Secret redaction: every kind is caught, prose is left alone, redaction is idempotent."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vault_kg.core.secrets import find_secrets, redact

SECRETS = {
    "aws-access-key": "AKIAIOSFODNN7EXAMPLE",
    "gcp-api-key": "AIzaSyD4x9Qm3kL0pW7vR2tY8uI1oP5aS6dF7gH",
    "github-token": "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "gitlab-token": "glpat-xK3mP9qR2sT5vW8yZ1bC",
    "slack-token": "xoxb-2048-1024-aBcDeFgHiJkLmNoPqRsT",
    "openai-key": "sk-proj-4fGh7Jk9Lm2Np5Qr8St1Uv3Wx6Yz0Ab",
    "anthropic-key": "sk-ant-api03-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Ji0Hg",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_token_kind_is_found_and_redacted(kind: str) -> None:
    text = f"ran the deploy with {SECRETS[kind]} and it worked"
    assert find_secrets(text) == [kind]
    out = redact(text)
    assert SECRETS[kind] not in out and f"[REDACTED:{kind}]" in out
    assert out.startswith("ran the deploy with ") and out.endswith(" and it worked")


def test_structured_secrets_keep_their_context() -> None:
    text = (
        "DATABASE_URL=postgres://app:hunter2@db.internal:5432/shop\n"
        "export STRIPE_WEBHOOK_SECRET=whsec_9f8e7d6c5b4a\n"
        "db_password: correct-horse\n"
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"
        "Authorization: Bearer abcdef0123456789abcdef\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n"
    )
    out = redact(text)
    for secret in ("hunter2", "whsec_9f8e7d6c5b4a", "correct-horse", "wJalrXUtnFEMI", "abcdef0123456789", "b3BlbnNz"):
        assert secret not in out
    assert "postgres://app:[REDACTED:url-password]@db.internal:5432/shop" in out
    assert "export STRIPE_WEBHOOK_SECRET=[REDACTED:env-secret]" in out
    assert find_secrets(text) == [
        "url-password",
        "env-secret",
        "env-secret",
        "aws-secret-key",
        "bearer-token",
        "private-key",
    ]


def test_prose_and_placeholders_are_left_alone() -> None:
    text = "Auth: moved the token refresh to the middleware.\nPassword reset emails now expire after 1 hour.\nAPI_KEY=${API_KEY}\nSECRET_KEY=<set me>\nSee https://example.com/docs and sk-short.\n"
    assert find_secrets(text) == []
    assert redact(text) == text


@settings(max_examples=60, deadline=None)
@given(
    before=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40),
    after=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40),
    kind=st.sampled_from(sorted(SECRETS)),
)
def test_a_secret_anywhere_never_survives_and_redaction_is_idempotent(before: str, after: str, kind: str) -> None:
    text = f"{before} {SECRETS[kind]} {after}"
    out = redact(text)
    assert SECRETS[kind] not in out
    assert find_secrets(out) == []
    assert redact(out) == out
