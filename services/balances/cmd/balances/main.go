// Command balances runs the balances service: `balances` serves, `balances migrate` migrates its schema.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/balances"
)

func main() {
	service.Binary[balances.Config]{Name: balances.Name, Load: balances.LoadConfig, Run: balances.Run, Migrate: balances.Migrate}.Main()
}
