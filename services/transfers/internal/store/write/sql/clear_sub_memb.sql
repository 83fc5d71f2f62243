-- Empties sub_memb.
DELETE FROM sub_memb
