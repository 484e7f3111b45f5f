"""Building the benchmark (paper Section 3): ``sources`` (StereoSet, CrowS-Pairs) ->
``kg`` (the bias knowledge graph) -> ``triplets`` (neutral / stereotype / anti prompts)."""
