-- A catalogue entry whose format does not say whether the tool changes the world (Inspect AI, Langfuse, OTel
-- tool definitions) keeps side_effect NULL, not false.

alter table run_tools alter column side_effect drop not null;
