// Command stream-fanout runs the stream-fanout service: `stream-fanout` serves, `stream-fanout migrate` migrates its schema.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	streamfanout "github.com/chainintel/chainintel/services/stream-fanout"
)

func main() {
	service.Binary[streamfanout.Config]{Name: streamfanout.Name, Load: streamfanout.LoadConfig, Run: streamfanout.Run, Migrate: streamfanout.Migrate}.Main()
}
