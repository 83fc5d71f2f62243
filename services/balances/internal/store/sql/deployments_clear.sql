DELETE FROM balances.deployments WHERE pricing_id = $1
