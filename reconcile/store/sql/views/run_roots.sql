-- run_roots: each run's agent tree — the topmost ancestor in the store (the run itself when it has none).
-- Joins, not a recursive query, so it reads the same in Spark; a tree deeper than six levels of sub-agents
-- stops at the sixth ancestor.
select r.run_id, coalesce(a6.run_id, a5.run_id, a4.run_id, a3.run_id, a2.run_id, a1.run_id, r.run_id) as root_run_id
from runs r
left join runs a1 on a1.run_id = r.parent_run_id
left join runs a2 on a2.run_id = a1.parent_run_id
left join runs a3 on a3.run_id = a2.parent_run_id
left join runs a4 on a4.run_id = a3.parent_run_id
left join runs a5 on a5.run_id = a4.parent_run_id
left join runs a6 on a6.run_id = a5.parent_run_id
