// Package routes is the edge's route table: every public path of the API, the service that
// owns it, its rate class and its credit weight. The edge routes, limits and meters from this
// table alone; the OpenAPI document must describe exactly these routes (a test checks).
package routes

import (
	intelligence "github.com/chainintel/chainintel/services/intelligence/client"
	transfers "github.com/chainintel/chainintel/services/transfers/client"
)

// Service names a deployable that answers routes.
type Service string

// Services behind the edge.
const (
	Edge           Service = "edge"
	Transfers      Service = "transfers"
	Intelligence   Service = "intelligence"
	UserLabels     Service = "user-labels"
	Balances       Service = "balances"
	TokenAnalytics Service = "token-analytics"
	StreamFanout   Service = "stream-fanout"
)

// Upstreams lists the services the edge proxies to.
var Upstreams = []Service{Transfers, Intelligence, UserLabels, Balances, TokenAnalytics, StreamFanout}

// Class is a rate class.
type Class string

// Rate classes (API.md "Rate classes and credits").
const (
	Standard Class = "standard" // per key, tier rate with burst
	Heavy    Class = "heavy"    // per key, one budget over every heavy route, 1 request/s
	Public   Class = "public"   // no key; per client IP
)

// Unit is what a route's credit weight counts.
type Unit string

// Credit units.
const (
	PerCall Unit = "call"
	PerRow  Unit = "row" // weight times the rows the service reports
)

// Route is one public route.
type Route struct {
	Method  string
	Pattern string // net/http ServeMux pattern path, e.g. "/tx/{hash}"
	Service Service
	Class   Class
	Credits int64
	Unit    Unit
	// KeyOptional routes accept calls without a key (shareable entity summaries); a key, when
	// given, is still verified.
	KeyOptional bool
	// APITier routes need a tier with the API flag (403 otherwise).
	APITier bool
	// WebSocket routes are upgraded and proxied as a stream.
	WebSocket bool
	// Bound says how the edge knows, before forwarding, the most units a per-row route can
	// charge (the credits it reserves); a call is never charged more than its bound.
	Bound Bound
}

// Bound is how the most units of a per-row call are read from its request.
type Bound struct {
	// Param is the query parameter giving the rows asked for ("limit"), Default when absent;
	// Max is the most the service accepts (also the most units a body can name).
	Param        string
	Default, Max int64
	// List names the JSON body's list whose distinct strings are the units (a batch is
	// charged per distinct address or entity id, the rows it answers): "addresses",
	// "entity_ids".
	List string
}

// Key is "METHOD pattern", the route's identity in metering.
func (r Route) Key() string { return r.Method + " " + r.Pattern }

func get(p string, s Service, c Class, credits int64) Route {
	return Route{Method: "GET", Pattern: p, Service: s, Class: c, Credits: credits, Unit: PerCall}
}

func perRow(r Route) Route { r.Unit = PerRow; return r }

// perLimit is a per-row route of transfers whose rows are at most its limit parameter (the
// bounds transfers parses it with).
func perLimit(r Route) Route {
	r = perRow(r)
	r.Bound = Bound{Param: "limit", Default: transfers.DefaultLimit, Max: transfers.MaxLimit}
	return r
}

// perAddress is a batch route of intelligence charged per distinct address of its body (at
// most the addresses intelligence takes in a call).
func perAddress(r Route) Route {
	r = perRow(r)
	r.Bound = Bound{List: "addresses", Max: intelligence.MaxBatch}
	return r
}

// perListed is a risk batch of intelligence charged per distinct string of its body's list
// (at most most of them, the most the route takes).
func perListed(list string, most int64, r Route) Route {
	r = perRow(r)
	r.Bound = Bound{List: list, Max: most}
	return r
}
func keyOptional(r Route) Route      { r.KeyOptional = true; return r }
func apiTier(r Route) Route          { r.APITier = true; return r }
func method(m string, r Route) Route { r.Method = m; return r }

