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

// admin runs one administration command and prints its result as JSON on out.
func admin(ctx context.Context, cfg edge.Config, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		_, err := fmt.Fprint(out, adminUsage)
		return err
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("edge admin "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var name, email, role, org, orgName, user, tier, key string
	fs.StringVar(&name, "name", "", "name")
	fs.StringVar(&email, "email", "", "user email")
	fs.StringVar(&role, "role", "", "org_admin, org_member or individual")
	fs.StringVar(&org, "org", "", "org id")
	fs.StringVar(&orgName, "org-name", "", "name of a new org")
	fs.StringVar(&user, "user", "", "user id")
	fs.StringVar(&tier, "tier", "", "tier name")
	fs.StringVar(&key, "key", "", "key id")
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

	var result any
	switch cmd {
	case "create-org":
		if name == "" {
			return errors.New("create-org needs --name")
		}
		result, err = a.CreateOrg(ctx, name)
	case "create-user":
		if email == "" || role == "" {
			return errors.New("create-user needs --email and --role")
		}
		result, err = a.CreateUser(ctx, org, email, role)
	case "create-key":
		if tier == "" {
			return errors.New("create-key needs --tier")
		}
		var raw string
		var k edge.KeyInfo
		raw, k, err = a.CreateKey(ctx, edge.KeySpec{OrgID: org, OrgName: orgName, UserID: user, Email: email, Role: role, Tier: tier, Name: name})
		result = struct {
			Key string `json:"key"`
			edge.KeyInfo
		}{raw, k}
	case "set-tier":
		if tier == "" || (key == "") == (org == "") {
			return errors.New("set-tier needs --tier and one of --key or --org")
		}
		var n int
		n, err = a.SetTier(ctx, key, org, tier)
		result = map[string]any{"tier": tier, "keysChanged": n}
	case "revoke":
		if key == "" {
			return errors.New("revoke needs --key")
		}
		err = a.Revoke(ctx, key, "")
		result = map[string]any{"revoked": key}
	case "list":
		switch what {
		case "orgs":
			result, err = a.ListOrgs(ctx)
		case "users":
			result, err = a.ListUsers(ctx, org)
		case "keys":
			result, err = a.ListKeys(ctx, org, user)
		default:
			return fmt.Errorf("list what? want orgs, users or keys\n\n%s", adminUsage)
		}
	case "tiers":
		result = a.Tiers()
	default:
		return fmt.Errorf("unknown admin command %q\n\n%s", cmd, adminUsage)
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(result)
}
