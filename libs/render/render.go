// Package render holds the API's address and transfer objects (Entity, AddressLabel,
// AddressInfo, Transfer in docs API.md) and the rules that fill them. Every service that answers
// with them (transfers, balances, token-analytics, stream-fanout) renders through this package,
// so one address or transfer reads the same, byte for byte, wherever it is asked for.
package render

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/chainintel/chainintel/libs/chains"
)

// EntityTypes are the entity types API.md documents (Entity.type). A filter naming type:<t> of
// one of them (GET /transfers, stream filters) is always well formed, matching nothing while no
// address has it; both read this list.
var EntityTypes = []string{"cex", "dex", "fund", "individual", "user"}

// Entity is the API's Entity object.
type Entity struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Note string `json:"note"`
	Type string `json:"type"`
	// Service is the public shape's required, nullable boolean: true when the operator names a
	// service the entity belongs to, null otherwise. The service's id stays internal: the field
	// is no string in the contract clients parse.
	Service  Service `json:"service"`
	Website  string  `json:"website,omitempty"`
	Twitter  string  `json:"twitter,omitempty"`
	LinkedIn string  `json:"linkedin,omitempty"`
	// Description and PopulatedTags are set on the entities of /balances/entity only.
	Description   *string         `json:"description,omitempty"`
	PopulatedTags *[]PopulatedTag `json:"populatedTags,omitempty"`
}

// PopulatedTag is the API's PopulatedTag.
type PopulatedTag struct {
	ID              string `json:"id"`
	Label           string `json:"label"`
	Rank            int32  `json:"rank"`
	TagParams       string `json:"tagParams"`
	DisablePage     bool   `json:"disablePage"`
	ExcludeEntities bool   `json:"excludeEntities"`
	Chain           string `json:"chain,omitempty"`
}

// AddressLabel is the API's AddressLabel object.
type AddressLabel struct {
	Name      string `json:"name"`
	Address   string `json:"address"`
	ChainType string `json:"chainType"`
}

// AddressInfo is the API's AddressInfo object.
type AddressInfo struct {
	Address          string        `json:"address"`
	Chain            string        `json:"chain"`
	ServiceEntity    *Entity       `json:"serviceEntity,omitempty"`
	ServiceLabel     *AddressLabel `json:"serviceLabel,omitempty"`
	PredictedEntity  *Entity       `json:"predictedEntity,omitempty"`
	UserEntity       *Entity       `json:"userEntity,omitempty"`
	UserLabel        *AddressLabel `json:"userLabel,omitempty"`
	DepositServiceID string        `json:"depositServiceID,omitempty"`
	Contract         bool          `json:"contract"`
	IsUserAddress    bool          `json:"isUserAddress"`
}

// Transfer is the API's Transfer object.
type Transfer struct {
	ID              string      `json:"id"`
	TransactionHash string      `json:"transactionHash"`
	BlockHash       string      `json:"blockHash"`
	BlockNumber     int64       `json:"blockNumber"`
	BlockTimestamp  string      `json:"blockTimestamp"`
	Chain           string      `json:"chain"`
	FromAddress     AddressInfo `json:"fromAddress"`
	ToAddress       AddressInfo `json:"toAddress"`
	FromIsContract  bool        `json:"fromIsContract"`
	ToIsContract    bool        `json:"toIsContract"`
	TokenAddress    *string     `json:"tokenAddress,omitempty"`
	TokenID         NullString  `json:"tokenId"`
	TokenName       string      `json:"tokenName"`
	TokenSymbol     string      `json:"tokenSymbol"`
	TokenDecimals   int32       `json:"tokenDecimals"`
	UnitValue       float64     `json:"unitValue"`
	HistoricalUSD   *float64    `json:"historicalUSD,omitempty"`
	Type            string      `json:"type"`
}

// StoredEntity is an entity as the services' attribution read models keep it. Their own entity
// types have these fields in this order, so a *store.Entity converts to a *StoredEntity.
type StoredEntity struct {
	ID, Name, Type, Note, Service, Website, Twitter, LinkedIn string
}

// EntityOf renders a stored entity (nil for nil). An entity of a service has "service": true,
// one of no service "service": null.
func EntityOf(e *StoredEntity) *Entity {
	if e == nil {
		return nil
	}
	out := &Entity{ID: e.ID, Name: e.Name, Note: e.Note, Type: e.Type, Website: e.Website, Twitter: e.Twitter, LinkedIn: e.LinkedIn}
	out.Service = e.Service != ""
	return out
}

