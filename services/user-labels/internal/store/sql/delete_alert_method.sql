-- Deletes method $1 (locked and checked unused by the caller's transaction).
DELETE FROM userdata.alert_methods WHERE id = $1
