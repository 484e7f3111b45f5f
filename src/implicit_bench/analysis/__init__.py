"""Everything IMPLICIT-Bench computes from judgements: selection, benchmark metrics, statistics.

Modules (one purpose each):

- ``config``: the ``select`` / ``evaluate`` param sections.
- ``load``: reading and validating UNITS, JUDGEMENTS and image-index (refusal) tables.
- ``bootstrap``: vectorised unit-level (cluster) bootstrap with recorded size and seed.
- ``selection``: dx per (unit, seed) and the union / intersection selection rule (Tables 3, 9, 10).
- ``blind``: default rate, success rates, gap, default-strength groups, recoverability
  (Tables 5, 21, 22, 24-26).
- ``agreement/``: agreement, one home: two blind judges (``blind_judges``: Table 20, Spearman
  of default rates), any two judgement files (``judgement_files``: ``implicit-bench
  agreement``), raters (``raters``); the statistics are ``_util.agreement``.
- ``lean``: lean statistics per scorer, Hedges' g, Spearman-Brown (Tables 12-14, Figure 6).
- ``generators``: the per-generator table (Table 4) and refusals per bias type.
- ``report``: tables (CSV + Markdown) and DVC plot data.
- ``stage``: the two stages (``implicit-bench analyze`` and its extensions are the
  ``analyze`` package, above this one).

Definitions and every choice: docs/analysis.md.
"""
