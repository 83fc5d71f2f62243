// Command transfers runs the transfers service: `transfers` serves, `transfers migrate` migrates its schema.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/transfers"
)

func main() {
	service.Binary[transfers.Config]{Name: transfers.Name, Load: transfers.LoadConfig, Run: transfers.Run, Migrate: transfers.Migrate,
		GCPercent: transfers.GCPercent}.Main()
}
