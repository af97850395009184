"""What the transcript formats know of providers' billing, said once for all of them.

Models whose providers bill no cache writes, matched on the model name without any routing prefix
(``openai/``, ``projects/…/models/``): OpenAI caches prompts automatically and bills only the reads;
Gemini bills reads of its implicit cache, and an explicit cache is made by a call of its own, outside
a transcript. For them a cache-write bucket a record leaves out is 0 (a format's ``zero_buckets``);
for any other model it is unknown. The staging macro ``bills_no_cache_writes(model)`` applies it.
"""

from __future__ import annotations

from reconcile.sql_text import string_literal

NO_CACHE_WRITES = r"^(ft:)?(gpt-|chatgpt-|o[1-9]([-.]|$)|codex-|gemini-)"
NO_CACHE_WRITES_WHY = ("OpenAI (gpt-*, o-series) and Gemini models only: their providers bill no cache writes "
                       "(OpenAI caches prompts automatically; Gemini's explicit caches are made by a call of their own)")

NO_CACHE_WRITES_MACRO = ("create or replace temp macro bills_no_cache_writes(model) as "
                         "regexp_matches(lower(regexp_replace(coalesce(model, ''), '^.*/', '')), "
                         f"{string_literal(NO_CACHE_WRITES)})")
