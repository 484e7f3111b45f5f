"""Agreement, one home: ``blind_judges`` (two blind judges on the same images, the
evaluate stage's ``agreement`` metric, Section 4.3 and Table 20), ``judgement_files`` (any two
judges or deployments in judgement files, App. C.2, the ``implicit-bench agreement`` command of
``cli/agreement.py``), ``raters`` (people on the calibration images). The statistics (Cohen's
kappa, rater pairs) are ``implicit_bench._util.agreement``, below ``human_eval``, which uses
them too."""
