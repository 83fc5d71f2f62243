// Command ingest runs the ingest service: `ingest` serves, `ingest migrate` migrates its schema.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/ingest"
)

func main() {
	service.Binary[ingest.Config]{Name: ingest.Name, Load: ingest.LoadConfig, Run: ingest.Run, Migrate: ingest.Migrate}.Main()
}
