// Command ingest runs the ingest service: `ingest` serves, `ingest migrate` migrates its schema
// and creates its topics, `ingest sim-curated` prints the simulated world's curated.json.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	"github.com/chainintel/chainintel/services/ingest"
)

func main() {
	service.Binary[ingest.Config]{Name: ingest.Name, Load: ingest.LoadConfig, Run: ingest.Run, Migrate: ingest.Migrate, Extra: ingest.Commands}.Main()
}
