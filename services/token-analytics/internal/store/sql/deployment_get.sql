SELECT pricing_id FROM market.deployments WHERE chain = $1 AND address = $2
