package store

import "github.com/chainintel/chainintel/services/transfers/internal/store/attribution"

// Entity, Attribution and AddressKey are the attribution read model's (package attribution).
type (
	Entity      = attribution.Entity
	Attribution = attribution.Attribution
	AddressKey  = attribution.AddressKey
)
