// Command user-labels runs the user-labels service: `user-labels` serves, `user-labels migrate` migrates its schema.
package main

import (
	"github.com/chainintel/chainintel/libs/service"
	userlabels "github.com/chainintel/chainintel/services/user-labels"
)

func main() {
	service.Binary[userlabels.Config]{Name: userlabels.Name, Load: userlabels.LoadConfig, Run: userlabels.Run, Migrate: userlabels.Migrate}.Main()
}
