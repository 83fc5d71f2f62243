SELECT at FROM market.republished
