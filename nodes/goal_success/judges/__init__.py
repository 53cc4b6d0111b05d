"""Goal success's judges (paper 004), declared in :mod:`nodes.goal_success.roles`.

``segmentation`` and ``turn_quality`` each have a package (the role's types, its judges and
their model files); :mod:`.appendix_d` is the LLM call both make, and :mod:`.user_cues` and
:mod:`.response_cues` are the text cues both read.
"""
