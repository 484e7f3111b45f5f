"""Method ``none``: the unmodified configuration (Table 27, exp 0), the neutral prompt as is."""

from __future__ import annotations

from implicit_bench.debias.methods import DebiasMethod


class Unmodified(DebiasMethod):
    name = "none"

    def label(self, params: object) -> str:
        return "Unmodified"


METHOD = Unmodified
