-- The normalised model id a price was found under (a Bedrock, Vertex or routed id reduced), when not the id as written.

alter table model_prices add column lookup_model varchar;
