-- Empties sub_pairs and sub_memb.
DELETE FROM sub_pairs; DELETE FROM sub_memb
