from __future__ import annotations

import pytest

from implicit_bench.errors import ConfigError
from implicit_bench.params import StrictModel
from implicit_bench.runtime.registry import Registry


class EchoParams(StrictModel):
    backend: str
    model: str
    temperature: float = 0.0


class Echo:
    Params = EchoParams

    def __init__(self, params: EchoParams):
        self.params = params


def test_lazy_entries_resolve_once_and_validate_blocks():
    registry: Registry[Echo] = Registry("echo")
    registry.register("echo", "test_registry:Echo")
    cls, params = registry.validate({"backend": "echo", "model": "m"}, "judge.judges.a")
    # the lazy "module:attr" entry is imported on first use and then kept
    assert cls.__name__ == "Echo" and params.model == "m" and registry.resolve("echo") is cls
    with pytest.raises(ConfigError, match=r"judge.judges.a: needs a 'backend' key \(one of echo\)"):
        registry.validate({"model": "m"}, "judge.judges.a")
    with pytest.raises(
        ConfigError, match=r"invalid echo params: judge.judges.a.colour: Extra inputs"
    ):
        registry.validate({"backend": "echo", "model": "m", "colour": "red"}, "judge.judges.a")
    with pytest.raises(ConfigError, match="unknown echo backend 'nope'; known: echo"):
        registry.validate({"backend": "nope"}, "x")
    with pytest.raises(ConfigError, match="already registered"):
        registry.register("echo", Echo)


def test_import_target_resolves_module_attr_strings() -> None:
    import json

    from implicit_bench.runtime.registry import import_target

    assert import_target("json:dumps") is json.dumps
    with pytest.raises(AttributeError):
        import_target("json:no_such_name")
