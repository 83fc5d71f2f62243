// Command token-analytics runs the token-analytics service: `token-analytics` serves, `token-analytics migrate` migrates its schema.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	tokenanalytics "github.com/chainintel/chainintel/services/token-analytics"
)

func main() {
	service.Binary[tokenanalytics.Config]{Name: tokenanalytics.Name, Load: tokenanalytics.LoadConfig, Run: tokenanalytics.Run, Migrate: tokenanalytics.Migrate}.Main()
}
