-- Forgets the groups without addresses that are not live.
DELETE FROM transfers.groups WHERE size <= 0 AND NOT live
