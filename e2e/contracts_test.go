package e2e

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// GET /intelligence/contract/{chain}/{address} through the edge for a simulated token contract:
// its code, the ERC-20 selectors of its dispatcher, no proxy, its deployer and deployment (the
// internal deployer is the deployer: its transaction created it); the token's address is a
// contract in /intelligence/address and in the `to` of a transaction calling it in /tx.
func TestContractIntelligenceThroughEdge(t *testing.T) {
	p := Get(t)
	var tr struct {
		Transfers []struct {
			TransactionHash string `json:"transactionHash"`
			TokenAddress    string `json:"tokenAddress"`
		} `json:"transfers"`
	}
	var token string
	deadline := time.Now().Add(60 * time.Second)
	for token == "" {
		r := p.Get(t, "/transfers?chains=ethereum&limit=50")
		if r.Status == http.StatusOK {
			r.JSON(t, &tr)
		}
		for _, x := range tr.Transfers {
			if x.TokenAddress != "" {
				token = x.TokenAddress
				break
			}
		}
		if token == "" {
			if time.Now().After(deadline) {
				t.Fatalf("no token transfer on ethereum: %d %s", r.Status, r.Body)
			}
			time.Sleep(time.Second)
		}
	}
	type info struct {
		Address  string `json:"address"`
		Contract *bool  `json:"contract"`
	}
	var c struct {
		Address           string   `json:"address"`
		Bytecode          string   `json:"bytecode"`
		FunctionSighashes []string `json:"functionSighashes"`
		IsProxy           *bool    `json:"isProxy"`
		ProxyAddress      *string  `json:"proxyAddress"`
		Deployer          *info    `json:"deployer"`
		InternalDeployer  *info    `json:"internalDeployer"`
		TransactionHash   string   `json:"transactionHash"`
		BlockTimestamp    string   `json:"blockTimestamp"`
	}
	var r Response
	// The contract's indexing gets its own minute, whatever finding a token transfer took.
	deadline = time.Now().Add(60 * time.Second)
	for {
		r = p.Get(t, "/intelligence/contract/ethereum/"+token)
		if r.Status == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	if r.Status != http.StatusOK {
		t.Fatalf("/intelligence/contract/ethereum/%s: %d %s", token, r.Status, r.Body)
	}
	r.JSON(t, &c)
	if c.Address != token || !strings.HasPrefix(c.Bytecode, "0x") || len(c.Bytecode) < 10 || !slices.Contains(c.FunctionSighashes, "0xa9059cbb") ||
		c.IsProxy == nil || *c.IsProxy || c.ProxyAddress != nil || c.Deployer == nil || len(c.Deployer.Address) != 42 ||
		c.InternalDeployer == nil || c.InternalDeployer.Address != c.Deployer.Address || len(c.TransactionHash) != 66 || c.BlockTimestamp == "" {
		t.Fatalf("token contract %s: %s", token, r.Body)
	}
	var a info
	r = p.Get(t, "/intelligence/address/"+token+"?chain=ethereum")
	r.JSON(t, &a)
	if r.Status != http.StatusOK || a.Contract == nil || !*a.Contract {
		t.Errorf("/intelligence/address/%s: %d %s, want contract true", token, r.Status, r.Body)
	}
	// /tx reads the attribution transfers keeps: a transaction calling a token shows the token as
	// a contract once intelligence published its flag.
	type txInfo map[string]struct {
		To *info `json:"to"`
	}
	deadline = time.Now().Add(60 * time.Second) // the flag's way to transfers gets its own minute
	for _, x := range tr.Transfers {
		if x.TokenAddress == "" {
			continue
		}
		h := strings.SplitN(x.TransactionHash, "_", 2)[0]
		for {
			var tx txInfo
			r = p.Get(t, "/tx/"+h)
			if r.Status == http.StatusOK {
				r.JSON(t, &tx)
			}
			to := tx["ethereum"].To
			if r.Status == http.StatusOK && (to == nil || to.Address != x.TokenAddress) {
				break // not a call of the token
			}
			if to != nil && to.Contract != nil && *to.Contract {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("/tx/%s: the token %s is not a contract: %s", h, x.TokenAddress, r.Body)
			}
			time.Sleep(time.Second)
		}
	}
	// The simulator's token transfers are calls of their token, so one of them must be sampled.
	t.Fatalf("no transaction among the %d sampled transfers calls its token: /tx not checked", len(tr.Transfers))
}
