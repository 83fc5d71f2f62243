// Command token-analytics runs the token-analytics service: `token-analytics` serves,
// `token-analytics migrate` migrates its schema, `token-analytics import-tokens <list.json>...`
// and `token-analytics import-prices <pricingId>=<file.csv>...` import a token list and price
// histories.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	tokenanalytics "github.com/chainintel/chainintel/services/token-analytics"
)

func main() {
	service.Binary[tokenanalytics.Config]{Name: tokenanalytics.Name, Load: tokenanalytics.LoadConfig, Run: tokenanalytics.Run,
		Migrate: tokenanalytics.Migrate, Extra: tokenanalytics.Commands}.Main()
}
