"""The one YAML reader: safe tags only, duplicate keys an error (as DVC treats them), and
bounds on the size and the depth of the document once aliases are expanded (an anchor bomb,
or nesting deep enough to exhaust Python's recursion, is refused before anything walks it).
``docs/errors.md`` lists the bounds. :func:`load_yaml_file` reads a file: any problem (not
UTF-8, not YAML, over a bound) is one ``ConfigError`` naming it.

Plain scalars resolve as DVC's reader (ruamel.yaml, YAML 1.2) resolves them where YAML 1.1
differs in a way that matters here: ``1:1`` is the string "1:1", not the base-60 integer 61.
DVC's ``-S`` writer (and so ``implicit-bench profile``) drops the quotes of ``"1:1"``, which
YAML 1.2 does not need."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from implicit_bench.errors import ConfigError

MAX_NODES = 1_000_000  # nodes of a document with every alias expanded (params.yaml: ~3,000)
MAX_DEPTH = 100  # collections inside each other, aliases expanded (params.yaml: 6; 995 overflowed)
_MERGE = "tag:yaml.org,2002:merge"
_Base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class YamlBoundError(yaml.YAMLError):
    """A document too large or too deep once its aliases are expanded, or an alias that
    contains itself."""


class StrictLoader(_Base):  # type: ignore[misc, valid-type]
    """``yaml.SafeLoader`` (the C one when built) refusing duplicate keys and anchor bombs."""

    def construct_document(self, node: yaml.Node) -> Any:
        _check_size(node)
        return super().construct_document(node)

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == _MERGE:
                    continue  # "<<" merges are allowed; keys written after them may override
                key = self.construct_object(key_node, deep=True)
                try:
                    first = seen.get(key)
                except TypeError:
                    continue  # an unhashable key: the base constructor reports it
                if first is not None:
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"found duplicate key {key!r} (first given on line {first + 1})",
                        key_node.start_mark,
                    )
                seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep=deep)


_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_YAML12_INT = re.compile(  # YAML 1.1's forms without the base-60 one
    r"""^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$""",
    re.X,
)
_YAML12_FLOAT = re.compile(
    r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9_]+(?:[eE][-+][0-9]+)?
    |[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""",
    re.X,
)
StrictLoader.yaml_implicit_resolvers = {
    first: [
        (tag, _YAML12_INT if tag == _INT else _YAML12_FLOAT if tag == _FLOAT else regexp)
        for tag, regexp in resolvers
    ]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}


def _check_size(root: yaml.Node) -> None:
    """Count the nodes and the depth with aliases expanded (memoised: linear in the written
    document; the recursion stops at :data:`MAX_DEPTH`)."""
    sizes: dict[int, tuple[int, int]] = {}
    active: set[int] = set()

    def size(node: yaml.Node, level: int) -> tuple[int, int]:
        """(nodes, collection depth) of ``node``, inside ``level`` collections."""
        key = id(node)
        if key in sizes:
            total, depth = sizes[key]
            if level + depth > MAX_DEPTH:
                raise _too_deep(node)
            return total, depth
        if key in active:
            raise YamlBoundError(f"an alias contains itself (line {node.start_mark.line + 1})")
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        own = int(isinstance(node, yaml.CollectionNode))
        if level + own > MAX_DEPTH:
            raise _too_deep(node)
        active.add(key)
        total, depth = 1, own
        for child in children:
            n, d = size(child, level + own)
            total += n
            depth = max(depth, d + own)
            if total > MAX_NODES:
                break
        active.discard(key)
        if total > MAX_NODES:
            raise YamlBoundError(
                f"more than {MAX_NODES} values once aliases are expanded (an anchor bomb?), "
                f"near line {node.start_mark.line + 1}"
            )
        sizes[key] = (total, depth)
        return total, depth

    size(root, 0)


def _too_deep(node: yaml.Node) -> YamlBoundError:
    return YamlBoundError(
        f"nested more than {MAX_DEPTH} deep once aliases are expanded, "
        f"near line {node.start_mark.line + 1}"
    )


def load_yaml(text: str | bytes | Any) -> Any:
    """Parse one YAML document (a string or a file object) with :class:`StrictLoader`."""
    try:
        return yaml.load(text, Loader=StrictLoader)  # noqa: S506 - a safe loader
    except RecursionError:  # the pure-Python composer recurses before any bound is checked
        raise YamlBoundError(f"nested too deep (more than {MAX_DEPTH} levels)") from None


def load_yaml_file(path: str | Path, text: str | bytes | None = None, where: str = "") -> Any:
    """The YAML document of file ``path`` (``text``: its content, read elsewhere such as a git
    revision named by ``where``). Not UTF-8, not YAML, a duplicate key or over a bound: a
    one-line ``ConfigError`` naming the file."""
    name = f"{path}{where}"
    try:
        raw = Path(path).read_bytes() if text is None else text
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8")
        return load_yaml(raw)
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{name}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x} on line {line}); "
            "save it as UTF-8"
        ) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{name}: not valid YAML: {' '.join(str(exc).split())}") from None
