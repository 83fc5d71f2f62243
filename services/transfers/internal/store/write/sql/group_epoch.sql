-- The live groups' membership epoch: a change of it voids the writer's cached memberships.
SELECT epoch FROM transfers.group_epoch