// Table is every public route.
var Table = []Route{
	// Edge itself.
	get("/health", Edge, Public, 0),
	get("/openapi.json", Edge, Public, 0),
	get("/chains", Edge, Standard, 0),
	get("/analytics/credit-periods", Edge, Standard, 0),
	get("/analytics/endpoint-calls", Edge, Standard, 0),
	get("/subscription/intel-usage", Edge, Standard, 0),

	// Balances, history, portfolio, token balances and holders.
	get("/balances/address/{address}", Balances, Standard, 1),
	get("/balances/entity/{entity}", Balances, Standard, 5),
	get("/balances/solana/subaccounts/address/{addresses}", Balances, Standard, 1),
	get("/balances/solana/subaccounts/entity/{entities}", Balances, Standard, 5),
	get("/intelligence/entity_balance_changes", Balances, Standard, 5), // ranked from balances' per-entity totals
	get("/history/address/{address}", Balances, Standard, 1),
	get("/history/entity/{entity}", Balances, Standard, 2),
	get("/portfolio/address/{address}", Balances, Standard, 1),
	get("/portfolio/entity/{entity}", Balances, Standard, 2),
	get("/portfolio/timeSeries/address/{address}", Balances, Standard, 2),
	get("/portfolio/timeSeries/entity/{entity}", Balances, Standard, 3),
	get("/token/balance/{id}", Balances, Standard, 1),
	get("/token/balance/{chain}/{address}", Balances, Standard, 1),
	get("/token/holders/{pricingId}", Balances, Standard, 30),
	get("/token/holders/{chain}/{address}", Balances, Standard, 30),

	// Transfers, swaps, transactions, counterparties, flow.
	perLimit(get("/transfers", Transfers, Heavy, 2)),
	apiTier(get("/transfers/histogram", Transfers, Heavy, 4)),
	// Public (per client IP, free) without a key; with one it is the key's call, limited and
	// charged as API.md prices it, like a shareable entity summary.
	keyOptional(get("/transfers/histogram/simple", Transfers, Standard, 2)),
	perLimit(get("/swaps", Transfers, Heavy, 2)),
	get("/tx/{hash}", Transfers, Standard, 2),
	get("/transfers/tx/{hash}", Transfers, Standard, 2),
	perLimit(get("/transfers/unenriched", Transfers, Heavy, 1)),
	get("/volume/address/{address}", Transfers, Heavy, 3),
	get("/volume/entity/{entity}", Transfers, Heavy, 3),
	get("/counterparties/address/{address}", Transfers, Heavy, 50),
	get("/counterparties/entity/{entity}", Transfers, Heavy, 50),
	get("/flow/address/{address}", Transfers, Standard, 2),
	get("/flow/entity/{entity}", Transfers, Standard, 3),

	// Intelligence and tags.
	get("/intelligence/address/{address}", Intelligence, Standard, 1),
	get("/intelligence/address/{address}/all", Intelligence, Standard, 2),
	get("/intelligence/address_enriched/{address}", Intelligence, Standard, 2),
	get("/intelligence/address_enriched/{address}/all", Intelligence, Standard, 4),
	get("/intelligence/address_with_extra_enrichment/{address}", Intelligence, Standard, 2),
	get("/intelligence/address_with_extra_enrichment/{address}/all", Intelligence, Standard, 4),
	method("POST", perAddress(get("/intelligence/address/batch", Intelligence, Standard, 1))),
	get("/intelligence/entity/{entity}", Intelligence, Standard, 1),
	keyOptional(get("/intelligence/entity/{entity}/summary", Intelligence, Standard, 1)),
	get("/intelligence/entity_predictions/{entity}", Intelligence, Standard, 1),
	get("/intelligence/contract/{chain}/{address}", Intelligence, Standard, 1),
	get("/intelligence/token/{id}", Intelligence, Standard, 1),
	get("/intelligence/token/{chain}/{address}", Intelligence, Standard, 1),
	// Search: one credit per call, like the other single lookups (API.md names no price).
	get("/intelligence/search", Intelligence, Standard, 1),
	// Metadata costs nothing, like /chains; batches cost per address what the single lookup
	// costs per call; a cluster summary like an entity summary (API.md names none of these).
	get("/intelligence/entity_types", Intelligence, Standard, 0),
	method("POST", perAddress(get("/intelligence/address/batch/all", Intelligence, Standard, 2))),
	method("POST", perAddress(get("/intelligence/address_enriched/batch", Intelligence, Standard, 2))),
	method("POST", perAddress(get("/intelligence/address_enriched/batch/all", Intelligence, Standard, 4))),
	get("/cluster/{id}/summary", Intelligence, Standard, 1),
	// Change feeds: one credit a page, like a list lookup.
	get("/intelligence/entities/updates", Intelligence, Standard, 1),
	get("/intelligence/addresses/updates", Intelligence, Standard, 1),
	get("/intelligence/tags/updates", Intelligence, Standard, 1),
	get("/intelligence/address_tags/updates", Intelligence, Standard, 1),
	// Risk scores (docs/intelligence.md "Risk scores"), priced as the address and entity
	// lookups: 1 per address or entity, a batch 1 per distinct address or entity id.
	get("/risk/address/{address}", Intelligence, Standard, 1),
	get("/risk/address/{address}/paths", Intelligence, Standard, 1),
	method("POST", perListed("addresses", intelligence.RiskMaxBatch, get("/risk/address/batch", Intelligence, Standard, 1))),
	get("/risk/entity/{entity_id}", Intelligence, Standard, 1),
	method("POST", perListed("entity_ids", intelligence.RiskMaxEntityBatch, get("/risk/entity/batch", Intelligence, Standard, 1))),
	get("/tag/{id}/params", Intelligence, Standard, 5),
	get("/tag/{id}/summary", Intelligence, Standard, 1),

	// Tokens and market data.
	get("/token/trending", TokenAnalytics, Standard, 1),
	get("/token/trending/{id}", TokenAnalytics, Standard, 1),
	// A token's market data, price history, price change and addresses: single lookups of the
	// registry and prices, priced like trending.
	get("/token/market/{id}", TokenAnalytics, Standard, 1),
	get("/token/price/history/{id}", TokenAnalytics, Standard, 1),
	get("/token/price/history/{chain}/{address}", TokenAnalytics, Standard, 1),
	get("/token/price_change/{id}", TokenAnalytics, Standard, 1),
	get("/token/addresses/{id}", TokenAnalytics, Standard, 1),
	get("/token/top", TokenAnalytics, Standard, 10),
	get("/token/top_flow/{id}", TokenAnalytics, Heavy, 10),
	get("/token/top_flow/{chain}/{address}", TokenAnalytics, Heavy, 10),
	get("/token/volume/{id}", TokenAnalytics, Heavy, 3),
	get("/token/volume/{chain}/{address}", TokenAnalytics, Heavy, 3),
	get("/marketdata/altcoin_index", TokenAnalytics, Standard, 1),
	get("/native/circulating", TokenAnalytics, Standard, 0),
	// The operator exchange's listed tokens: its configured lists and one registry read, priced
	// like trending.
	get("/token/service_exchange_tokens", TokenAnalytics, Standard, 1),
	get("/networks/history/{chain}", TokenAnalytics, Standard, 1),
	get("/networks/status", TokenAnalytics, Standard, 1),

	// User labels, entities and alerts.
	get("/user/labels", UserLabels, Standard, 1),
	method("POST", get("/user/labels", UserLabels, Standard, 1)),
	method("DELETE", get("/user/labels", UserLabels, Standard, 1)),
	method("PUT", get("/user/labels/{label}", UserLabels, Standard, 1)),
	method("DELETE", get("/user/labels/{label}", UserLabels, Standard, 1)),
	get("/user/entities", UserLabels, Standard, 1),
	method("POST", get("/user/entities", UserLabels, Standard, 1)),
	get("/user/entities/{id}", UserLabels, Standard, 1),
	method("PUT", get("/user/entities/{id}", UserLabels, Standard, 1)),
	method("DELETE", get("/user/entities/{id}", UserLabels, Standard, 1)),
	method("PUT", get("/user/entities/only_add/{id}", UserLabels, Standard, 1)),
	// Alerts, and their delivery methods (an extension of the mirrored API).
	get("/user/alerts", UserLabels, Standard, 1),
	method("POST", get("/user/alerts", UserLabels, Standard, 1)),
	get("/user/alerts/{id}", UserLabels, Standard, 1),
	method("PUT", get("/user/alerts/{id}", UserLabels, Standard, 1)),
	method("DELETE", get("/user/alerts/{id}", UserLabels, Standard, 1)),
	get("/user/alert_methods", UserLabels, Standard, 1),
	method("POST", get("/user/alert_methods", UserLabels, Standard, 1)),
	method("DELETE", get("/user/alert_methods/{id}", UserLabels, Standard, 1)),

	// Transfer stream: 1 credit per delivered transfer, metered by stream-fanout itself.
	{Method: "GET", Pattern: "/ws/transfers", Service: StreamFanout, Class: Standard, Credits: 1, Unit: PerRow, WebSocket: true},
	// Stream sessions made over REST, and v2 streams (one filter fixed at creation).
	method("POST", get("/ws/sessions", StreamFanout, Standard, 0)),
	get("/ws/sessions", StreamFanout, Standard, 0),
	get("/ws/sessions/{id}", StreamFanout, Standard, 0),
	method("DELETE", get("/ws/sessions/{id}", StreamFanout, Standard, 0)),
	get("/ws/session-info", StreamFanout, Standard, 0),
	get("/ws/active_connections", StreamFanout, Standard, 0),
	method("POST", get("/ws/v2/streams", StreamFanout, Standard, 0)),
	get("/ws/v2/streams", StreamFanout, Standard, 0),
	method("DELETE", get("/ws/v2/streams/{id}", StreamFanout, Standard, 0)),
	{Method: "GET", Pattern: "/ws/v2/transfers", Service: StreamFanout, Class: Standard, Credits: 1, Unit: PerRow, WebSocket: true},
}
