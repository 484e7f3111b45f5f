"""``implicit-bench image get``: one stored image out of an ImageStore as a PNG file."""

from __future__ import annotations

import click

from implicit_bench.render.images.store import ImageKey, ImageStore


@click.group("image")
def image_command() -> None:
    """Inspect packed image stores (data/images/<config>/)."""


@image_command.command("get")
@click.option("--store", "store_dir", required=True, help="Store directory, e.g. data/images/tiny.")
@click.option("--unit", "unit_id", required=True)
@click.option("--variant", required=True, help="neutral | stereotype | anti_stereotype | ...")
@click.option("--seed", required=True, type=int)
@click.option("--config", default=None, help="Config name (default: the store directory's name).")
@click.option("--out", required=True, help="PNG file to write.")
def get_command(
    store_dir: str, unit_id: str, variant: str, seed: int, config: str | None, out: str
) -> None:
    """Write the image of (unit, variant, seed) to --out, checked against its sha256."""
    store = ImageStore(store_dir)
    if len(store) == 0:
        raise click.ClickException(f"{store_dir}: no image store here (no journal.jsonl)")
    if config is None:
        configs = {r.key.config for r in store.records()}
        config = configs.pop() if len(configs) == 1 else store.root.name
    key = ImageKey(config, unit_id, variant, seed)
    record = store.get(key)
    if record is None:
        raise click.ClickException(f"{store_dir}: no item {key.item_id}")
    if record.status != "ok":
        raise click.ClickException(
            f"{key.item_id}: status {record.status} ({record.reason or 'no reason'})"
        )
    path = store.export_png(key, out)
    click.echo(
        f"{key.item_id} -> {path} ({record.width}x{record.height}, sha256 {record.sha256[:12]})"
    )
