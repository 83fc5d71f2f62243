-- Marks a change of live-group membership: writers drop their cached memberships.
UPDATE transfers.group_epoch SET epoch = epoch + 1
