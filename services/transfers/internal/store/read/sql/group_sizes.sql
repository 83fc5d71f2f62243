-- The groups of $1 holding addresses: size and liveness, with the groups' version (epoch and
-- removals) as of the same snapshot.
SELECT g.grp, g.size, g.live, v.epoch, v.removals FROM transfers.groups g, transfers.group_epoch v
WHERE g.grp = ANY($1::text[]) AND g.size > 0