// UserEntity renders a caller's own entity.
func UserEntity(id, name, note string) *Entity {
	return &Entity{ID: id, Name: name, Note: note, Type: "user"}
}

// Attribution is what the attribution read model knows of one address.
type Attribution struct {
	Entity           *Entity
	Label            string
	Predicted        *Entity
	DepositServiceID string
	IsContract       bool
	Version          int64 // the read model's version, for readers that keep the newest
}

// Info renders the AddressInfo of addr on chain (of chainType) from what the read model knows of
// it (at, nil when nothing); contract is whether the caller knows it for a contract. The
// caller's own labels are added with SetUser.
func Info(chain, chainType, addr string, contract bool, at *Attribution) AddressInfo {
	ai := AddressInfo{Address: addr, Chain: chain, Contract: contract}
	if at != nil {
		ai.ServiceEntity = at.Entity
		if at.Label != "" {
			ai.ServiceLabel = &AddressLabel{Name: at.Label, Address: addr, ChainType: chainType}
		}
		ai.PredictedEntity = at.Predicted
		ai.DepositServiceID = at.DepositServiceID
		ai.Contract = ai.Contract || at.IsContract
	}
	return ai
}

// SetUser adds what the caller's own labels say of the address: its label (when hasLabel) and
// the caller's entity holding it (nil when none).
func (ai *AddressInfo) SetUser(chainType, label string, hasLabel bool, e *Entity) {
	if hasLabel {
		ai.UserLabel = &AddressLabel{Name: label, Address: ai.Address, ChainType: chainType}
	}
	if e != nil {
		ai.UserEntity = e
		ai.IsUserAddress = true
	}
}

// ChainType is the chain type of chain ("" when unknown).
func ChainType(chain string) string {
	if c, ok := chains.Lookup(chain); ok {
		return string(c.Type)
	}
	return ""
}

// Timestamp renders a time as the API does: RFC 3339, UTC.
func Timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// TransferType names a transfer's type: typ is the chain.transfers.v1 TransferType (1
// external, 2 internal, 3 token); an unset one is a token transfer when it has a token address.
func TransferType(typ int32, tokenAddress string) string {
	switch typ {
	case 1:
		return "external"
	case 2:
		return "internal"
	case 3:
		return "token"
	}
	if tokenAddress != "" {
		return "token"
	}
	return "external"
}

// UnitValue is amount (in the token's smallest unit) in whole units; nil is 0, and an amount too
// large for a float64 is its largest value.
func UnitValue(a *big.Int, decimals int32) float64 {
	if a == nil {
		return 0
	}
	s := new(big.Int).Abs(a).String()
	d := max(int(decimals), 0)
	if len(s) <= d {
		s = strings.Repeat("0", d-len(s)+1) + s
	}
	f, err := strconv.ParseFloat(s[:len(s)-d]+"."+s[len(s)-d:], 64)
	if err != nil || math.IsInf(f, 0) {
		f = math.MaxFloat64
	}
	if a.Sign() < 0 {
		f = -f
	}
	return f
}

// NullString is a required field the contract lets be null (public-api-shapes.json: required,
// nullable): a Transfer's tokenId, a token identifier's pricingID. Empty is unknown, written as
// null rather than as an empty id a client could take for one.
type NullString string

// MarshalJSON writes null for "".
func (s NullString) MarshalJSON() ([]byte, error) {
	if s == "" {
		return []byte("null"), nil
	}
	return json.Marshal(string(s))
}

// Service is Entity.service: written true when the entity belongs to a named service, else null.
// It reads what that field held in every form a stored or in-flight entity may carry: the
// boolean and null of now, and the service's id string rendered before the field became a
// boolean (token-analytics keeps rendered entities as JSON, and a rolling upgrade has old
// writers next to new readers), a non-empty id reading as true, an empty one as null.
type Service bool

// MarshalJSON writes true, or null for an entity of no service.
func (s Service) MarshalJSON() ([]byte, error) {
	if s {
		return []byte("true"), nil
	}
	return []byte("null"), nil
}

// UnmarshalJSON reads a boolean, null or a service id string.
func (s *Service) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch v := v.(type) {
	case nil:
		*s = false
	case bool:
		*s = Service(v)
	case string:
		*s = v != ""
	case float64:
		return &json.UnmarshalTypeError{Value: "number", Type: reflect.TypeOf(*s)}
	default:
		return &json.UnmarshalTypeError{Value: "object or array", Type: reflect.TypeOf(*s)}
	}
	return nil
}
