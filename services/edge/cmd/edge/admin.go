package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/chainintel/chainintel/services/edge"
)

const adminUsage = `edge admin <command> [flags]   (prints JSON)

  create-org  --name NAME
  create-user --email EMAIL --role org_admin|org_member|individual [--org ORG_ID]
  create-key  --tier TIER [--name NAME] (--user USER_ID | [--org ORG_ID | --org-name NAME] [--email EMAIL] [--role ROLE])
              prints the key once; it is stored only as a hash
  set-tier    --tier TIER (--key KEY_ID | --org ORG_ID)
  revoke      --key KEY_ID
  list        orgs | users [--org ORG_ID] | keys [--org ORG_ID] [--user USER_ID]
  tiers       the tier table in force (EDGE_TIERS_FILE or the built-in one)
`

// adminFlags are the flags every admin command may take.
type adminFlags struct {
	name, email, role, org, orgName, user, tier, key string
}

// admin runs one administration command and prints its result as JSON on out.
func admin(ctx context.Context, cfg edge.Config, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		_, err := fmt.Fprint(out, adminUsage)
		return err
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("edge admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var f adminFlags
	fs.StringVar(&f.name, "name", "", "name")
	fs.StringVar(&f.email, "email", "", "user email")
	fs.StringVar(&f.role, "role", "", "org_admin, org_member or individual")
	fs.StringVar(&f.org, "org", "", "org id")
	fs.StringVar(&f.orgName, "org-name", "", "name of a new org")
	fs.StringVar(&f.user, "user", "", "user id")
	fs.StringVar(&f.tier, "tier", "", "tier name")
	fs.StringVar(&f.key, "key", "", "key id")
	what := ""
	if cmd == "list" && len(args) > 0 {
		what, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%v\n\n%s", err, adminUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %v\n\n%s", fs.Args(), adminUsage)
	}
	a, err := edge.OpenAdmin(ctx, cfg)
	if err != nil {
		return err
	}
	defer a.Close()
	result, err := adminRun(ctx, a, cmd, what, f)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(result)
}

// adminRun runs command cmd (list's object is what) and returns what it prints.
func adminRun(ctx context.Context, a *edge.Admin, cmd, what string, f adminFlags) (any, error) {
	switch cmd {
	case "create-org":
		if f.name == "" {
			return nil, errors.New("create-org needs --name")
		}
		return a.CreateOrg(ctx, f.name)
	case "create-user":
		if f.email == "" || f.role == "" {
			return nil, errors.New("create-user needs --email and --role")
		}
		return a.CreateUser(ctx, f.org, f.email, f.role)
	case "create-key":
		if f.tier == "" {
			return nil, errors.New("create-key needs --tier")
		}
		raw, k, err := a.CreateKey(ctx, edge.KeySpec{OrgID: f.org, OrgName: f.orgName, UserID: f.user, Email: f.email, Role: f.role, Tier: f.tier, Name: f.name})
		return struct {
			Key string `json:"key"`
			edge.KeyInfo
		}{raw, k}, err
	case "set-tier":
		if f.tier == "" || (f.key == "") == (f.org == "") {
			return nil, errors.New("set-tier needs --tier and one of --key or --org")
		}
		n, err := a.SetTier(ctx, f.key, f.org, f.tier)
		return map[string]any{"tier": f.tier, "keysChanged": n}, err
	case "revoke":
		if f.key == "" {
			return nil, errors.New("revoke needs --key")
		}
		return map[string]any{"revoked": f.key}, a.Revoke(ctx, f.key, "")
	case "list":
		return adminList(ctx, a, what, f)
	case "tiers":
		return a.Tiers(), nil
	}
	return nil, fmt.Errorf("unknown admin command %q\n\n%s", cmd, adminUsage)
}

// adminList lists orgs, users or keys.
func adminList(ctx context.Context, a *edge.Admin, what string, f adminFlags) (any, error) {
	switch what {
	case "orgs":
		return a.ListOrgs(ctx)
	case "users":
		return a.ListUsers(ctx, f.org)
	case "keys":
		return a.ListKeys(ctx, f.org, f.user)
	}
	return nil, fmt.Errorf("list what? want orgs, users or keys\n\n%s", adminUsage)
}
