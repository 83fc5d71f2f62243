-- Ids appended and not applied yet (past the applier's mark, up to the newest appended): the
-- observations waiting, plus the ids of rolled-back appends not passed yet.
SELECT (SELECT id FROM balances.append_head) - (SELECT id FROM balances.apply_mark)
