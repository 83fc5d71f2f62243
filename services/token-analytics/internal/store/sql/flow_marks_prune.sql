-- Moves the rolled_until of every chain still before the flow horizon $1 to it once pruning has
-- deleted the earlier copies: no hour before it is read any more, so no close need build it.
UPDATE market.flow_marks SET rolled_until = $1 WHERE rolled_until < $1
