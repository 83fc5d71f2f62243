package app

import (
	"github.com/chainintel/chainintel/libs/render"
	"github.com/chainintel/chainintel/services/intelligence/internal/attribution"
	"github.com/chainintel/chainintel/services/intelligence/internal/store"
)

// EntityView is the API's Entity.
type EntityView struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Note string `json:"note"`
	Type string `json:"type"`
	// Service is the public shape's required, nullable boolean (as libs/render's Entity): true
	// when the operator names a service the entity belongs to, else null.
	Service       *bool               `json:"service"`
	Website       string              `json:"website,omitempty"`
	Twitter       string              `json:"twitter,omitempty"`
	LinkedIn      string              `json:"linkedin,omitempty"`
	Description   string              `json:"description,omitempty"`
	Addresses     map[string][]string `json:"addresses,omitempty"`
	PopulatedTags *[]PopulatedTag     `json:"populatedTags,omitempty"`
	// LinkShareable is set on user entities: whether anyone may read it by its id.
	LinkShareable *bool `json:"linkShareable,omitempty"`
}

// AddressLabel is the API's AddressLabel.
type AddressLabel struct {
	Name      string `json:"name"`
	Address   string `json:"address"`
	ChainType string `json:"chainType"`
}

// PopulatedTag is the API's PopulatedTag.
type PopulatedTag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            int    `json:"rank"`
	TagParams       string `json:"tagParams"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
	Chain           string `json:"chain,omitempty"`
}

// AddressInfo is the API's AddressInfo; PopulatedTags and ClusterIDs are set on enriched
// answers only.
type AddressInfo struct {
	Address          string          `json:"address"`
	Chain            string          `json:"chain"`
	ServiceEntity    *EntityView     `json:"serviceEntity,omitempty"`
	ServiceLabel     *AddressLabel   `json:"serviceLabel,omitempty"`
	PredictedEntity  *EntityView     `json:"predictedEntity,omitempty"`
	UserEntity       *EntityView     `json:"userEntity,omitempty"`
	UserLabel        *AddressLabel   `json:"userLabel,omitempty"`
	DepositServiceID string          `json:"depositServiceID,omitempty"`
	Contract         bool            `json:"contract"`
	IsUserAddress    bool            `json:"isUserAddress"`
	PopulatedTags    *[]PopulatedTag `json:"populatedTags,omitempty"`
	ClusterIDs       *[]string       `json:"clusterIds,omitempty"`
}

// EntitySummary is the API's entity summary. BalanceUSD is the balances service's USD value of
// the entity's current balances. FirstTx and LastTx are the times of the entity's first and
// last transfer, null (not absent: the public shape requires them) when it has none.
type EntitySummary struct {
	EntityID     string  `json:"entityId"`
	NumAddresses int64   `json:"numAddresses"`
	BalanceUSD   float64 `json:"balanceUsd"`
	VolumeUSD    float64 `json:"volumeUsd"`
	FirstTx      *string `json:"firstTx"`
	LastTx       *string `json:"lastTx"`
}

// Prediction is one address predicted to belong to an entity.
type Prediction struct {
	Address    string  `json:"address"`
	EntityID   string  `json:"entityID"`
	USDBalance float64 `json:"usdBalance"`
}

// TokenRef is a token summary.
type TokenRef struct {
	ID       render.NullString `json:"id"` // null for a token no pricing id names
	Name     string            `json:"name"`
	Symbol   string            `json:"symbol"`
	Decimals int               `json:"decimals"`
}

// ContractView is the API's contract answer. Deployer is null when the creation was not seen
// (a contract first seen as a token); InternalDeployer is the address that executed the
// creation: the contract that created it inside a call, the deployer itself for a contract its
// transaction created, null when the creation was not seen.
// Bytecode is "" and FunctionSighashes null while only the creating transaction is known.
type ContractView struct {
	Address      string       `json:"address"`
	Chain        string       `json:"chain"`
	Deployer     *AddressInfo `json:"deployer"`
	DeployTxHash string       `json:"deployTxHash"`
	// TransactionHash is DeployTxHash under the public API's name.
	TransactionHash   string       `json:"transactionHash"`
	BlockTimestamp    string       `json:"blockTimestamp"`
	BytecodeSize      int          `json:"bytecodeSize"`
	Bytecode          string       `json:"bytecode"`
	FunctionSighashes []string     `json:"functionSighashes"`
	IsProxy           bool         `json:"isProxy"`
	ProxyAddress      *string      `json:"proxyAddress"`
	InternalDeployer  *AddressInfo `json:"internalDeployer"`
	Token             *TokenRef    `json:"token,omitempty"`
}

// TokenIdentifier says how a token was identified.
type TokenIdentifier struct {
	PricingID render.NullString `json:"pricingID"` // null for a token no pricing id names
	Chain     string            `json:"chain,omitempty"`
	Address   string            `json:"address,omitempty"`
}

// TokenDeployment is a token's contract on one chain.
type TokenDeployment struct {
	Chain    string `json:"chain"`
	Address  string `json:"address"`
	Decimals int    `json:"decimals"`
}

// TokenInfo is the API's token answer.
type TokenInfo struct {
	Identifier  TokenIdentifier   `json:"identifier"`
	Name        string            `json:"name"`
	Symbol      string            `json:"symbol"`
	Price       *float64          `json:"price,omitempty"`
	Price24hAgo *float64          `json:"price24hAgo,omitempty"`
	Deployments []TokenDeployment `json:"deployments"`
}

// TagSummary is the API's tag summary.
type TagSummary struct {
	TagID              string `json:"tagId"`
	NumAddresses       int64  `json:"numAddresses"`
	NumEntities        int64  `json:"numEntities"`
	NumUniqueTagParams int64  `json:"numUniqueTagParams"`
}

func entityView(e *attribution.Entity) *EntityView {
	if e == nil {
		return nil
	}
	v := &EntityView{ID: e.ID, Name: e.Name, Note: e.Note, Type: e.Type, Website: e.Website, Twitter: e.Twitter, LinkedIn: e.LinkedIn}
	if e.Service != "" {
		belongs := true
		v.Service = &belongs
	}
	return v
}

func populated(ts []store.PopulatedTag) []PopulatedTag {
	out := make([]PopulatedTag, len(ts))
	for i, t := range ts {
		out[i] = populatedTag(t.Tag, t.Params)
	}
	return out
}

// tagsOnChain is the tags of an address on chain: a tag of one chain shows only on it. It is
// never nil (an address without tags shows an empty list).
func tagsOnChain(ts []store.PopulatedTag, chain string) []PopulatedTag {
	out := []PopulatedTag{}
	for _, t := range ts {
		if tagOnChain(t.Tag, chain) {
			out = append(out, populatedTag(t.Tag, t.Params))
		}
	}
	return out
}

// tagOnChain reports whether t applies on chain: a tag of every chain, or of that one.
func tagOnChain(t attribution.Tag, chain string) bool { return t.Chain == "" || t.Chain == chain }

func populatedTag(t attribution.Tag, params string) PopulatedTag {
	return PopulatedTag{ID: t.ID, Label: t.PopulatedLabel(params), Rank: t.Rank, TagParams: params,
		DisablePage: t.DisablePage, ExcludeEntities: t.ExcludeEntities, Chain: t.Chain}
}
