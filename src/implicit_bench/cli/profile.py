"""``implicit-bench profile NAME``: switch params.yaml to a profile (docs/profiles.md)."""

from __future__ import annotations

from pathlib import Path

import click
import yaml

from implicit_bench._util.files import atomic_write_text
from implicit_bench.params.profiles import (
    DEFAULT_FILE,
    compose,
    default_snapshot_text,
    write_profile,
)


@click.command("profile")
@click.argument("name", required=False)
@click.option("--params", "params_path", default="params.yaml", show_default=True)
@click.option("--out", default=None, help="Write here instead of overwriting --params.")
@click.option(
    "--dry-run",
    is_flag=True,
    help="Print the composed parameters only (URLs without their user:password@).",
)
@click.option(
    "--save-default",
    is_flag=True,
    help="Write profiles/default.yaml from params.yaml (which must hold the default profile).",
)
def profile_command(
    name: str | None, params_path: str, out: str | None, dry_run: bool, save_default: bool
) -> None:
    """Switch params.yaml to profile NAME: profiles/NAME.yaml applied to the default profile
    (`implicit-bench profile paper`; `implicit-bench profile default` goes back).

    Any order of switches gives the same params as one switch from the default: the keys a
    profile sets are first set back to the default (profiles/default.yaml), a catalogue entry or
    backend block is replaced whole. The file is rewritten round-trip (ruamel.yaml): comments
    and key order stay; a value the profile replaces takes the profile's comment.
    """
    if save_default:
        target = Path(out or Path("profiles") / DEFAULT_FILE)
        atomic_write_text(target, default_snapshot_text(params_path))
        click.echo(f"wrote {target}")
        return
    if name is None:
        raise click.UsageError("name a profile (default, or one of profiles/*.yaml)")
    composed = compose(name, params_path)
    if dry_run:
        from implicit_bench._util.redact import url

        shown = yaml.safe_dump(composed, sort_keys=False, allow_unicode=True)
        click.echo(url(shown))  # a base_url's user:password@ is never printed
        return
    from implicit_bench._util.redact import userinfo_keys
    from implicit_bench.errors import ConfigError

    if found := userinfo_keys(composed):  # params go to git and dvc.lock: no credential there
        raise ConfigError(
            f"profile {name}: {', '.join(found)} holds a URL with a user name or password; "
            "put the credential in an environment variable named by api_key_env (nothing written)"
        )
    target = out or params_path
    write_profile(name, params_path, target)
    click.echo(f"profile {name}: wrote {target}; run `dvc repro` (or `dvc exp run`) next")
